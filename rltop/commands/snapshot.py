"""``rltop snapshot``: placeholder until its issue lands (replaced by the module of that issue)."""

from __future__ import annotations

import argparse

from rltop.commands.common import UsageError, add_paths

NAME = "snapshot"


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``snapshot``."""
    parser = sub.add_parser(NAME, help="(not available yet)")
    add_paths(parser, required=False)
    return parser


def run(args: argparse.Namespace) -> int:
    """Not built yet."""
    raise UsageError("'rltop snapshot' is not available in this build yet")
