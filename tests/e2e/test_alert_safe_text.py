"""Names from files reach no alert channel raw: the payload, the hook's stdin and RLTOP_* variables,
Slack, Discord, ntfy (body and Title header), raw JSON and the desktop notification.

A run folder may be bytes that are not UTF-8, hold ESC sequences, C1 controls, a right-to-left
override, bidi isolates, zero-width and tag characters, a NUL (in a tag) or a line separator. Every
channel shows them as escapes; the exact bytes of the directory stay available to a script.
"""

from __future__ import annotations

import base64
import email.header
import json
import os
import unicodedata
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.live import wait_until

from rltop.alerts.dispatch import Alerts
from rltop.alerts.events import FINDING, AlertEvent
from rltop.alerts.payload import event_environment, event_line, event_payload, event_text, headline
from rltop.alerts.settings import AlertSettings, Webhook
from rltop.alerts.webhooks import TITLE_LIMIT, webhook_request
from rltop.health.engine import HealthEngine
from rltop.health.findings import Finding, Level
from rltop.model.names import visible
from rltop.model.run import Run, Store

# Every kind of character a name must not bring into a message: ESC sequences (OSC title, CSI colour),
# BEL, a C1 CSI, DEL, NUL, RLO and an isolate pair, zero-width space and joiner, a tag character, the
# line separator, a line break, and two bytes that are not UTF-8 (lone surrogates once decoded).
HOSTILE = (
    "\x1b]0;pwned\x07 \x1b[31m \x9b2J \x7f \x00 \u202eevil\u202c \u2066iso\u2069 \u200bzw\u200d "
    "\U000e0041 \u2028 line\nbreak " + os.fsdecode(b"\xff\xfe")
)
DIRECTORY_NAME = b"run-\xff\xfe\x1b[31m\xe2\x80\xae\xe2\x81\xa6\xc2\x9b"  # non-UTF-8, ESC, RLO, LRI, CSI
HOST = b"node\x1b]0;x\x07\xe2\x80\xae"  # a host name in an event file's name
SAFE_ESCAPES = ("\\x1b]0;pwned\\x07", "\\x1b[31m", "\\x9b2J", "\\x7f", "\\x00", "\\u202eevil\\u202c",
                "\\u2066iso\\u2069", "\\u200bzw\\u200d", "\\U000e0041", "\\u2028", "line\\nbreak",
                "\\xff\\xfe")  # fmt: skip


