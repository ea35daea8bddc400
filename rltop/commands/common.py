"""What every subcommand shares: exit codes, one-line messages, path and filter arguments."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Callable

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""


def add_paths(parser: argparse.ArgumentParser, required: bool = True) -> None:
    """The PATH... positional: log directories, run directories or event files."""
    parser.add_argument(
        "paths",
        nargs="+" if required else "*",
        metavar="PATH",
        help="log directory, run directory or event file" + ("" if required else " (default: .)"),
    )


def add_filters(parser: argparse.ArgumentParser) -> None:
    """``--tags`` and ``--runs`` regular-expression filters."""
    parser.add_argument("--tags", metavar="REGEX", help="only tags matching this regular expression")
    parser.add_argument("--runs", metavar="REGEX", help="only runs whose name matches this regex")


DEFAULT_POLL = 1.0


def poll_interval(text: str) -> float:
    """``--poll`` value: seconds, > 0 and <= 3600 (argparse type)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a number of seconds (write PATH before --poll, e.g. ./logs --poll 2)"
        ) from None
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError(f"{text}: the interval must be > 0 and <= 3600 seconds")
    return value


def add_poll(parser: argparse.ArgumentParser) -> None:
    """``--poll [SECONDS]``: polling instead of file events (``rltop tail`` and ``rltop watch``)."""
    parser.add_argument(
        "--poll",
        nargs="?",
        const=DEFAULT_POLL,
        type=poll_interval,
        metavar="SECONDS",
        help="poll the files every SECONDS (default 1) instead of waiting for file events: needed on "
        "NFS, Lustre and other network file systems (chosen automatically when detected)",
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


def warn(message: str) -> None:
    """One warning line on stderr."""
    print(f"rltop: warning: {message}", file=sys.stderr)


def note(message: str) -> None:
    """One informational line on stderr (not a warning: waiting, polling, a new run)."""
    print(f"rltop: {message}", file=sys.stderr, flush=True)


def error_line(message: str) -> None:
    """One error line on stderr."""
    print(f"rltop: error: {message}", file=sys.stderr)


def load_or_fail(paths: list[str], tags: str | None, runs: str | None):
    """Load every run under ``paths``; UsageError when there is no event file at all."""
    from rltop.ingest.loader import load

    result = load(paths, tags=tags, runs=runs)
    for problem in result.problems:
        warn(problem)
    if not result.discovery.runs:
        where = ", ".join(result.discovery.roots)
        raise UsageError(f"no event files (events.out.tfevents.*) found under {where}")
    return result
