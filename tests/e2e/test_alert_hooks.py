"""Hook commands: payload on stdin, asynchronous, stopped at the timeout, failures said once."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from helpers.live import records, wait_until

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


def test_a_command_that_cannot_start_is_said_and_the_next_calls_still_run(tmp_path):
    hooks, said = runner()
    hooks.start([str(tmp_path / "missing-binary")], run="a")
    hooks.start(["/bin/sh", "-c", "exit 0", "\x00"], run="a")  # a NUL in an argument: Popen refuses it
    hooks.start(f'touch "{tmp_path}/b"', run="b")
    hooks.start(f'touch "{tmp_path}/a"', run="a")
    wait_until(lambda: hooks.running == 0, "the calls")
    assert (tmp_path / "a").exists() and (tmp_path / "b").exists()
    # Run b's call may end before or after run a's failures: only the first line has its place.
    assert said.lines[0] == (
        "--on-alert command could not start (run a): No such file or directory (said once; later "
        "failures of this kind are only counted)"
    )
    assert [line for line in said.lines if "could not start" in line] == said.lines[:1]
    assert hooks.problems.summary() == ["--on-alert command failed 2 times in all"]  # the NUL one counted
    hooks.close(grace=0.1)
    assert not hooks.start("true")  # closed: nothing more starts


def blocking(log: Path, name: str, release: Path | None = None) -> str:
    """A command that writes ``name`` to ``log`` when it starts, then waits for ``release`` to exist."""
    wait = f'while [ ! -e "{release}" ]; do sleep 0.02; done' if release is not None else "true"
    return f'echo {name} >> "{log}"; {wait}'


def started(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


def test_a_run_is_called_one_at_a_time_in_order_and_holds_no_other_run(tmp_path):
    hooks, said = runner()
    log, release = tmp_path / "log", tmp_path / "release"
    hooks.start(blocking(log, "a1", release), run="a")
    wait_until(lambda: started(log) == ["a1"], "the first call of run a")
    hooks.start(blocking(log, "a2"), run="a")
    hooks.start(blocking(log, "a3"), run="a")
    hooks.start(blocking(log, "b1"), run="b")
    wait_until(lambda: "b1" in started(log), "run b's call, while run a's first one hangs")
    assert hooks.waiting == 2 and "a2" not in started(log)  # run a's next calls wait for its first
    release.touch()
    wait_until(lambda: hooks.running == 0, "run a's calls")
    assert [name for name in started(log) if name.startswith("a")] == ["a1", "a2", "a3"]
    assert said.lines == []


def test_the_slots_go_round_the_runs(tmp_path):
    """One slot: when run a's call ends, run b (waiting longest) goes before a's own next call."""
    hooks, _said = runner(max_running=1)
    log, release = tmp_path / "log", tmp_path / "release"
    hooks.start(blocking(log, "a1", release), run="a")
    wait_until(lambda: started(log) == ["a1"], "the first call")
    for name, run in (("a2", "a"), ("a3", "a"), ("b1", "b"), ("c1", "c")):
        hooks.start(blocking(log, name), run=run)
    assert hooks.waiting == 4 and started(log) == ["a1"]  # the one slot is taken
    release.touch()
    wait_until(lambda: hooks.running == 0, "every call")
    assert started(log) == ["a1", "b1", "c1", "a2", "a3"]


def test_a_full_queue_drops_the_oldest_waiting_alert_said_once(tmp_path):
    hooks, said = runner(queue_per_run=2)
    log, release = tmp_path / "log", tmp_path / "release"
    hooks.start(blocking(log, "a1", release), run="a")
    wait_until(lambda: started(log) == ["a1"], "the first call")
    for number in range(2, 6):
        assert hooks.start(blocking(log, f"a{number}"), run="a")
    assert hooks.dropped == 2 and hooks.waiting == 2
    assert said.lines == [
        "--on-alert command: 2 alerts of run a were waiting for its previous call to end; the oldest was "
        "dropped (said once; later failures of this kind are only counted)"
    ]
    release.touch()
    wait_until(lambda: hooks.running == 0, "the calls left")
    assert started(log) == ["a1", "a4", "a5"]  # the newest say where the run is now


def test_a_timeout_frees_the_run_for_its_next_call(tmp_path):
    hooks, said = runner(timeout=0.5)
    log = tmp_path / "log"
    hooks.start(blocking(log, "a1", tmp_path / "never"), run="a")
    hooks.start(blocking(log, "a2"), run="a")
    wait_until(lambda: hooks.running == 0, "the timeout, then the next call")
    # (On a loaded machine the first shell may be stopped before it wrote its name: only a2 must follow.)
    assert started(log)[-1:] == ["a2"] and started(log).count("a2") == 1
    assert said.lines == [
        "--on-alert command ran longer than 0.5 s (run a) and was stopped (--hook-timeout SECONDS) (said "
        "once; later failures of this kind are only counted)",
        "--on-alert command works again (after 1 failure)",
    ]


def test_close_stops_hung_calls_and_says_what_never_ran(tmp_path):
    hooks, said = runner(max_running=2)
    log = tmp_path / "log"
    for run in ("a", "b"):
        hooks.start(blocking(log, f"{run}1", tmp_path / "never"), run=run)
    wait_until(lambda: sorted(started(log)) == ["a1", "b1"], "both calls")
    hooks.start(blocking(log, "a2"), run="a")
    hooks.start(blocking(log, "c1"), run="c")
    hooks.close(grace=0.1)
    assert hooks.dropped == 2 and sorted(started(log)) == ["a1", "b1"]
    assert "--on-alert command: 2 alerts still waiting when rltop ended were not passed on" in said.lines[0]
    wait_until(lambda: hooks.running == 0, "the stopped calls to be over")
    wait_until(lambda: any("still running when rltop ended, and was stopped" in line for line in said.lines),
               "the report of the stopped calls")  # fmt: skip


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


def test_a_report_that_cannot_be_made_stops_nothing(tmp_path):
    """Under a daemon, stderr may be gone: the failure cannot be said, the run's next call still runs."""

    def stderr_gone(_line: str) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    hooks = CommandRunner("--on-alert command", 30.0, Problems(stderr_gone))
    hooks.start("exit 3", run="a")
    hooks.start(f'touch "{tmp_path}/next"', run="a")
    wait_until(lambda: hooks.running == 0, "both calls")
    assert (tmp_path / "next").exists() and hooks.problems.summary() == []  # one failure: no summary line


def test_works_again_follows_a_said_failure_only():
    """A hook that times out on one run's alerts and works on the others says "works again" once, not
    after every timeout; a new kind of failure is said, and its end too."""
    said: list[str] = []
    problems = Problems(said.append)
    for _ in range(3):
        problems.failed("hook", "timeout", "hook timed out")
        problems.worked("hook")
    problems.failed("hook", "exit 1", "hook exited with status 1")
    problems.worked("hook")
    once = " (said once; later failures of this kind are only counted)"
    assert said == [
        "hook timed out" + once,
        "hook works again (after 1 failure)",
        "hook exited with status 1" + once,
        "hook works again (after 4 failures)",
    ]
