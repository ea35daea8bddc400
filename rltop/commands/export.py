"""``rltop export PATH... --format csv|jsonl``: every point to stdout, sorted by run, tag, step."""

from __future__ import annotations

import argparse
import sys

from rltop.commands.common import EXIT_OK, add_filters, add_format, add_paths, add_raw, load_or_fail

NAME = "export"


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``export``."""
    parser = sub.add_parser(
        NAME,
        help="print every point as CSV or JSON Lines",
        description="Print every scalar point, sorted by run, tag and step "
        "(CSV header run,tag,step,wall_time,value,session; JSONL objects with those keys). Exit code 2 "
        "when --runs or --tags matches nothing.",
    )
    add_paths(parser)
    add_format(parser, ("csv", "jsonl"))
    add_filters(parser)
    add_raw(parser, "names")
    return parser


def run(args: argparse.Namespace) -> int:
    """Load everything, then print it in batches of lines."""
    from rltop.report.export import export_csv_chunks, export_lines

    result = load_or_fail(args.paths, args.tags, args.runs)
    out = sys.stdout
    if args.format == "csv":  # built column-wise, byte for byte the same lines
        out.flush()
        for chunk in export_csv_chunks(result.store, raw=args.raw):
            out.buffer.write(chunk)
        out.buffer.flush()
        return EXIT_OK
    batch: list[str] = []
    for line in export_lines(result.store, args.format, raw=args.raw):
        batch.append(line)
        if len(batch) >= 8192:
            out.write("\n".join(batch) + "\n")
            batch.clear()
    if batch:
        out.write("\n".join(batch) + "\n")
    out.flush()
    return EXIT_OK
