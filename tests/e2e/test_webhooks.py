"""Webhooks against a real HTTP server on 127.0.0.1: payload shapes, retries, timeouts, a server down."""

from __future__ import annotations

import email.header
import json
import socket
import threading

import pytest
from helpers.live import HttpServer as Server
from helpers.live import wait_until

from rltop.alerts.events import FINDING, RECOVERY, AlertEvent
from rltop.alerts.payload import event_payload
from rltop.alerts.problems import Problems
from rltop.alerts.settings import Webhook, detect_style, parse_webhook
from rltop.alerts.webhooks import WebhookSender
from rltop.health.findings import Finding, Level

FINDING_ = Finding(
    Level.CRITICAL,
    "entropy_collapse",
    "grpo <!channel> @everyone",
    "train/entropy",
    40,
    0.004,
    "train/entropy fell to 0.004 at step 40.",
    "Raise the temperature.",
    first_step=38,
    last_step=40,
    active=True,
    title="entropy collapse",
)
PAYLOAD = event_payload(
    AlertEvent(FINDING, FINDING_.run, Level.CRITICAL, FINDING_), None, now=1_800_000_000.0
)


@pytest.fixture
def server():
    running = Server()
    yield running
    running.close()


def sender(url: str, style: str, **kwargs) -> tuple[WebhookSender, list[str]]:
    said: list[str] = []
    return WebhookSender([Webhook(url, style)], Problems(said.append), **kwargs), said


def deliver(server: Server, style: str, payload: dict = PAYLOAD) -> dict:
    hooks, said = sender(server.url + "/hook/secret", style)
    hooks.send(payload)
    wait_until(lambda: server.requests, "the POST")
    hooks.close()
    assert said == []
    return server.requests[0]


def test_slack_text_without_mentions(server):
    request = deliver(server, "slack")
    body = json.loads(request["body"])
    assert list(body) == ["text"]
    assert body["text"].startswith("CRITICAL grpo &lt;!channel&gt; @everyone: train/entropy fell to 0.004")
    assert body["text"].endswith("\nRaise the temperature.")
    assert request["headers"]["Content-Type"] == "application/json; charset=utf-8"


def test_discord_content_with_mentions_off(server):
    body = json.loads(deliver(server, "discord")["body"])
    assert body["allowed_mentions"] == {"parse": []}
    assert body["content"].startswith("CRITICAL grpo <!channel> @everyone: train/entropy fell to 0.004")


def test_ntfy_plain_text_with_title_priority_and_tags(server):
    request = deliver(server, "ntfy")
    assert request["body"].decode().startswith("CRITICAL grpo <!channel> @everyone: train/entropy")
    headers = request["headers"]
    assert headers["Priority"] == "5" and headers["Tags"] == "rotating_light"
    assert headers["Title"] == "rltop: CRITICAL grpo <!channel> @everyone: entropy collapse"
    assert headers["Content-Type"] == "text/plain; charset=utf-8"


def test_ntfy_non_ascii_title_is_rfc2047_and_a_recovery_is_quieter(server):
    finding = Finding(Level.WARN, "stall", "réseau", "", 5, 900.0, "m", "a", title="stall")
    payload = event_payload(AlertEvent(RECOVERY, "réseau", Level.WARN, finding), None)
    headers = deliver(server, "ntfy", payload)["headers"]
    ((decoded, charset),) = email.header.decode_header(headers["Title"])
    assert decoded.decode(charset) == "rltop: RECOVERED réseau"
    assert headers["Priority"] == "3" and headers["Tags"] == "white_check_mark"


def test_raw_json_is_the_payload(server):
    assert json.loads(deliver(server, "json")["body"]) == json.loads(json.dumps(PAYLOAD))


