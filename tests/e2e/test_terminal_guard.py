"""A terminal that goes away without SIGHUP ends the dashboard (it used to spin a core forever).

The terminal is a pseudo-terminal whose master side the test closes, as sshd does when a session
drops; the dashboard runs in its own session with SIGHUP ignored, so no signal ever arrives.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import signal
import struct
import subprocess
import sys
import termios
import threading
import time

import pytest
from helpers.paths import REPO

from rltop.ui import terminal_guard
from rltop.ui.terminal_guard import TerminalGuard, terminal_gone

ROOT = REPO  # the repository root
FIXTURE = ROOT / "tests" / "fixtures" / "trl" / "ppo_unstable"


def wait_for(condition, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


@pytest.fixture
def terminal():
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    handles = {"master": master, "slave": slave}
    yield handles
    for fd in handles.values():
        with contextlib.suppress(OSError):
            os.close(fd)


def test_a_live_terminal_is_not_gone(terminal):
    assert terminal_gone(terminal["slave"], terminal["slave"]) is None
    os.write(terminal["master"], b"q")  # pending input is not a hang-up
    assert terminal_gone(terminal["slave"], terminal["slave"]) is None


def test_a_closed_master_is_a_hang_up(terminal):
    os.close(terminal.pop("master"))
    reason = terminal_gone(terminal["slave"], terminal["slave"])
    assert reason is not None and "hung up" in reason
    with pytest.raises(OSError):  # what Textual's writes get from now on
        os.write(terminal["slave"], b"x")


def test_a_failing_write_is_enough(terminal, monkeypatch):
    def broken(fd, data):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(terminal_guard.os, "write", broken)
    reason = terminal_gone(terminal["slave"], terminal["slave"])
    assert reason == "writing to the terminal fails (Input/output error)"


def test_the_guard_asks_the_app_to_exit(terminal):
    asked = threading.Event()
    guard = TerminalGuard(asked.set, terminal["slave"], os.dup(terminal["slave"]))
    guard.start()
    os.close(terminal.pop("master"))
    wait_for(asked.is_set, "the exit request")
    guard.stop()
    assert guard.lost and "hung up" in guard.reason


def test_a_hang_up_wakes_the_guard_at_once_not_at_its_next_check(terminal, monkeypatch):
    """The guard sleeps on the terminal's hang-up: with its periodic check an hour away, closing
    the master still asks the app to exit (it used to be noticed at the next check only)."""
    monkeypatch.setattr(terminal_guard, "CHECK_EVERY", 3600.0)
    asked = threading.Event()
    guard = TerminalGuard(asked.set, terminal["slave"], os.dup(terminal["slave"]))
    guard.start()
    os.write(terminal["master"], b"typing does not wake it")
    os.close(terminal.pop("master"))
    wait_for(asked.is_set, "the exit request")
    guard.stop()
    assert "hung up" in guard.reason


def test_an_app_that_cannot_exit_is_ended(terminal, monkeypatch):
    monkeypatch.setattr(terminal_guard, "FORCE_EXIT_AFTER", 0.2)
    ended: list[int] = []
    never = threading.Event()
    guard = TerminalGuard(never.wait, terminal["slave"], os.dup(terminal["slave"]), force_exit=ended.append)
    guard.start()
    os.close(terminal.pop("master"))
    wait_for(lambda: ended, "the process to be ended")
    assert ended == [0]
    never.set()


def test_dashboard_exits_when_its_terminal_goes_away(terminal):
    # stderr is where Textual draws; a pipe here lets the test see the frames and the final note.
    dashboard = subprocess.Popen(
        [sys.executable, "-m", "rltop", str(FIXTURE)],
        stdin=terminal["slave"], stdout=terminal["slave"], stderr=subprocess.PIPE, cwd=ROOT,
        env={**os.environ, "TERM": "xterm-256color", "PYTHONPATH": str(ROOT)},
        start_new_session=True,  # no controlling terminal: closing the master sends no SIGHUP
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN),
    )  # fmt: skip
    os.close(terminal.pop("slave"))
    drawn = bytearray()

    def read_all() -> None:
        while chunk := dashboard.stderr.read1(65536):
            drawn.extend(chunk)

    reader = threading.Thread(target=read_all, daemon=True)
    reader.start()
    try:
        wait_for(lambda: b"palette" in drawn, "the first frame")
        os.close(terminal.pop("master"))  # the SSH session drops; the pty goes away
        dashboard.wait(timeout=30)
    finally:
        if dashboard.poll() is None:
            dashboard.kill()
            dashboard.wait()
    reader.join(timeout=10)
    assert dashboard.returncode == 0
    note = b"rltop: the terminal hung up (reads return end of file); the dashboard was closed\n"
    assert bytes(drawn).endswith(note) and bytes(drawn).count(note) == 1
