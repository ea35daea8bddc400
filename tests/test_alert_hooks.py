"""Hook commands: payload on stdin, asynchronous, stopped at the timeout, failures said once."""

from __future__ import annotations

import json
import os
import sys

from live_helpers import records, wait_until

from rltop.alerts.hooks import CommandRunner
from rltop.alerts.problems import Problems


class Said:
    """A thread-safe list of reports."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, line: str) -> None:
        self.lines.append(line)


def runner(timeout: float = 30.0, **kwargs) -> tuple[CommandRunner, Said]:
    said = Said()
    return CommandRunner("--on-alert command", timeout, Problems(said), **kwargs), said


def test_payload_on_stdin_and_environment(tmp_path):
    hooks, said = runner()
    out = tmp_path / "out.jsonl"
    assert hooks.start(
        f'cat >> "{out}"; echo "$RLTOP_EVENT" > "{tmp_path}/env"',
        json.dumps({"event": "finding"}).encode() + b"\n",
        {"RLTOP_EVENT": "finding"},
    )
    wait_until(lambda: (tmp_path / "env").exists() and hooks.running == 0, "the hook")
    assert records(out) == [{"event": "finding"}]
    assert (tmp_path / "env").read_text() == "finding\n"
    assert said.lines == []


def test_a_slow_hook_does_not_hold_the_next_one(tmp_path):
    hooks, _said = runner()
    first = tmp_path / "first"
    assert hooks.start(f'touch "{first}.started"; sleep 10; touch "{first}.done"')
    # The first is sleeping (a loaded machine may take a while to start its shell) ...
    wait_until(lambda: (tmp_path / "first.started").exists(), "the first hook to start")
    assert hooks.start(f'touch "{tmp_path}/second"')  # ... and this returns at once: nothing waits for it
    wait_until(lambda: (tmp_path / "second").exists(), "the second hook")
    assert not (tmp_path / "first.done").exists()
    hooks.close(grace=0.1)  # the sleeping one is stopped
    assert hooks.running == 0 and not (tmp_path / "first.done").exists()


def test_timeout_stops_the_whole_process_group(tmp_path):
    hooks, said = runner(timeout=0.5)
    pid_file = tmp_path / "child.pid"
    hooks.start(f'sleep 300 & echo $! > "{pid_file}"; wait')
    wait_until(lambda: hooks.running == 0, "the timeout")
    assert len(said.lines) == 1 and "ran longer than 0.5 s and was stopped" in said.lines[0]
    child = int(pid_file.read_text())
    wait_until(lambda: not _alive(child), "the hook's child to be gone", timeout=10)


def test_failures_are_said_once_per_kind_then_counted(tmp_path):
    problems_said = Said()
    problems = Problems(problems_said)
    hooks = CommandRunner("--on-alert command", 30.0, problems)
    for _ in range(3):
        hooks.start("echo 'no such bucket' >&2; exit 3")
        wait_until(lambda: hooks.running == 0, "the hook")
    hooks.start("exit 4")
    wait_until(lambda: hooks.running == 0, "the hook")
    assert problems_said.lines == [
        "--on-alert command exited with status 3: no such bucket (said once; later failures of this kind "
        "are only counted)",
        "--on-alert command exited with status 4 (said once; later failures of this kind are only counted)",
    ]
    hooks.start("true")
    wait_until(lambda: hooks.running == 0, "the hook")
    assert problems_said.lines[-1] == "--on-alert command works again (after 4 failures)"
    assert problems.summary() == ["--on-alert command failed 4 times in all"]


def test_a_command_that_cannot_start_and_too_many_at_once(tmp_path):
    hooks, said = runner()
    hooks.start([str(tmp_path / "missing-binary")])
    wait_until(lambda: hooks.running == 0, "the attempt")
    assert said.lines and "could not start: No such file or directory" in said.lines[0]
    busy, said = runner(max_running=1)
    assert busy.start("sleep 10")
    assert not busy.start("true")
    assert "1 calls are still running; an alert was not passed on" in said.lines[0]
    busy.close(grace=0.1)
    assert not busy.start("true")  # closed: nothing more starts


def test_hook_output_never_reaches_our_stdout(tmp_path, capfd):
    hooks, _said = runner()
    hooks.start(f"echo to-stdout; {sys.executable} -c 'print(1)'")
    wait_until(lambda: hooks.running == 0, "the hook")
    assert "to-stdout" not in capfd.readouterr().out


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill 0; it has left the process table once its parent reaped it.
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False
