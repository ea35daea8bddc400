"""``--webhook URL``: alerts POSTed to chat and push services, with the standard library alone.

What each style sends (the style comes from the URL, see `rltop.alerts.settings`):

* ``slack`` (``hooks.slack.com``, and Slack-compatible Mattermost/Rocket.Chat hooks): ``{"text": …}``;
* ``discord`` (``discord.com/api/webhooks/…``): ``{"content": …}``, mentions switched off;
* ``ntfy`` (``ntfy.sh``, hosts called ``ntfy.…``): the text as a plain POST, with ``Title``,
  ``Priority`` and ``Tags`` headers;
* ``json`` (anything else): the alert payload itself.

Each webhook has its own
thread and queue: a slow or unreachable server delays nothing else. A delivery is tried
`ATTEMPTS` times (connection errors, timeouts, HTTP 429 and 5xx; never other 4xx) with a pause
between tries, each try limited to `TIMEOUT` seconds.
"""

from __future__ import annotations

import contextlib
import html
import json
import queue
import threading
import time
from email.header import Header
from typing import TYPE_CHECKING, Any

from rltop import __version__
from rltop.alerts.payload import event_text, headline
from rltop.alerts.problems import Problems
from rltop.alerts.settings import Webhook

if TYPE_CHECKING:
    import urllib.request

TIMEOUT = 10.0  # seconds per try
ATTEMPTS = 3
PAUSES = (1.0, 5.0)  # seconds before the second and third try
MAX_RETRY_AFTER = 30.0  # a server's Retry-After is honoured up to this
QUEUE_LIMIT = 100  # alerts waiting for one webhook; more are dropped (and that is said)
DISCORD_LIMIT = 2000  # characters Discord accepts in "content"
_NTFY_PRIORITY = {"critical": "5", "warn": "4"}
_NTFY_TAGS = {
    "finding": "rotating_light",
    "escalation": "rotating_light",
    "stall": "hourglass",
    "recovery": "white_check_mark",
    "finish": "checkered_flag",
}


def webhook_request(hook: Webhook, payload: dict[str, Any]) -> urllib.request.Request:
    """The POST request that tells ``payload`` to ``hook``."""
    import urllib.request  # (urllib and http.client load only once a webhook is used: ~10 ms at start)

    headers = {"User-Agent": f"rltop/{__version__}"}
    if hook.style == "ntfy":
        body = event_text(payload).encode()
        headers.update(
            {
                "Content-Type": "text/plain; charset=utf-8",
                "Title": _header_text(headline(payload)),
                "Priority": _NTFY_PRIORITY.get(payload["level"], "3")
                if payload["event"] not in ("recovery", "finish")
                else "3",
                "Tags": _NTFY_TAGS.get(payload["event"], "bell"),
            }
        )
    else:
        if hook.style == "slack":
            # Slack reads <…> as links and mentions (<!channel>): names from files must not ping.
            message: Any = {"text": html.escape(event_text(payload), quote=False)}
        elif hook.style == "discord":
            message = {
                "content": _shorten(event_text(payload), DISCORD_LIMIT),
                "allowed_mentions": {"parse": []},
            }  # a run called "@everyone" pings nobody
        else:
            message = payload
        body = json.dumps(message, ensure_ascii=False, allow_nan=False).encode()
        headers["Content-Type"] = "application/json; charset=utf-8"
    return urllib.request.Request(hook.url, data=body, headers=headers, method="POST")


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _header_text(text: str) -> str:
    """One header line: controls dropped, non-ASCII as an RFC 2047 word (ntfy decodes those)."""
    text = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    try:
        text.encode("ascii")
        return text
    except UnicodeEncodeError:
        return Header(text, "utf-8").encode(maxlinelen=10_000)


class WebhookSender:
    """Delivers payloads to webhooks, each from its own thread; never blocks the caller."""

    def __init__(
        self,
        hooks: list[Webhook],
        problems: Problems,
        timeout: float = TIMEOUT,
        attempts: int = ATTEMPTS,
        pauses: tuple[float, ...] = PAUSES,
    ) -> None:
        self.problems = problems
        self.timeout = timeout
        self.attempts = max(1, attempts)
        self.pauses = pauses
        self._stopping = threading.Event()
        self._queues: list[tuple[Webhook, queue.Queue]] = []
        self._threads: list[threading.Thread] = []
        self.delivered = 0  # payloads accepted by a server (tests)
        for hook in hooks:
            inbox: queue.Queue = queue.Queue(QUEUE_LIMIT)
            thread = threading.Thread(
                target=self._serve, args=(hook, inbox), name="rltop-webhook", daemon=True
            )
            self._queues.append((hook, inbox))
            self._threads.append(thread)
            thread.start()

    def send(self, payload: dict[str, Any]) -> None:
        """Queue ``payload`` for every webhook."""
        for hook, inbox in self._queues:
            try:
                inbox.put_nowait(payload)
            except queue.Full:
                self.problems.failed(
                    hook.label,
                    "queue",
                    f"{hook.label}: {QUEUE_LIMIT} alerts are waiting; an alert was dropped",
                )

    def close(self, grace: float = 2.0) -> None:
        """Deliver what is queued within ``grace`` seconds, then stop (no retry waits from here on)."""
        for _hook, inbox in self._queues:
            with contextlib.suppress(queue.Full):  # full: the thread sees _stopping at its next alert
                inbox.put_nowait(None)
        deadline = time.monotonic() + grace
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        self._stopping.set()
        for thread in self._threads:
            thread.join(0.5)

    def _pause(self, attempt: int) -> float:
        """Seconds to wait before try number ``attempt`` (counting from 0)."""
        if not self.pauses:
            return 0.0
        return self.pauses[min(attempt - 1, len(self.pauses) - 1)]

    def _serve(self, hook: Webhook, inbox: queue.Queue) -> None:
        while True:
            payload = inbox.get()
            if payload is None or self._stopping.is_set():
                return
            self._deliver(hook, payload)

    def _deliver(self, hook: Webhook, payload: dict[str, Any]) -> None:
        """Up to `attempts` tries; the last error is reported (once per kind)."""
        import urllib.error
        import urllib.request

        reason, kind = "", ""
        retry_after: float | None = None
        for attempt in range(self.attempts):
            if attempt:
                pause = retry_after if retry_after is not None else self._pause(attempt)
                if self._stopping.wait(pause):
                    break
            retry_after = None
            try:
                with urllib.request.urlopen(webhook_request(hook, payload), timeout=self.timeout) as response:
                    response.read(65536)
                self.delivered += 1
                self.problems.worked(hook.label)
                return
            except urllib.error.HTTPError as error:
                reason, kind = f"HTTP {error.code} {error.reason}", f"http {error.code}"
                if error.code != 429 and error.code < 500:
                    break  # the URL or the payload is wrong: trying again will not help
                retry_after = _retry_after(error.headers.get("Retry-After"))
            except (urllib.error.URLError, TimeoutError, OSError) as error:
                cause = getattr(error, "reason", error)
                timed_out = isinstance(cause, TimeoutError)
                reason = "timed out" if timed_out else str(getattr(cause, "strerror", None) or cause)
                kind = type(cause).__name__
        tries = f"{self.attempts} tries" if self.attempts > 1 else "1 try"
        self.problems.failed(
            hook.label,
            kind,
            f"{hook.label} failed ({reason}; {tries}, {self.timeout:g} s each); the alert was not delivered",
        )


def _retry_after(value: str | None) -> float | None:
    try:
        return min(max(float(value), 0.0), MAX_RETRY_AFTER) if value is not None else None
    except ValueError:
        return None
