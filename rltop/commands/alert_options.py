"""The alert options ``rltop watch`` and the dashboard share, and their checks (one line, exit 2).

Only `rltop.alerts.settings` is imported here (no numpy): the dashboard checks its options before
its first frame.
"""

from __future__ import annotations

import argparse
import shutil

from rltop.alerts.settings import (
    DEFAULT_HOOK_TIMEOUT,
    MAX_RUNNING,
    QUEUE_PER_RUN,
    AlertSettings,
    parse_webhook,
)
from rltop.commands.common import UsageError

ALERT_LEVELS = ("warn", "critical")


def _timeout(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value <= 86400:
        raise argparse.ArgumentTypeError(f"{text}: the timeout must be > 0 and <= 86400 seconds")
    return value


def add_alert_options(parser: argparse.ArgumentParser, dashboard: bool = False) -> None:
    """``--alert-on``, ``--on-alert``, ``--hook-timeout``, ``--webhook``, ``--notify`` (+ bell/title)."""
    group = parser.add_argument_group("alerts (hooks, webhooks, desktop; see docs/guide/alerts.md)")
    group.add_argument(
        "--alert-on", choices=ALERT_LEVELS, default="critical",
        help="the level that alerts: a run reaching it runs the hook, posts the webhooks"
        + (", rings the bell" if dashboard else "") + " (default: critical)",
    )  # fmt: skip
    group.add_argument(
        "--on-alert", metavar="CMD",
        help="run CMD through the shell on each alert, on recovery and on finish: the event as JSON "
        "on stdin, RLTOP_* variables (RLTOP_EVENT, RLTOP_RUN, RLTOP_LEVEL, RLTOP_PID…; names "
        "display-safe, RLTOP_DIRECTORY_RAW the exact path); once per run and rule per episode, in the "
        f"background: one call per run at a time, in order (up to {QUEUE_PER_RUN} more wait, the "
        f"oldest dropped beyond), at most {MAX_RUNNING} at once shared in turn between runs, so a "
        "hook that hangs on one run delays only that run's alerts",
    )  # fmt: skip
    group.add_argument(
        "--hook-timeout", type=_timeout, default=DEFAULT_HOOK_TIMEOUT, metavar="SECONDS",
        help="stop a hook that runs longer than this, its child processes too; that run's next "
        "alert then goes (default: 60)",
    )  # fmt: skip
    group.add_argument(
        "--webhook", action="append", default=[], metavar="URL",
        help="POST each alert to URL: Slack-compatible, Discord and ntfy URLs get their format, others "
        "the JSON payload; STYLE+URL forces one (slack, discord, ntfy, json); env:NAME reads the "
        "URL from $NAME (keeps secrets out of shell history). Repeatable.",
    )  # fmt: skip
    group.add_argument(
        "--notify", action="store_true",
        help="also show a desktop notification (needs notify-send: libnotify-bin)",
    )  # fmt: skip
    if dashboard:
        group.add_argument(
            "--bell", action=argparse.BooleanOptionalAction, default=True,
            help="ring the terminal bell on a new alert; tmux then marks the window (default: on)",
        )  # fmt: skip
        group.add_argument(
            "--title", action=argparse.BooleanOptionalAction, default=True,
            help='show the worst level in the terminal title, e.g. "✖ rltop: 1 CRIT" (default: on)',
        )  # fmt: skip


def alert_settings(args: argparse.Namespace) -> AlertSettings:
    """The settings the options ask for; UsageError for a bad URL or a missing notify-send.

    Options missing from ``args`` (a Namespace built by hand, not by the parser) take their defaults.
    """
    from rltop.health.findings import Level

    option = vars(args).get
    hooks = []
    for spec in option("webhook") or []:
        try:
            hooks.append(parse_webhook(spec))
        except ValueError as error:
            raise UsageError(str(error)) from None
    desktop = bool(option("notify"))
    if desktop and shutil.which("notify-send") is None:
        raise UsageError(
            "--notify needs notify-send, which is not on PATH "
            "(Debian/Ubuntu: apt install libnotify-bin; Fedora: libnotify)"
        )
    command = option("on_alert")
    if command is not None and not command.strip():
        raise UsageError("--on-alert needs a command")
    return AlertSettings(
        alert_on=Level.WARN if option("alert_on") == "warn" else Level.CRITICAL,
        command=command,
        hook_timeout=option("hook_timeout") or DEFAULT_HOOK_TIMEOUT,
        webhooks=tuple(hooks),
        desktop=desktop,
        bell=bool(option("bell")),
        title=bool(option("title")),
    )
