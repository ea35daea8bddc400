"""What every subcommand shares: exit codes, one-line messages, path and filter arguments.

Every message line goes through `visible` (run names and paths come from the file system: a
directory named ``\x1b]0;pwned\x07`` must not retitle the terminal, nor a ``\n`` break a line).
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, NoReturn

from rltop.view.text.safe import visible

if TYPE_CHECKING:
    from rltop.ingest.follow.loader import LoadResult

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_UNREADABLE = 0, 1, 2, 3
"""3: a snapshot whose input could not all be read (a garbage or unreadable event file): the
verdict is incomplete, and a cron check must not pass on it."""
MIN_POLL = 0.05  # seconds: a shorter --poll would busy-loop (1e-300 is accepted and raised to this)
MAX_POLL = 3600.0


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr and exit code 2 (no usage block)."""

    def error(self, message: str) -> NoReturn:
        """Print ``rltop: error: MESSAGE (see PROG --help)`` and exit 2."""
        error_line(f"{' '.join(message.split())} (see {self.prog} --help)")
        sys.exit(EXIT_USAGE)


def poll_interval(text: str) -> float:
    """``--poll SECONDS``: a number in (0, 3600]; below 0.05 s it is raised to 0.05 s."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a number of seconds (write PATH before --poll, e.g. tail ./logs --poll 2)"
        ) from None
    if not (0 < value <= MAX_POLL) or math.isnan(value):
        raise argparse.ArgumentTypeError(f"{text}: the interval must be > 0 and <= {MAX_POLL:g} seconds")
    return max(value, MIN_POLL)


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""


def default_paths() -> list[str]:
    """What is read when no PATH is given: the store ``MLFLOW_TRACKING_URI`` names when it is one rltop
    reads (a tracking server, an ``sqlite:///`` file, an ``mlruns`` folder), else the current folder."""
    from rltop.ingest.sources.mlflow.rest import tracking_uri_path

    found = tracking_uri_path(os.environ.get("MLFLOW_TRACKING_URI", ""))
    return [found] if found else ["."]


def add_paths(parser: argparse.ArgumentParser, required: bool = True) -> None:
    """The PATH... positional: log directories, run directories, source files or URLs."""
    parser.add_argument(
        "paths",
        nargs="+" if required else "*",
        metavar="PATH",
        help="log directory (a TRL output_dir), run directory, event file or trainer_state.json, or a URL "
        "such as s3://bucket/prefix (any fsspec URL) or an MLflow tracking server (http://host:5000)"
        + ("" if required else " (default: $MLFLOW_TRACKING_URI when set, else .)"),
    )


def add_format(parser: argparse._ActionsContainer, choices: tuple[str, ...], help: str | None = None) -> None:
    """``-f/--format``, the same flag in every command; the first choice is the default."""
    parser.add_argument(
        "-f", "--format", choices=choices, default=choices[0],
        help=help or f"output format: {', '.join(choices)} (default: {choices[0]})",
    )  # fmt: skip


def add_filters(parser: argparse.ArgumentParser) -> None:
    """``--tags`` and ``--runs`` regular-expression filters."""
    parser.add_argument("--tags", metavar="REGEX", help="only tags matching this regular expression")
    parser.add_argument("--runs", metavar="REGEX", help="only runs whose name matches this regex")


DEFAULT_POLL = 1.0


def add_poll(parser: argparse.ArgumentParser) -> None:
    """``--poll [SECONDS]``: polling instead of file events (``rltop tail`` and ``rltop watch``)."""
    parser.add_argument(
        "--poll",
        nargs="?",
        const=DEFAULT_POLL,
        type=poll_interval,
        metavar="SECONDS",
        help="poll the files every SECONDS (default 1, at least 0.05) instead of waiting for file events: "
        "needed on NFS, Lustre and other network file systems (chosen automatically when detected); "
        "URLs (s3://...) are always polled, every 10 s unless --poll says otherwise",
    )


def add_rules(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """``--rules FILE``: health thresholds on top of the defaults."""
    parser.add_argument(
        "--rules", metavar="FILE",
        help="TOML file of health thresholds (on top of the defaults and ~/.config/rltop/rules.toml)",
    )  # fmt: skip


def install_stop_signals(handler: Callable[[int, object], None]) -> dict:
    """Route SIGINT and SIGTERM to ``handler``; returns the previous handlers (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}


def add_raw(parser: argparse._ActionsContainer, what: str) -> None:
    """``--raw``: exact names in data output (control characters included)."""
    parser.add_argument(
        "--raw", action="store_true",
        help=f"{what}: write run and tag names exactly, control characters included (default: escaped "
        "as \\x1b, so that a name cannot drive the terminal that shows the output)",
    )  # fmt: skip


def warn(message: str) -> None:
    """One warning line on stderr (escaped)."""
    print(f"rltop: warning: {visible(message)}", file=sys.stderr)


def note(message: str) -> None:
    """One informational line on stderr (not a warning: waiting, polling, a new run; escaped)."""
    print(f"rltop: {visible(message)}", file=sys.stderr, flush=True)


def error_line(message: str) -> None:
    """One error line on stderr (escaped)."""
    print(f"rltop: error: {visible(message)}", file=sys.stderr)


def load_or_fail(paths: list[str], tags: str | None, runs: str | None) -> LoadResult:
    """Load every run under ``paths``; UsageError when there is no event file at all.

    Nor may ``--runs``/``--tags`` keep nothing: a filter that matches nothing is a typo to report
    (exit 2), not an empty all-clear for a cron job (exit 0). `rltop export` and `rltop snapshot`
    agree on this; `rltop tail` waits instead (a matching run may still start).
    """
    from rltop.ingest.follow.loader import load

    result = load(paths, tags=tags, runs=runs)
    for problem in result.problems:
        warn(problem)
    if not result.discovery.runs:
        where = ", ".join(result.discovery.roots)
        raise UsageError(f"no event files (events.out.tfevents.*) found under {where}")
    store = result.store
    if runs is not None and not store.runs:
        found = ", ".join(source.name for source in result.discovery.runs[:5])
        more = ", ..." if len(result.discovery.runs) > 5 else ""
        raise UsageError(f"no run matches --runs {runs!r} (runs found: {found}{more})")
    if tags is not None and not any(run.series for run in store.runs.values()):
        raise UsageError(f"no scalar tag matches --tags {tags!r}")
    return result
