"""``rltop completions PATH``: what the policy wrote at one step, for scripts, issues and PRs."""

from __future__ import annotations

import argparse
import shutil
import sys
from typing import TYPE_CHECKING

from rltop.commands.common import EXIT_OK, UsageError, add_format, add_paths, note

if TYPE_CHECKING:
    from rltop.model.run import Run

NAME = "completions"
DESCRIPTION = """\
Print the completions TRL logged at one step (GRPOTrainer/RLOOTrainer with log_completions=True
write <output_dir>/completions/completions_NNNNN.parquet; reading them needs pyarrow:
pip install 'rltop[completions]'). Every reward column, the advantage, the length in characters,
whether it reached max_completion_length, and completions identical within their prompt group.

formats:
  text      wrapped to the terminal, every control or invisible character escaped (\\x1b)
  jsonl     one JSON object per completion, every column exactly as in the file
  markdown  a table and code blocks, for an issue or pull-request comment
"""
EPILOG = """\
examples:
  rltop completions ./out/grpo_run --last
  rltop completions ./out/grpo_run --step 240 --sort reward
  rltop completions ./out/grpo_run --step 240 --format markdown > comment.md
  rltop completions ./out --runs grpo_a --format jsonl | jq .completion
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``completions``."""
    parser = sub.add_parser(
        NAME,
        help="print the completions logged at one step",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_paths(parser)
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--step",
        type=int,
        metavar="N",
        help="the step (the nearest logged step when N was not logged; said on stderr)",
    )
    which.add_argument("--last", action="store_true", help="the newest logged step (the default)")
    parser.add_argument(
        "--sort",
        choices=("reward", "advantage"),
        default=None,
        help="best first by the sum of the reward columns, or by advantage (default: file order)",
    )
    parser.add_argument(
        "--grep",
        metavar="TEXT",
        default="",
        help="only completions whose prompt or completion contains TEXT (case-insensitive)",
    )
    parser.add_argument(
        "--unique",
        action="store_true",
        help="one line per distinct completion of a prompt group (marked with its count)",
    )
    add_format(parser, ("text", "jsonl", "markdown"))
    parser.add_argument("--runs", metavar="REGEX", help="only runs whose name matches this regex")
    parser.add_argument("--width", type=int, default=None, help="text width (default: the terminal's)")


def run(args: argparse.Namespace) -> int:
    """Load the runs, pick the step, print its completions."""
    from rltop.ingest.sources.completions import read_step
    from rltop.model.completion_checks import trusted_cap
    from rltop.report.completions_out import jsonl_lines, markdown_lines, text_lines
    from rltop.view.completions import arrange, build_rows

    direct = _given_directly(args.paths)
    if direct is not None:
        chosen, asked = direct
        step_arg = args.step if args.step is not None else asked
    else:
        chosen, step_arg = _the_run(args), args.step
    index = chosen.completions
    summary = index.latest() if step_arg is None else index.nearest(step_arg)
    if step_arg is not None and summary.step != step_arg:
        note(f"step {step_arg} has no completions; showing the nearest logged step, {summary.step}")
    step = read_step(summary, trusted_cap(chosen, summary))
    if step.problem:
        raise UsageError(step.problem)
    rows = arrange(build_rows(step), args.sort or "row", args.grep, args.unique)
    if args.format == "jsonl":
        lines = jsonl_lines(step, rows)
    elif args.format == "markdown":
        lines = markdown_lines(step, rows, chosen, chosen.name)
    else:
        width = args.width or shutil.get_terminal_size((100, 24)).columns
        lines = text_lines(step, rows, chosen, max(width, 20), chosen.name)
    out = sys.stdout
    for line in lines:
        out.write(line + "\n")
    return EXIT_OK


def _the_run(args: argparse.Namespace) -> Run:
    """The one run under the paths that logged completions (UsageError for none or several)."""
    from rltop.commands.common import load_or_fail

    result = load_or_fail(args.paths, None, args.runs)
    runs = [run for run in result.store.runs.values() if run.completions]
    if not runs:
        hints = {run.completions.note for run in result.store.runs.values() if run.completions.note}
        if hints:
            raise UsageError(sorted(hints)[0])
        raise UsageError(
            "no completions/completions_*.parquet next to these runs "
            "(TRL writes them with log_completions=True)"
        )
    if len(runs) > 1:
        names = ", ".join(run.name for run in runs[:5]) + (", ..." if len(runs) > 5 else "")
        raise UsageError(f"{len(runs)} runs have completions ({names}); choose one with --runs REGEX")
    return runs[0]


def _given_directly(paths: list[str]) -> tuple[Run, int | None] | None:
    """PATH is a ``completions`` folder or one ``completions_NNNNN.parquet``: (its run, that step).

    The run's event files, when its output_dir has them, give the length cap and clipped_ratio;
    without them the folder alone is shown. None for any other PATH (a run, a log root).
    """
    from rltop.ingest import storage
    from rltop.ingest.feed import apply_completions
    from rltop.ingest.follow.loader import load
    from rltop.ingest.sources.completions import FOLDER, CompletionsFollower, file_step, is_completions_file
    from rltop.model.run import Run

    if len(paths) != 1:
        return None
    path = paths[0].rstrip("/") or paths[0]
    name, kind = storage.name(path), storage.kind(path)
    if kind == "file" and is_completions_file(name):
        folder, step = storage.parent(storage.absolute(path)), file_step(name)
    elif kind == "directory" and name == FOLDER:
        folder, step = storage.absolute(path), None
    else:
        return None
    loaded = load([storage.parent(folder)]).store.runs.values()
    run = next((r for r in loaded if r.completions), None)
    if run is None:
        run = Run(name=storage.display(folder), directory=folder)
        update = CompletionsFollower(folder).scan()
        apply_completions(run, update)
        if not run.completions:
            raise UsageError(update.note or f"{storage.display(path)}: no readable completions file")
    return run, step
