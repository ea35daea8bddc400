"""The alert options ``rltop watch`` and the dashboard share, and their checks (one line, exit 2)."""

from __future__ import annotations

import argparse
import shutil
from typing import TYPE_CHECKING

from rltop.commands.common import UsageError

if TYPE_CHECKING:  # the alerts package loads numpy; `rltop --help` stays instant
    from rltop.alerts.settings import AlertSettings

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
    group = parser.add_argument_group("alerts (hooks, webhooks, desktop; see the README)")
    group.add_argument(
        "--alert-on", choices=ALERT_LEVELS, default="critical",
        help="the level that alerts: a run reaching it runs the hook, posts the webhooks"
        + (", rings the bell" if dashboard else "") + " (default: critical)",
    )  # fmt: skip
    group.add_argument(
        "--on-alert", metavar="CMD",
        help="run CMD through the shell on each alert, on recovery and on finish: the event as JSON "
        "on stdin, RLTOP_* variables (RLTOP_EVENT, RLTOP_RUN, RLTOP_LEVEL, RLTOP_PID…); once per run "
        "and rule per episode, in the background",
    )  # fmt: skip
    group.add_argument(
        "--hook-timeout", type=_timeout, default=60.0, metavar="SECONDS",
        help="stop a hook that runs longer than this (default: 60)",
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
    """The settings the options ask for; UsageError for a bad URL or a missing notify-send."""
    from rltop.alerts.settings import AlertSettings, parse_webhook
    from rltop.health.findings import Level

    hooks = []
    for spec in args.webhook:
        try:
            hooks.append(parse_webhook(spec))
        except ValueError as error:
            raise UsageError(str(error)) from None
    if args.notify and shutil.which("notify-send") is None:
        raise UsageError("--notify needs notify-send, which is not on PATH "
                         "(Debian/Ubuntu: apt install libnotify-bin; Fedora: libnotify)")
    command = args.on_alert
    if command is not None and not command.strip():
        raise UsageError("--on-alert needs a command")
    return AlertSettings(
        alert_on=Level.WARN if args.alert_on == "warn" else Level.CRITICAL,
        command=command,
        hook_timeout=args.hook_timeout,
        webhooks=tuple(hooks),
        desktop=args.notify,
        bell=getattr(args, "bell", False),
        title=getattr(args, "title", False),
    )
