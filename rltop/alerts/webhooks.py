"""``--webhook URL``: alerts POSTed to chat and push services, with the standard library alone.

What each style sends (the style comes from the URL, see `rltop.alerts.settings`):

* ``slack`` (``hooks.slack.com``, and Slack-compatible Mattermost/Rocket.Chat hooks): ``{"text": …}``;
* ``discord`` (``discord.com/api/webhooks/…``): ``{"content": …}``, mentions switched off;
* ``ntfy`` (``ntfy.sh``, hosts called ``ntfy.…``): the text as a plain POST, with ``Title``,
  ``Priority`` and ``Tags`` headers;
* ``json`` (anything else): the alert payload itself.

Every text comes from the payload, which is display-safe (`rltop.alerts.payload`): a run name cannot
reorder, restyle or hide a message; on top of that Slack gets ``<``, ``>``, ``&`` escaped (no
``<!channel>``), Discord no mentions, and ntfy's ``Title`` header one printable line, shortened.

Each webhook has its own thread and queue: a slow or unreachable server delays nothing else. A
delivery is tried `ATTEMPTS` times (connection errors, timeouts, broken HTTP replies, HTTP 429 and
5xx; never other 4xx) with a pause between tries, each try limited to `TIMEOUT` seconds. A failure
is said once per kind (`Problems`); whatever goes wrong with one alert, the thread goes on with the
next.
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
from rltop.alerts.settings import Webhook, webhook_labels

if TYPE_CHECKING:
    import urllib.request

TIMEOUT = 10.0  # seconds per try
ATTEMPTS = 3
PAUSES = (1.0, 5.0)  # seconds before the second and third try
MAX_RETRY_AFTER = 30.0  # a server's Retry-After is honoured up to this
QUEUE_LIMIT = 100  # alerts waiting for one webhook; more are dropped (and that is said)
DISCORD_LIMIT = 2000  # characters Discord accepts in "content"
TITLE_LIMIT = 200  # characters of ntfy's Title header (a notification's title is one short line)
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
                "Title": _header_text(_shorten(headline(payload), TITLE_LIMIT)),
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
        self._queues: list[tuple[Webhook, str, queue.Queue]] = []
        self._threads: list[threading.Thread] = []
        self._count = threading.Lock()
        self.delivered = 0  # payloads accepted by a server (tests)
        for hook, label in zip(hooks, webhook_labels(hooks)):
            inbox: queue.Queue = queue.Queue(QUEUE_LIMIT)
            thread = threading.Thread(
                target=self._serve, args=(hook, label, inbox), name="rltop-webhook", daemon=True
            )
            self._queues.append((hook, label, inbox))
            self._threads.append(thread)
            thread.start()

    def send(self, payload: dict[str, Any]) -> None:
        """Queue ``payload`` for every webhook."""
        for _hook, label, inbox in self._queues:
            try:
                inbox.put_nowait(payload)
            except queue.Full:
                self.problems.failed(
                    label,
                    "queue",
                    f"{label}: {QUEUE_LIMIT} alerts are waiting; an alert was dropped",
                )

    def close(self, grace: float = 2.0) -> None:
        """Deliver what is queued within ``grace`` seconds, then stop (no retry waits from here on)."""
        for _hook, _label, inbox in self._queues:
            with contextlib.suppress(queue.Full):  # full: the thread sees _stopping at its next alert
                inbox.put_nowait(None)
        deadline = time.monotonic() + grace
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        self._stopping.set()
        for thread in self._threads:
            thread.join(0.5)
        for _hook, label, inbox in self._queues:
            left = sum(1 for payload in _drain(inbox) if payload is not None)
            if left:
                self.problems.failed(
                    label,
                    "left waiting",
                    f"{label}: {left} alert{'s' * (left != 1)} still waiting when rltop "
                    "ended were not delivered",
                    count=left,
                )

    def _pause(self, attempt: int) -> float:
        """Seconds to wait before try number ``attempt`` (counting from 0)."""
        if not self.pauses:
            return 0.0
        return self.pauses[min(attempt - 1, len(self.pauses) - 1)]

    def _serve(self, hook: Webhook, label: str, inbox: queue.Queue) -> None:
        while True:
            payload = inbox.get()
            if payload is None or self._stopping.is_set():
                return
            try:
                self._deliver(hook, label, payload)
            except Exception as error:  # whatever one alert does, the next ones are still delivered
                what = f"{type(error).__name__}: {error}"
                self.problems.failed(
                    label, type(error).__name__, f"{label} failed ({what}); the alert was not delivered"
                )

    def _deliver(self, hook: Webhook, label: str, payload: dict[str, Any]) -> None:
        """Up to `attempts` tries; the last error is reported (once per kind)."""
        import http.client
        import urllib.error
        import urllib.request

        request = webhook_request(hook, payload)
        reason, kind = "", ""
        retry_after: float | None = None
        tried = 0
        for attempt in range(self.attempts):
            if attempt:
                pause = retry_after if retry_after is not None else self._pause(attempt)
                if self._stopping.wait(pause):
                    break
            retry_after = None
            tried += 1
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    response.read(65536)
                with self._count:
                    self.delivered += 1
                self.problems.worked(label)
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
            except http.client.HTTPException as error:  # a reply that is not HTTP, or cut short
                reason, kind = f"bad reply: {type(error).__name__}", type(error).__name__
        tries = f"{tried} tries, {self.timeout:g} s each" if tried != 1 else f"1 try, {self.timeout:g} s"
        self.problems.failed(
            label,
            kind,
            f"{label} failed ({reason}; {tries}); the alert was not delivered",
        )


def _drain(inbox: queue.Queue) -> list[Any]:
    """Everything left in ``inbox``."""
    left = []
    with contextlib.suppress(queue.Empty):
        while True:
            left.append(inbox.get_nowait())
    return left


def _retry_after(value: str | None) -> float | None:
    try:
        return min(max(float(value), 0.0), MAX_RETRY_AFTER) if value is not None else None
    except ValueError:
        return None
