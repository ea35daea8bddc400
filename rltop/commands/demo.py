"""``rltop demo``: two real TRL runs replayed live into a temporary directory, with the dashboard on it."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile

from rltop.commands.common import EXIT_OK, UsageError

NAME = "demo"

DESCRIPTION = """\
Replay two bundled real TRL runs as if they were training now: a PPO run that goes unstable (ratio
drift, then entropy collapse: critical alerts within seconds) and a healthy GRPO run. Their event
files are written step by step, with the current time, by a real event writer, into a temporary
directory (or --dir), and the dashboard opens on it. Try Enter on a red card, r for the runs list.
"""


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``demo``."""
    from rltop.demo_data import DEFAULT_SPEED

    parser = sub.add_parser(
        NAME, help="replay two real TRL runs live and open the dashboard on them", description=DESCRIPTION
    )
    parser.add_argument(
        "--speed",
        type=float,
        default=DEFAULT_SPEED,
        metavar="STEPS",
        help=f"training steps written per second (default: {DEFAULT_SPEED:g})",
    )
    parser.add_argument(
        "--dir",
        metavar="DIR",
        help="write the runs here and keep them (default: a temporary directory, removed on exit)",
    )
    parser.add_argument(
        "--no-ui",
        action="store_true",
        help="only write the runs (needs --dir): watch them with `rltop DIR`, "
        "`rltop tail DIR` or `rltop snapshot DIR` from another terminal",
    )
    parser.add_argument("--theme", metavar="NAME", help="colour theme of the dashboard")
    return parser


def run(args: argparse.Namespace) -> int:
    """Write the runs in the background and show them; clean up afterwards."""
    from rltop.demo_data.replay import Replayer

    if not args.speed > 0:
        raise UsageError(f"--speed must be a positive number of steps per second, got {args.speed}")
    if args.no_ui and not args.dir:
        raise UsageError("--no-ui needs --dir DIR (where to write the runs)")
    if not args.no_ui and not (sys.stdout.isatty() and sys.stdin.isatty()):
        raise UsageError("rltop demo needs a terminal (or use --no-ui --dir DIR)")
    target = args.dir or tempfile.mkdtemp(prefix="rltop-demo-")
    if args.dir:
        os.makedirs(target, exist_ok=True)
    replayer = Replayer(target, speed=args.speed)
    try:
        replayer.begin()
        replayer.start()
        if args.no_ui:
            print(
                f"rltop demo: writing {', '.join(r.name for r in replayer.runs)} into {target} "
                f"({replayer.total_steps / args.speed:.0f} s)",
                file=sys.stderr,
            )
            while not replayer.wait(0.5):
                pass
            return EXIT_OK
        return _run_dashboard(target, args.theme)
    finally:
        replayer.stop()
        if not args.dir:
            shutil.rmtree(target, ignore_errors=True)


def _run_dashboard(target: str, theme: str | None) -> int:
    from rltop.commands.app import make_app, run_fullscreen

    # The dashboard's defaults: the bell and the title show the replay's criticals too.
    app_args = argparse.Namespace(
        paths=[target],
        tags=None,
        runs=None,
        poll=None,
        theme=theme,
        run="ppo_unstable",
        rules=None,
        bell=True,
        title=True,
    )
    app = make_app(app_args)
    return run_fullscreen(app) or EXIT_OK
