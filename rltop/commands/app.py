"""``rltop [PATH...]`` / ``rltop app``: the live dashboard (a snapshot when stdout is not a terminal)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from rltop.commands.alert_options import add_alert_options, alert_settings
from rltop.commands.common import EXIT_OK, UsageError, add_filters, add_paths, default_paths, poll_interval

if TYPE_CHECKING:  # Textual loads only when the dashboard runs (`rltop --help` stays instant)
    from textual.app import App

    from rltop.model.run import Store
    from rltop.ui.app import RltopApp

NAME = "app"

DESCRIPTION = """\
Open the live dashboard on PATH (default: the current directory): the state of every run at a
glance (header and runs overview), the worst run in full (its findings with advice, a sparkline
card per metric), updated as training writes. Started before training, it waits for the first event
file. When stdout is not a terminal (a pipe, a file, cron) it prints a snapshot instead, as
`rltop snapshot` does; --once forces that.
"""

THEMES = """\
themes: rltop-dark (default), rltop-light, rltop-ansi (automatic on 16-colour terminals), Textual's
        built-in themes, and your own TOML files in ~/.config/rltop/themes/ (see docs/guide/dashboard.md)
"""


def epilog() -> str:
    """Every key (the key table the footer and ``?`` show, `rltop.ui.logic.keys`), then the themes."""
    from rltop.ui.logic.keys import keys_text  # plain data: no Textual

    return keys_text() + "\n" + THEMES


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``app`` (also what a bare ``rltop PATH`` runs)."""
    from rltop.commands.snapshot import add_snapshot_options

    parser = sub.add_parser(
        NAME,
        help="live dashboard (the default: `rltop PATH` = `rltop app PATH`)",
        description=DESCRIPTION,
        epilog=epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_paths(parser, required=False)
    add_filters(parser)
    parser.add_argument(
        "--poll", type=poll_interval, metavar="SECONDS",
        help="poll the files every SECONDS (at least 0.05) instead of using file events (for "
        "NFS/Lustre; chosen automatically there); URLs (s3://...) are polled every 10 s by default",
    )  # fmt: skip
    parser.add_argument(
        "--theme",
        metavar="NAME",
        help="colour theme (default: rltop-dark, or rltop-ansi on 16-colour terminals; env RLTOP_THEME)",
    )
    parser.add_argument(
        "--follow", metavar="worst|newest|NAME", default="worst",
        help="which run the dashboard shows by itself: the worst one (default; a run that becomes "
        "worse takes over), the newest one (a run that starts later takes over), or the run NAME "
        "(its name, display name, or a part of them); picking a run yourself stops following",
    )  # fmt: skip
    parser.add_argument("--run", metavar="NAME", help="the same as --follow NAME")
    parser.add_argument(
        "--screenshot-dir", metavar="DIR",
        help="where the Screenshot command (Ctrl+P) saves its SVG (default: the current directory)",
    )  # fmt: skip
    parser.add_argument(
        "--once", action="store_true",
        help="print a snapshot and exit (exactly `rltop snapshot`; implied when stdout is not a terminal)",
    )  # fmt: skip
    add_alert_options(parser, dashboard=True)
    group = parser.add_argument_group(
        "snapshot options (with --once, or when stdout is not a terminal; --rules applies to both)"
    )
    add_snapshot_options(group, filters=False)
    return parser


def run(args: argparse.Namespace) -> int:
    """Open the dashboard, or print a snapshot when there is no terminal to draw on."""
    args.paths = list(args.paths or default_paths())
    if args.once or not _is_terminal():
        from rltop.commands.snapshot import run_snapshot

        if args.theme is not None:
            _check_theme(args.theme)  # a typo is said even when no dashboard is drawn
        return run_snapshot(args)
    app = make_app(args)
    return run_fullscreen(app) or EXIT_OK  # 2 when the watcher could not start (said on exit)


def run_fullscreen(app: App) -> int | None:
    """Run the app on the real terminal size, and end it if the terminal goes away; its exit code.

    A terminal that went away ends the dashboard with 0 whatever the app's last writes did (they
    may fail before the guard points the output at /dev/null, which Textual counts as an error).

    An exported ``COLUMNS``/``LINES`` (set for scripts, or leaked by a parent process) would pin
    Textual to that size (``shutil.get_terminal_size`` prefers them) and ignore resizes, so a
    full-screen app drops them; snapshots keep honouring ``COLUMNS`` for their width.
    """
    import os

    from rltop.ui.terminal_guard import TerminalGuard

    for name in ("COLUMNS", "LINES"):
        os.environ.pop(name, None)
    # A terminal that goes away without SIGHUP would leave Textual spinning: end the app instead.
    guard = TerminalGuard(lambda: _exit_from_thread(app))
    guard.start()
    try:
        app.run()
    finally:
        guard.stop()
        if guard.lost:
            guard.note(f"rltop: {guard.reason}; the dashboard was closed")
    return EXIT_OK if guard.lost else app.return_code


def _exit_from_thread(app: App) -> None:
    import contextlib

    with contextlib.suppress(RuntimeError):  # the app is not running (any more)
        app.call_from_thread(app.exit)


def make_app(
    args: argparse.Namespace, *, store: Store | None = None, clock: Callable[[], float] | None = None
) -> RltopApp:
    """Validate everything that can be wrong before the screen is taken over, then build the app.

    ``store`` and ``clock`` are for tests and screenshots: a store shown as it is (no watcher) and
    a fixed clock; everything else comes from the command line, as for a user."""
    from rltop.health.settings import load_rules
    from rltop.ingest.follow.discovery import check_paths
    from rltop.ui.app import RltopApp

    check_paths(args.paths)  # DiscoveryError -> one line, exit 2
    if args.tags is not None or args.runs is not None:
        # The loader module pulls in numpy, which the first frame does not need otherwise.
        from rltop.ingest.follow.discovery import compile_filter

        compile_filter(args.tags, "--tags")
        compile_filter(args.runs, "--runs")
    if args.theme is not None:
        _check_theme(args.theme)
    follow = getattr(args, "run", None) or getattr(args, "follow", None) or "worst"
    if not follow.strip():
        raise UsageError("--follow needs worst, newest or a run name")
    screenshots = getattr(args, "screenshot_dir", None)
    if screenshots is not None:
        _check_directory(screenshots, "--screenshot-dir")
    rules = load_rules(args.rules)  # a bad rules file is a one-line error before the screen is taken
    alerts = alert_settings(args)  # a bad webhook URL, a missing notify-send: the same
    return RltopApp(
        args.paths,
        rules=rules,
        poll=args.poll,
        tags=args.tags,
        runs=args.runs,
        theme=args.theme,
        follow=follow,
        screenshot_dir=screenshots,
        alerts=alerts,
        store=store,
        **({"clock": clock} if clock is not None else {}),
    )


def _check_directory(path: str, option: str) -> None:
    import os

    if not os.path.isdir(path):
        raise UsageError(f"{option} {path}: no such directory")
    if not os.access(path, os.W_OK | os.X_OK):
        raise UsageError(f"{option} {path}: permission denied")


def _check_theme(name: str) -> None:
    from textual.theme import BUILTIN_THEMES

    from rltop.ui.themes import load_themes

    names = sorted({theme.name for theme in load_themes()[0]} | set(BUILTIN_THEMES))
    if name not in names:
        raise UsageError(f"unknown theme {name!r}; available: {', '.join(names)}")


def _is_terminal() -> bool:
    try:
        return sys.stdout.isatty() and sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False