def test_server_errors_are_retried_client_errors_are_not():
    flaky = Server(replies=[503, 500])
    try:
        hooks, said = sender(flaky.url, "json", pauses=(0.01,))
        hooks.send(PAYLOAD)
        wait_until(lambda: hooks.delivered == 1, "the third try")
        assert len(flaky.requests) == 3 and said == []
        hooks.close()
    finally:
        flaky.close()
    wrong = Server(replies=[404])
    try:
        hooks, said = sender(wrong.url, "json", pauses=(0.01,))
        hooks.send(PAYLOAD)
        wait_until(lambda: said, "the report")
        hooks.close()
        assert len(wrong.requests) == 1
        assert said == [
            "webhook http://127.0.0.1/… failed (HTTP 404 Not Found; 1 try, 10 s); the "
            "alert was not delivered (said once; later failures of this kind are only counted)"
        ]
    finally:
        wrong.close()


def test_a_server_that_never_answers_times_out_and_is_said_once():
    hang = threading.Event()
    slow = Server(hang=hang)
    try:
        hooks, said = sender(slow.url, "slack", timeout=0.3, attempts=2, pauses=(0.01,))
        hooks.send(PAYLOAD)
        hooks.send(PAYLOAD)
        wait_until(lambda: hooks.problems.summary(), "two failed deliveries")
        hooks.close(grace=0.1)
        assert said == [
            "webhook http://127.0.0.1/… failed (timed out; 2 tries, 0.3 s each); the alert was "
            "not delivered (said once; later failures of this kind are only counted)"
        ]
        assert hooks.problems.summary() == ["webhook http://127.0.0.1/… failed 2 times in all"]
    finally:
        hang.set()
        slow.close()


def test_alerts_still_queued_at_the_end_are_said():
    hang = threading.Event()
    slow = Server(hang=hang)
    try:
        hooks, said = sender(slow.url, "json", timeout=30, attempts=1)
        hooks.send(PAYLOAD)
        wait_until(lambda: slow.arrived == 1, "the first POST, which gets no answer")
        hooks.send(PAYLOAD)
        hooks.send(PAYLOAD)
        hooks.close(grace=0.1)
        assert said == [
            "webhook http://127.0.0.1/…: 2 alerts still waiting when rltop ended were not delivered (said "
            "once; later failures of this kind are only counted)"
        ]
    finally:
        hang.set()
        slow.close()


def test_a_server_that_is_down_is_said_once_and_nothing_crashes():
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    hooks, said = sender(f"http://127.0.0.1:{port}/x", "discord", attempts=2, pauses=(0.01,))
    for _ in range(3):
        hooks.send(PAYLOAD)
    wait_until(
        lambda: hooks.problems.summary() == ["webhook http://127.0.0.1/… failed 3 times in all"],
        "three failed deliveries",
    )
    hooks.close()
    assert len(said) == 1 and "Connection refused; 2 tries" in said[0]


def test_a_server_back_up_is_said_once():
    flaky = Server(replies=[503])
    try:
        hooks, said = sender(flaky.url, "json", attempts=1)
        hooks.send(PAYLOAD)
        wait_until(lambda: said, "the failure")
        hooks.send(PAYLOAD)
        wait_until(lambda: hooks.delivered == 1, "the delivery")
        hooks.close()
    finally:
        flaky.close()
    assert said[-1] == "webhook http://127.0.0.1/… works again (after 1 failure)"


def test_parse_webhook_styles_env_and_errors():
    assert detect_style("https://hooks.slack.com/services/T/B/x") == "slack"
    assert detect_style("https://discord.com/api/webhooks/1/x") == "discord"
    assert detect_style("https://ntfy.sh/my-topic") == "ntfy"
    assert detect_style("https://ntfy.example.org/topic") == "ntfy"
    assert detect_style("https://example.org/hook") == "json"
    assert parse_webhook("slack+https://chat.example.org/hooks/x") == Webhook(
        "https://chat.example.org/hooks/x", "slack"
    )
    hook = parse_webhook("env:MY_HOOK", {"MY_HOOK": "https://hooks.slack.com/services/T/B/secret"})
    assert hook.style == "slack" and hook.label == "webhook https://hooks.slack.com/…"
    with pytest.raises(ValueError, match="the environment variable MY_HOOK is not set"):
        parse_webhook("env:MY_HOOK", {})
    with pytest.raises(ValueError, match=r"--webhook ftp://…: not an http\(s\) URL"):
        parse_webhook("ftp://secret@example.org/x")


