"""Webhooks against a real HTTP server on 127.0.0.1: payload shapes, retries, timeouts, a server down."""

from __future__ import annotations

import email.header
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from live_helpers import wait_until

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


class Server:
    """A local HTTP server recording each request; ``replies`` says what to answer, in turn."""

    def __init__(self, replies: list[int] | None = None, hang: threading.Event | None = None) -> None:
        self.requests: list[dict] = []
        self.replies = list(replies or [])
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if hang is not None:
                    hang.wait(30)  # never answers in time
                outer.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                code = outer.replies.pop(0) if outer.replies else 200
                self.send_response(code)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


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
