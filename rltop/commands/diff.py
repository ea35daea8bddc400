"""``rltop diff RUN_A RUN_B [...]``: what differs between runs' configs, beside each run's verdict.

The settings that differ (the equal ones folded away and counted), each run's level and what led
to it, and the one line of which difference goes with the failure when the data shows a clean
split; ``--group-by SETTING`` adds each value's worst level. The same comparison heads the
snapshot (``rltop snapshot PATH``); this command prints only it.
"""

from __future__ import annotations

import argparse

from rltop.commands.common import (
    EXIT_OK,
    UsageError,
    add_filters,
    add_format,
    add_paths,
    add_rules,
    load_or_fail,
)
from rltop.report.formats import MAX_WIDTH, MIN_WIDTH

NAME = "diff"
FORMATS = ("text", "markdown", "json")

EPILOG = """\
examples:
  rltop diff ./sweep                          every run under ./sweep
  rltop diff ./runs/lr_1e-3 ./runs/lr_1e-2    two runs
  rltop diff ./sweep --group-by learning_rate
  rltop diff ./sweep -f json | jq .config_summary

exit codes: 0 printed; 2 usage or input error (fewer than two runs, a --group-by setting that does
not differ between the runs, no event file); one line on stderr
"""


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``diff``."""
    parser = sub.add_parser(
        NAME,
        help="compare runs: settings that differ, each run's verdict, which difference goes with the failure",
        description="Compare the configs of the runs under PATH (or of the runs given): the settings that "
        "differ with each run's verdict beside them (settings equal in every run folded away; keys that "
        "name the run, such as output_dir, ignored), and one line saying which setting goes with the "
        "failure when the runs split cleanly on it. Runs that differ only in their seed are a seed group.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_paths(parser)
    add_format(parser, FORMATS)
    parser.add_argument(
        "--group-by",
        metavar="SETTING",
        help="also list the runs by this setting's value, with each value's worst level",
    )
    parser.add_argument(
        "--width",
        type=int,
        metavar="N",
        help=f"columns for text, {MIN_WIDTH}-{MAX_WIDTH} (default: $COLUMNS, the terminal, or 100)",
    )
    add_filters(parser)
    add_rules(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    """Load, judge and print the comparison; UsageError (exit 2) with fewer than two runs."""
    from rltop.commands.snapshot import _clock, output_width, write_stdout
    from rltop.health.engine import assess_store
    from rltop.health.settings import load_rules
    from rltop.report.compare_render import render_comparison
    from rltop.report.snapshot import build_snapshot
    from rltop.view.compare.groups import UnknownSetting, check_setting, group_by_setting

    if args.width is not None and not MIN_WIDTH <= args.width <= MAX_WIDTH:
        raise UsageError(f"--width must be between {MIN_WIDTH} and {MAX_WIDTH} (got {args.width})")
    rules = load_rules(args.rules)
    result = load_or_fail(args.paths, args.tags, args.runs)
    now = _clock()
    snapshot = build_snapshot(
        result.store,
        assess_store(result.store, rules, now=now),
        now,
        result.discovery.roots,
        result.problems,
        rules,
    )
    comparison = snapshot.comparison
    if comparison is None:
        (only,) = snapshot.runs
        raise UsageError(
            f"only one run ({only.label}) under {', '.join(snapshot.roots)}: nothing to compare "
            "(give two runs or more, or a folder of runs)"
        )
    groups = []
    if args.group_by is not None:
        try:
            check_setting(comparison.diff, args.group_by)
        except UnknownSetting as error:
            raise UsageError(f"--group-by {error}") from None
        configs = {name: run.config for name, run in result.store.runs.items()}
        groups = group_by_setting(comparison.runs, configs, args.group_by)
    write_stdout(render_comparison(comparison, groups, args.format, output_width(args.width, True)))
    return EXIT_OK