def _read_request(connection: socket.socket) -> bool:
    """Read one HTTP request (head and Content-Length body); False if the client left first."""
    data = b""
    while b"\r\n\r\n" not in data or len(data.split(b"\r\n\r\n", 1)[1]) < _length(data):
        chunk = connection.recv(65536)
        if not chunk:
            return False
        data += chunk
    return True


def _length(data: bytes) -> int:
    head = data.split(b"\r\n\r\n", 1)[0].lower()
    return int(head.split(b"content-length:")[1].split(b"\r\n")[0]) if b"content-length:" in head else 0


class RawServer:
    """A TCP server on 127.0.0.1 that answers each connection as ``replies`` says, in turn: ``close``
    (reads the request, closes without a word), ``garbage`` (a reply that is not HTTP) or ``ok``."""

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self.requests = 0
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen()
        self.url = f"http://127.0.0.1:{self.socket.getsockname()[1]}/hook"
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            with connection:
                if not _read_request(connection):
                    continue
                self.requests += 1
                reply = self.replies.pop(0) if self.replies else "ok"
                if reply == "garbage":
                    connection.sendall(b"SURELY NOT HTTP\r\n\r\n")
                elif reply == "ok":
                    connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")

    def close(self) -> None:
        self.socket.close()


def test_a_reply_that_is_not_http_or_a_closed_connection_is_retried_and_said_once():
    raw = RawServer(["garbage", "garbage", "close", "close", "ok"])
    try:
        hooks, said = sender(raw.url, "json", attempts=2, pauses=(0.01,))
        hooks.send(PAYLOAD)
        wait_until(lambda: len(said) == 1, "the first failure")
        hooks.send(PAYLOAD)
        wait_until(lambda: len(said) == 2, "the second failure")
        hooks.send(PAYLOAD)  # the thread is alive: this one is delivered
        wait_until(lambda: hooks.delivered == 1, "the delivery")
        hooks.close()
    finally:
        raw.close()
    assert raw.requests == 5
    assert said[0] == (
        "webhook http://127.0.0.1/… failed (bad reply: BadStatusLine; 2 tries, 10 s each); "
        "the alert was not delivered (said once; later failures of this kind are only counted)"
    )
    assert "Remote end closed connection without response; 2 tries" in said[1]
    assert said[2] == "webhook http://127.0.0.1/… works again (after 2 failures)"


def test_the_sender_thread_survives_any_exception(server):
    hooks, said = sender(server.url, "slack")
    hooks.send({"event": "finding"})  # no level, no run: building the message raises KeyError
    hooks.send({"event": "finding"})
    hooks.send(PAYLOAD)
    wait_until(lambda: hooks.delivered == 1, "the next alert")
    hooks.close()
    assert said == ["webhook http://127.0.0.1/… failed (KeyError: 'level'); the alert was not delivered "
                    "(said once; later failures of this kind are only counted)",
                    "webhook http://127.0.0.1/… works again (after 2 failures)"]  # fmt: skip
    assert len(server.requests) == 1


def test_two_webhooks_on_one_host_are_told_apart(server):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{probe.getsockname()[1]}/x"
    said: list[str] = []
    hooks = WebhookSender([Webhook(down, "json"), Webhook(server.url, "json")], Problems(said.append),
                          attempts=1)  # fmt: skip
    hooks.send(PAYLOAD)
    wait_until(lambda: hooks.delivered == 1 and said, "one delivery, one failure")
    hooks.close()
    assert said == [
        "webhook http://127.0.0.1/… (--webhook #1) failed (Connection refused; 1 try, 10 s); the alert was "
        "not delivered (said once; later failures of this kind are only counted)"
    ]
