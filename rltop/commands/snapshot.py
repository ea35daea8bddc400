"""``rltop snapshot PATH...``: the dashboard's verdict printed once, with a health exit code.

Also what ``rltop --once PATH...`` runs: the ``app`` command calls `run_snapshot` with its own
arguments (any option it lacks takes the default of `SnapshotOptions`).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass

from rltop.commands.common import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_UNREADABLE,
    UsageError,
    add_filters,
    add_format,
    add_paths,
    add_raw,
    add_rules,
    default_paths,
    load_or_fail,
    note,
)
from rltop.report.formats import DEFAULT_WIDTH, FAIL_ON_CHOICES, MAX_WIDTH, MIN_WIDTH, SNAPSHOT_FORMATS

NAME = "snapshot"
COLOR_CHOICES = ("auto", "always", "never")
_clock = time.time  # the snapshot's "now" (staleness, the stall rule); tests freeze it

DESCRIPTION = """\
Print the health of every run under PATH once, in the same picture as the dashboard: per run a
header (trainer, step, last point, staleness), the findings with advice, and the metrics grouped
like TRL's docs, with sparklines, last/min/max, trend and level.

formats:
  text      coloured on a terminal, plain when piped, redirected or NO_COLOR is set
  markdown  GitHub-flavoured tables, to paste into issues and pull requests
  json      stable schema (version field; see rltop/report/schema.json)
  csv       one row per run x tag
  svg/html  the text view as an image / web page (Rich console export)
"""

EPILOG = """\
exit codes:
  0  healthy: no run at or above --fail-on (whatever the findings with --fail-on never)
  1  a run at or above --fail-on (default: critical): an active finding, or a critical
     one that is over (criticals latch)
  2  usage or input error (bad option, missing path, no event file, a --runs or --tags
     that matches nothing, bad rules file); one line on stderr
  3  some input could not be read (a garbage, corrupt or unreadable file: each one is a
     warning on stderr); the snapshot is still printed, without what could not be read