def unsafe(text: str, line_breaks: int = 0) -> list[str]:
    """The characters of ``text`` a terminal, a chat client or a notification would act on or hide
    (``line_breaks`` newlines are the channel's own)."""
    found = [c for c in text if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp")]
    assert found.count("\n") >= line_breaks or not line_breaks, f"expected {line_breaks} line breaks"
    for _ in range(line_breaks):
        found.remove("\n")
    return found


def strings(value: Any) -> list[str]:
    """Every string in a JSON-like value (keys included)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [text for item in value for text in strings(item)]
    if isinstance(value, dict):
        return [text for key, item in value.items() for text in [key, *strings(item)]]
    return []


@pytest.fixture
def hostile_run(tmp_path: Path) -> tuple[Run, bytes]:
    """A run in a folder whose name is all of the above, with an event file naming a hostile host."""
    directory = os.path.join(os.fsencode(tmp_path), DIRECTORY_NAME)
    os.makedirs(directory)
    open(os.path.join(directory, b"events.out.tfevents.1900000000." + HOST + b".4242.0"), "wb").close()
    store = Store()
    run = store.run(os.fsdecode(DIRECTORY_NAME) + HOSTILE, os.fsdecode(directory))
    values = np.ones(20)
    values[-1] = np.nan
    run.add_points("train/loss" + HOSTILE, np.arange(1, 21), 1.8e9 + np.arange(20.0), values)
    return run, directory


def hostile_payload(run: Run) -> dict[str, Any]:
    finding = Finding(
        Level.CRITICAL, "non_finite", run.name, "train/loss" + HOSTILE, 20, float("nan"),
        f"train/loss{HOSTILE} is NaN at step 20.", f"Look at {HOSTILE}.", first_step=20, last_step=20,
        active=True, title=f"non-finite {HOSTILE}",
    )  # fmt: skip
    event = AlertEvent(FINDING, run.name, Level.CRITICAL, finding, tags=(finding.tag,))
    return event_payload(event, run, display=f"shown {HOSTILE}")


def test_visible_is_idempotent_and_total():
    """The payload is escaped once; channels and logs may escape it again without changing it."""
    once = visible(HOSTILE)
    assert visible(once) == once and not unsafe(once)
    for escape in SAFE_ESCAPES:
        assert escape in once


def test_every_text_of_the_payload_is_display_safe(hostile_run):
    run, _directory = hostile_run
    payload = hostile_payload(run)
    for text in strings(payload):
        assert not unsafe(text), text
    json.dumps(payload, ensure_ascii=False, allow_nan=False).encode("utf-8")  # strict: no surrogate
    for key in ("run", "display_name", "tag", "title", "message", "advice"):
        for escape in SAFE_ESCAPES:
            assert escape in payload[key], (key, escape)
    assert payload["tags"] == [payload["tag"]]
    assert payload["directory"].endswith("/run-\\xff\\xfe\\x1b[31m\\u202e\\u2066\\x9b")
    assert payload["writer"]["host"] == "node\\x1b]0;x\\x07\\u202e" and payload["writer"]["pid"] == 4242
    assert "\\x1b" in payload["writer"]["file"]


def test_the_exact_directory_is_kept_for_scripts(hostile_run):
    run, directory = hostile_run
    payload = hostile_payload(run)
    assert base64.b64decode(payload["directory_b64"]) == directory
    env = event_environment(payload)
    assert os.fsencode(env["RLTOP_DIRECTORY_RAW"]) == directory
    for key, value in env.items():
        if key != "RLTOP_DIRECTORY_RAW":
            assert not unsafe(value), key
            value.encode("utf-8")  # no surrogate: a plain UTF-8 value
    assert env["RLTOP_DIRECTORY"] == payload["directory"] and env["RLTOP_RUN"] == payload["run"]
    assert (
        event_environment({**payload, "directory": None, "directory_b64": None})["RLTOP_DIRECTORY_RAW"] == ""
    )


def test_the_texts_people_read(hostile_run):
    payload = hostile_payload(hostile_run[0])
    assert not unsafe(headline(payload)) and not unsafe(event_line(payload))
    assert not unsafe(event_text(payload), line_breaks=1)  # the line, then the advice: our own break
    assert "\\u202eevil" in headline(payload) and "\\xff\\xfe" in event_line(payload)


@pytest.mark.parametrize("style", ["slack", "discord", "json"])
def test_json_webhooks(hostile_run, style):
    payload = hostile_payload(hostile_run[0])
    request = webhook_request(Webhook("https://example.org/hook", style), payload)
    message = json.loads(request.data.decode("utf-8"))  # strict UTF-8
    texts = strings(message)
    assert texts and all(not unsafe(text, line_breaks=text.count("\n") and 1) for text in texts)
    if style == "json":
        assert message == json.loads(json.dumps(payload))
    else:
        text = message["text" if style == "slack" else "content"]
        assert "\\u202eevil" in text and "\\x1b]0;pwned\\x07" in text and "\\xff\\xfe" in text


def test_ntfy_body_and_title_header(hostile_run):
    payload = hostile_payload(hostile_run[0])
    request = webhook_request(Webhook("https://ntfy.sh/topic", "ntfy"), payload)
    body = request.data.decode("utf-8")
    assert not unsafe(body, line_breaks=1) and "\\u202eevil" in body
    title = request.headers["Title"]
    title.encode("ascii")  # a header line: ASCII, non-ASCII as an RFC 2047 word
    ((decoded, charset),) = email.header.decode_header(title)
    shown = decoded.decode(charset) if isinstance(decoded, bytes) else decoded
    assert not unsafe(shown) and shown.startswith("rltop: CRITICAL shown \\x1b]0;pwned\\x07")
    assert len(shown) <= TITLE_LIMIT


def test_hook_stdin_environment_and_desktop_end_to_end(hostile_run, tmp_path, monkeypatch):
    """Through `Alerts`, as watch and the dashboard use it: a real hook and a notify-send on PATH."""
    run, directory = hostile_run
    bin_dir, out = tmp_path / "bin", tmp_path / "out"
    bin_dir.mkdir()
    out.mkdir()
    notify = bin_dir / "notify-send"  # its arguments, NUL-separated, as a notification server gets them
    notify.write_text(f'#!/bin/sh\nprintf \'%s\\0\' "$@" > "{out}/notify.bin"\n')
    notify.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    hook = (
        f'cat > "{out}/stdin.json"; printf %s "$RLTOP_DIRECTORY_RAW" > "{out}/raw.bin"; '
        f'printf %s "$RLTOP_DISPLAY_NAME" > "{out}/display.bin"; '
        f'printf %s "$RLTOP_MESSAGE" > "{out}/message.bin"'
    )
    said: list[str] = []
    alerts = Alerts(AlertSettings(command=hook, desktop=True), said.append)
    (event,) = alerts.observe(run, HealthEngine().assess(run))
    assert event.kind == FINDING
    wait_until(lambda: alerts.running == 0, "the hook and notify-send")
    alerts.close()
    assert said == []
    stdin = (out / "stdin.json").read_bytes().decode("utf-8")  # strict
    payload = json.loads(stdin)
    assert not [text for text in strings(payload) if unsafe(text)]
    assert base64.b64decode(payload["directory_b64"]) == directory
    assert (out / "raw.bin").read_bytes() == directory
    for name in ("display.bin", "message.bin"):
        shown = (out / name).read_bytes().decode("utf-8")
        assert not unsafe(shown) and "\\u202eevil" in shown and "\\xff\\xfe" in shown
    args = (out / "notify.bin").read_bytes().split(b"\0")[:-1]
    assert args[:2] == [b"--app-name=rltop", b"--urgency=critical"]
    title, body = (arg.decode("utf-8") for arg in args[2:])
    assert not unsafe(title) and not unsafe(body, line_breaks=1)
    assert "\\u202eevil" in title and "\\x1b]0;pwned\\x07" in body
