"""Helpers for tests that run rltop beside a live writer: wait for a state (never a duration), read a
pipe, write a hook script."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from helpers.paths import REPO

HOOK = """#!/bin/sh
# Appends the payload (stdin) to a file, one JSON object a line, and the RLTOP_* facts to another.
cat >> "{calls}"
echo "$RLTOP_EVENT $RLTOP_RULE $RLTOP_LEVEL $RLTOP_RUN" >> "{env}"
"""


def wait_until(condition: Callable[[], object], what: str, timeout: float = 60.0) -> None:
    """Poll ``condition`` until it is true; fail with ``what`` after ``timeout`` seconds (a hang)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def write_hook(directory: Path, body: str | None = None) -> tuple[Path, Path, Path]:
    """An executable hook script appending to ``calls.jsonl`` and ``env.txt``: (script, calls, env)."""
    calls, env = directory / "calls.jsonl", directory / "env.txt"
    script = directory / "hook.sh"
    script.write_text(body or HOOK.format(calls=calls, env=env))
    script.chmod(0o755)
    return script, calls, env


def records(path: Path) -> list[dict]:
    """The JSON objects of the complete lines of a JSON-lines file (none when it does not exist yet)."""
    if not path.exists():
        return []
    text = path.read_text()
    complete = text[: text.rfind("\n") + 1]  # a line still being appended is not a record yet
    return [json.loads(line) for line in complete.splitlines() if line.strip()]


def end_all(*processes) -> None:
    """Kill whichever of ``processes`` (Popen or None) still runs, and reap it."""
    for process in processes:
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()


class Lines:
    """Collects the lines of a pipe on a thread."""

    def __init__(self, stream) -> None:
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream) -> None:
        for line in stream:
            self.lines.append(line.rstrip("\n"))

    def wait(self, condition: Callable[[list[str]], bool], what: str, timeout: float = 30.0) -> None:
        """Wait until ``condition(lines)`` holds."""
        wait_until(lambda: condition(self.lines), f"{what}; got {self.lines[-5:]}", timeout)

    def having(self, needle: str) -> list[str]:
        """The lines that contain ``needle``."""
        return [line for line in self.lines if needle in line]

    def join(self, timeout: float = 10.0) -> None:
        """Wait for the end of the stream."""
        self._thread.join(timeout)


def start_tail(*args: str) -> tuple[subprocess.Popen, Lines, Lines]:
    """``rltop tail ARGS`` from the checkout, with its stdout and stderr collected line by line."""
    tail = subprocess.Popen(
        [sys.executable, "-m", "rltop", "tail", *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return tail, Lines(tail.stdout), Lines(tail.stderr)


class HttpServer:
    """An HTTP server on 127.0.0.1 recording each POST; ``replies`` says what to answer, in turn
    (``otherwise`` once they run out); with ``hang``, it answers nothing until that event is set."""

    def __init__(
        self, replies: list[int] | None = None, hang: threading.Event | None = None, otherwise: int = 200
    ) -> None:
        self.requests: list[dict] = []
        self.arrived = 0  # POSTs read, answered or not
        self.replies = list(replies or [])
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.arrived += 1
                if hang is not None:
                    hang.wait(30)  # never answers in time
                outer.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                code = outer.replies.pop(0) if outer.replies else otherwise
                self.send_response(code)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        # close() waits for the serving loop to look up: every 20 ms, not the default half second.
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        """Stop serving and free the port."""
        self.httpd.shutdown()
        self.httpd.server_close()