A run that stopped logging is judged by the stall rule (no new point for much longer than
its usual gap), unless it finished: it logged the end-of-training summary or reached its
planned last step (max_steps, or num_total_batches for TRL's PPOTrainer). For finished runs
whose trainer says neither, switch the rule off in a rules file: [stall] enabled = false

examples:
  rltop snapshot ./runs
  rltop snapshot ./runs --format markdown --output status.md
  rltop snapshot ./runs --fail-on warn --format json | jq '.runs[].findings'
"""


@dataclass
class SnapshotOptions:
    """Every snapshot option with its default, read from any argparse namespace."""

    paths: list[str]
    format: str = "text"
    output: str | None = None
    width: int | None = None
    runs: str | None = None
    tags: str | None = None
    fail_on: str = "critical"
    rules: str | None = None
    color: str = "auto"
    raw: bool = False

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> SnapshotOptions:
        """Options from ``args`` (missing attributes take their defaults); UsageError when invalid."""
        defaults = cls(paths=["."])
        values = {name: getattr(args, name, getattr(defaults, name)) for name in cls.__dataclass_fields__}
        options = cls(**values)
        options.paths = list(options.paths or default_paths())
        choices = (("format", SNAPSHOT_FORMATS), ("fail_on", FAIL_ON_CHOICES), ("color", COLOR_CHOICES))
        for name, allowed in choices:
            if getattr(options, name) not in allowed:
                flag = "--" + name.replace("_", "-")
                raise UsageError(
                    f"{flag} must be one of {', '.join(allowed)} (got {getattr(options, name)!r})"
                )
        if options.width is not None and not MIN_WIDTH <= options.width <= MAX_WIDTH:
            raise UsageError(f"--width must be between {MIN_WIDTH} and {MAX_WIDTH} (got {options.width})")
        return options


def add_snapshot_options(parser: argparse._ActionsContainer, filters: bool = True) -> None:
    """The snapshot options (``filters`` adds ``--tags``/``--runs`` too), for any parser or group."""
    add_format(parser, SNAPSHOT_FORMATS)
    parser.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of stdout")
    parser.add_argument(
        "--width", type=int, metavar="N",
        help=f"columns for text/svg/html, {MIN_WIDTH}-{MAX_WIDTH} (default: $COLUMNS, the terminal, "
        f"or {DEFAULT_WIDTH})",
    )  # fmt: skip
    if filters:
        add_filters(parser)
    parser.add_argument(
        "--fail-on", choices=FAIL_ON_CHOICES, default="critical",
        help="exit 1 when a run is at this level or worse (default: critical; never: 0 whatever the "
        "findings, still 3 when input could not be read)",
    )  # fmt: skip
    add_rules(parser)
    parser.add_argument(
        "--color", choices=COLOR_CHOICES, default="auto",
        help="colour the text format: auto = only on a terminal and without NO_COLOR (default: auto)",
    )  # fmt: skip
    add_raw(parser, "with --format csv")


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``snapshot``."""
    parser = sub.add_parser(
        NAME,
        help="print the health of the runs once (text, markdown, json, csv, svg, html)",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_paths(parser, required=False)
    add_snapshot_options(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    """``rltop snapshot``."""
    return run_snapshot(args)


def run_snapshot(args: argparse.Namespace) -> int:
    """Load, judge, render and write one snapshot; return 0, 1 (findings), 3 (input that could not be
    read: the verdict is incomplete, whatever the findings) or raise for exit 2.

    Bad input raises `UsageError`/`ValueError`/`OSError`, which `rltop.cli.main` turns into one
    line on stderr and exit code 2 (``rltop --once`` goes through the same ``main``).
    """
    options = SnapshotOptions.from_args(args)
    # Imported here so that `rltop --help` stays instant (numpy, Rich and the engine load lazily).
    from rltop.health.engine import assess_store
    from rltop.health.settings import load_rules
    from rltop.report.render import render
    from rltop.report.snapshot import build_snapshot

    # Before the (possibly long) load: fail fast on a bad rules file or an unwritable output.
    rules = load_rules(options.rules)
    if options.output not in (None, "-"):
        check_writable(options.output)
    result = load_or_fail(options.paths, options.tags, options.runs)
    now = _clock()
    health = assess_store(result.store, rules, now=now)
    snapshot = build_snapshot(result.store, health, now, result.discovery.roots, result.problems, rules)
    to_stdout = options.output in (None, "-")
    text = render(
        snapshot,
        options.format,
        width=output_width(options.width, to_stdout),
        color=options.format == "text" and use_color(options.color, to_stdout and _stdout_is_tty()),
        fail_on=options.fail_on,
        raw=options.raw,
    )
    if to_stdout:
        write_stdout(text)
    else:
        write_file(options.output, text)
    if result.problems:
        count = len(result.problems)
        note(
            f"{count} problem{'s' if count > 1 else ''} reading the input (above): exit code "
            f"{EXIT_UNREADABLE}, the verdict leaves out what could not be read"
        )
        return EXIT_UNREADABLE
    return EXIT_FINDINGS if snapshot.fails(options.fail_on) else EXIT_OK


def _stdout_is_tty() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def output_width(requested: int | None, to_stdout: bool) -> int:
    """``--width``, else ``$COLUMNS``, else the terminal's width (stdout only), else 80; at least 40."""
    if requested is not None:
        return requested
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return min(max(int(columns), MIN_WIDTH), MAX_WIDTH)
    if to_stdout and _stdout_is_tty():
        try:
            return min(max(os.get_terminal_size(sys.stdout.fileno()).columns, MIN_WIDTH), MAX_WIDTH)
        except (OSError, ValueError):
            pass
    return DEFAULT_WIDTH


def use_color(mode: str, is_tty: bool, environ: dict[str, str] | None = None) -> bool:
    """Colour or not: ``--color always/never`` wins; else NO_COLOR off, FORCE_COLOR on, TERM=dumb off, tty."""
    environ = os.environ if environ is None else environ
    if mode != "auto":
        return mode == "always"
    if environ.get("NO_COLOR", ""):
        return False
    if environ.get("FORCE_COLOR", ""):
        return True
    if environ.get("TERM", "") == "dumb":
        return False
    return is_tty


def check_writable(path: str) -> None:
    """UsageError unless ``path`` can be created or overwritten (checked before the work starts)."""
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise UsageError(f"{path}: is a directory (--output takes a file name)")
    if not os.path.isdir(directory):
        raise UsageError(f"{path}: no such directory {directory}")
    if not os.access(path if os.path.exists(path) else directory, os.W_OK):
        raise UsageError(f"{path}: permission denied")


def write_file(path: str, text: str) -> None:
    """Write the whole report to ``path``; UsageError (exit 2) naming the file when that fails."""
    try:
        with open(path, "w", encoding="utf-8", newline="") as out:
            out.write(text)
    except OSError as error:
        raise UsageError(f"{path}: cannot write the snapshot ({error.strerror or error})") from None


def write_stdout(text: str) -> None:
    """Write to stdout in its encoding; characters it cannot encode (sparklines under LANG=C) become ?."""
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        sys.stdout.write(text)
    else:
        sys.stdout.flush()
        buffer.write(text.encode(sys.stdout.encoding or "utf-8", errors="replace"))
    sys.stdout.flush()
