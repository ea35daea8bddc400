"""What the command line asks alerts to do, and webhook URLs: light (no numpy), checked before start.

The dashboard builds its settings before its first frame, so this module imports nothing heavy.

A webhook's style follows its URL, or a ``STYLE+`` prefix (``slack+https://chat.example.com/hooks/x``):
``slack`` for ``hooks.slack.com``, ``discord`` for ``discord.com/api/webhooks/…``, ``ntfy`` for
``ntfy.sh`` and hosts called ``ntfy.…``, ``json`` (the payload as is) for anything else.
``env:NAME`` reads the URL from an environment variable, so the secret in it stays out of shell
history and ``ps``; reports name a webhook by scheme and host only.
"""

from __future__ import annotations

import os
import urllib.parse
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rltop.health.findings import Level

STYLES = ("slack", "discord", "ntfy", "json")
DEFAULT_HOOK_TIMEOUT = 60.0
MAX_RUNNING = 16
"""Processes of one hook command running at once, over all runs (see `rltop.alerts.hooks`)."""
QUEUE_PER_RUN = 8
"""Alerts of one run waiting for its running hook call; beyond that the oldest waiting one is dropped."""


@dataclass(frozen=True)
class Webhook:
    """Where to POST, and in which style."""

    url: str
    style: str

    @property
    def label(self) -> str:
        """``webhook https://hooks.slack.com/…``: the secret part of the URL left out."""
        parts = urllib.parse.urlsplit(self.url)
        return f"webhook {parts.scheme}://{parts.hostname}/…"


@dataclass(frozen=True)
class AlertSettings:
    """Who is told (``--alert-on``, ``--on-alert``, ``--webhook``, ``--notify``; the dashboard's bell
    and title)."""

    alert_on: Level = Level.CRITICAL
    command: str | None = None
    hook_timeout: float = DEFAULT_HOOK_TIMEOUT
    webhooks: tuple[Webhook, ...] = ()
    desktop: bool = False
    bell: bool = False  # dashboard: BEL on a new alert
    title: bool = False  # dashboard: the worst level in the terminal title


def webhook_labels(hooks: Sequence[Webhook]) -> list[str]:
    """How reports name each webhook: its `Webhook.label`, and its place on the command line when two
    share a label (two Slack channels are both ``webhook https://hooks.slack.com/…``)."""
    counts = Counter(hook.label for hook in hooks)
    return [
        hook.label if counts[hook.label] == 1 else f"{hook.label} (--webhook #{number})"
        for number, hook in enumerate(hooks, 1)
    ]


def parse_webhook(spec: str, environ: Mapping[str, str] | None = None) -> Webhook:
    """A webhook from ``URL``, ``STYLE+URL`` or ``env:NAME``; ValueError (one line) when unusable."""
    environ = os.environ if environ is None else environ
    text = spec.strip()
    if text.startswith("env:"):
        name = text[4:]
        value = environ.get(name, "").strip()
        if not value:
            raise ValueError(f"--webhook {spec}: the environment variable {name} is not set or empty")
        text = value
    style = None
    prefix, plus, rest = text.partition("+")
    if plus and prefix.lower() in STYLES:
        style, text = prefix.lower(), rest
    parts = urllib.parse.urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        shown = spec if spec.startswith("env:") else f"{parts.scheme or '?'}://…"
        raise ValueError(f"--webhook {shown}: not an http(s) URL (STYLE+URL and env:NAME also work)")
    return Webhook(text, style or detect_style(text))


def detect_style(url: str) -> str:
    """The style a URL's host implies (``json`` when it implies none)."""
    parts = urllib.parse.urlsplit(url)
    host = (parts.hostname or "").lower()
    if host == "hooks.slack.com":
        return "slack"
    discord_host = host.split(".")[-2:] in (["discord", "com"], ["discordapp", "com"])
    if discord_host and parts.path.startswith("/api/webhooks"):
        return "discord"
    if host == "ntfy.sh" or host.startswith("ntfy."):
        return "ntfy"
    return "json"
