"""``rltop watch`` end to end: a real writer process, ``python -m rltop watch`` beside it, a hook script.

The writer is rltop's own event writer (the torch SummaryWriter format, pid in the file name) in a
child process the test drives line by line, so every phase (healthy, NaN, back to normal, finished)
is written only once watch has seen the previous one. Every wait is for a state: a line, a record.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.live import HttpServer, Lines, records, wait_until, write_hook
from helpers.paths import REPO

ROOT = REPO  # the repository root
PYTHON = sys.executable

WRITER = r"""
import sys
from rltop.ingest.sources.tfevents.tfrecord.writer import EventWriter

writer = EventWriter(sys.argv[1])
step = 0
for line in sys.stdin:
    command, *args = line.split()
    if command == "ok":  # N healthy steps
        for _ in range(int(args[0])):
            step += 1
            writer.add_scalar("train/loss", 1.0 + step / 100, step)
    elif command == "nan":  # N steps where the loss is NaN
        for _ in range(int(args[0])):
            step += 1
            writer.add_scalar("train/loss", float("nan"), step)
    elif command == "finish":  # transformers' end-of-training summary
        for tag, value in (("train/train_runtime", 12.5), ("train/train_loss", 1.1),
                           ("train/train_steps_per_second", 2.0)):
            writer.add_scalar(tag, value, step)
    writer.flush()
    print("written", step, flush=True)
"""


class Writer:
    """The training process: writes what it is told, one command a line."""

    def __init__(self, run_dir: Path) -> None:
        self.process = subprocess.Popen(
            [PYTHON, "-c", WRITER, str(run_dir)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )

    def do(self, command: str) -> None:
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        assert self.process.stdout.readline().startswith("written")

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=10)


class Watch:
    """``python -m rltop watch`` with no terminal at all (its own session, stdin from /dev/null)."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [PYTHON, "-m", "rltop", "watch", *args],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self.out = Lines(self.process.stdout)
        self.err = Lines(self.process.stderr)

    def wait_err(self, needle: str) -> None:
        wait_until(lambda: self.err.having(needle), f"{needle!r} on stderr (got {self.err.lines[-5:]})")

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=30)
        self.out.join()
        self.err.join()
        return code

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def strict_json(line: str) -> dict:
    """json.loads that refuses NaN/Infinity (which Python's parser accepts, and JSON does not)."""

    def refuse(token: str) -> None:
        raise ValueError(f"not JSON: {token}")

    return json.loads(line, parse_constant=refuse)


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    root = tmp_path / "logs"
    root.mkdir()
    return root


def test_one_call_per_episode_recovery_and_finish(tmp_path, logs):
    hook, calls, env = write_hook(tmp_path)
    watch = Watch(str(logs), "--on-alert", str(hook), "--format", "json")
    writer = None
    try:
        watch.wait_err("waiting for them")  # started before training: it waits
        writer = Writer(logs / "grpo")
        writer.do("ok 5")
        watch.wait_err("new run grpo")
        writer.do("nan 1")
        wait_until(lambda: len(records(calls)) == 1, "the first finding")
        writer.do("nan 2")  # the same episode: no new call
        writer.do("ok 3")
        wait_until(lambda: len(records(calls)) == 2, "the recovery")
        writer.do("nan 1")
        wait_until(lambda: len(records(calls)) == 3, "the second episode")
        writer.do("ok 3")
        wait_until(lambda: len(records(calls)) == 4, "the second recovery")
        writer.do("finish")
        wait_until(lambda: len(records(calls)) == 5, "the finish")
        # The hook writes its stdin first, then its RLTOP_* line: wait for the last one too.
        wait_until(lambda: len(env.read_text().splitlines()) == 5, "the hook's last line")
        lines = calls.read_text().splitlines()
        payloads = [strict_json(line) for line in lines]
        assert [(p["event"], p["rule"], p["first_step"]) for p in payloads] == [
            ("finding", "non_finite", 6),
            ("recovery", "non_finite", 6),
            ("finding", "non_finite", 12),  # the second stretch of NaN begins at step 12
            ("recovery", "non_finite", 12),
            ("finish", None, None),
        ]
        first = payloads[0]
        assert (first["level"], first["tag"], first["step"]) == ("critical", "train/loss", 6)
        assert first["value"] == "nan"
        assert first["run"] == first["display_name"] == "grpo"
        assert first["directory"] == str(logs / "grpo") and first["initial"] is False
        assert first["writer"]["pid"] == writer.process.pid and first["writer"]["same_host"] is True
        assert "NaN" in first["message"] and first["advice"]
        assert payloads[2]["step"] == 12  # the second episode's NaN
        assert payloads[4]["message"] == "finished at step 15; final verdict critical (1 finding)"
        # Hooks run side by side (a slow one holds no other): each writes its stdin, then its RLTOP_*
        # line, so a call's line can land after the next call's. Compare them as a multiset.
        assert sorted(env.read_text().splitlines()) == sorted(
            [
                "finding non_finite critical grpo",
                "recovery non_finite critical grpo",
                "finding non_finite critical grpo",
                "recovery non_finite critical grpo",
                "finish  critical grpo",
            ]
        )
        wait_until(lambda: len(watch.out.lines) >= 5, "the JSON lines on stdout")
        printed = [strict_json(line) for line in watch.out.lines]
        assert [p["event"] for p in printed] == [p["event"] for p in payloads]
    finally:
        if writer is not None:
            writer.close()
        code = watch.stop()
        watch.kill()
    assert code == 0, watch.err.lines
    assert not any("Traceback" in line for line in watch.err.lines)
    # Nothing of ours in the log directory: only the writer's event file.
    assert [p.name for p in logs.rglob("*") if p.is_file()] == [
        p.name for p in (logs / "grpo").iterdir() if p.name.startswith("events.out.tfevents.")
    ]


SLOW_HOOK = """#!/bin/sh
cat >> "{calls}"
if [ "$RLTOP_RUN" = grpo ] && [ ! -e "{marker}.started" ]; then
    touch "{marker}.started"
    while [ ! -e "{marker}.release" ]; do sleep 0.05; done
    touch "{marker}.done"
fi
"""


def test_a_slow_hook_holds_only_its_own_runs_next_alerts(tmp_path, logs):
    """A hook still busy with one run's alert holds that run's next alerts (they follow in order) and
    nothing of any other run."""
    calls, marker = tmp_path / "calls.jsonl", tmp_path / "first"
    hook, _calls, _env = write_hook(tmp_path, SLOW_HOOK.format(calls=calls, marker=marker))
    grpo, ppo = Writer(logs / "grpo"), Writer(logs / "ppo")
    for writer in (grpo, ppo):
        writer.do("ok 5")  # on disk before watch starts: it finds the runs in its first read
    watch = Watch(str(logs), "--on-alert", str(hook), "--poll", "0.2")
    try:
        watch.wait_err("watching 2 runs")
        grpo.do("nan 1")
        wait_until(lambda: (tmp_path / "first.started").exists(), "the first (slow) hook")
        grpo.do("ok 3")
        watch.wait_err("RECOVERED grpo")  # the event happened; its call waits for the slow one
        ppo.do("nan 1")
        wait_until(lambda: any(p["run"] == "ppo" for p in records(calls)), "the other run's alert")
        assert [(p["run"], p["event"]) for p in records(calls)] == [("grpo", "finding"), ("ppo", "finding")]
        (tmp_path / "first.release").touch()
        wait_until(lambda: len(records(calls)) == 3, "the recovery, once the slow call ended")
        assert records(calls)[2]["event"] == "recovery" and records(calls)[2]["run"] == "grpo"
    finally:
        for writer in (grpo, ppo):
            writer.close()
        code = watch.stop()
        watch.kill()
    assert code == 0, watch.err.lines


ROBUST_HOOK = """#!/bin/sh
# Records the payload and the exact directory; hangs on every alert of the run called "hang".
cat >> "{calls}"
printf '%s\\n' "$RLTOP_DIRECTORY_RAW" >> "{raw}"
if [ "$RLTOP_RUN" = hang ]; then
    touch "{hung}"
    while [ ! -e "{stop}" ]; do sleep 0.1; done
fi
"""
EPISODES = ("nan 1", "ok 3", "nan 1", "ok 3", "finish")
EVENTS = ["finding", "recovery", "finding", "recovery", "finish"]


def test_odd_names_a_hanging_hook_and_a_failing_webhook_cost_no_other_alert(tmp_path, logs):
    """Issue 26: a run folder that is not UTF-8, one whose name holds RLO and ESC, a hook that hangs on
    every alert of one run and a webhook that always fails: watch goes on, every other alert reaches the
    hook and the working webhook, in order, with display-safe names and the exact directory."""
    calls, raw, hung, stop = (tmp_path / name for name in ("calls.jsonl", "raw.txt", "hung", "stop"))
    hook, _calls, _env = write_hook(tmp_path, ROBUST_HOOK.format(calls=calls, raw=raw, hung=hung, stop=stop))
    folders = {
        "plain": b"plain",
        "odd": b"run-\xff\xfe",
        "evil": b"evil\xe2\x80\xae\x1b[31m",
        "hang": b"hang",
    }
    shown = {"plain": "plain", "odd": "run-\\xff\\xfe", "evil": "evil\\u202e\\x1b[31m", "hang": "hang"}
    failing, working = HttpServer(otherwise=500), HttpServer()
    writers = {
        key: Writer(Path(os.fsdecode(os.fsencode(logs) + b"/" + name))) for key, name in folders.items()
    }
    watch = None
    try:
        for writer in writers.values():
            writer.do("ok 5")
        watch = Watch(str(logs), "--on-alert", str(hook), "--hook-timeout", "3600", "--webhook", failing.url,
                      "--webhook", working.url, "--format", "json", "--poll", "0.2")  # fmt: skip

        def told() -> dict[str, list[str]]:  # the events the working webhook got, by run
            payloads = [json.loads(request["body"]) for request in working.requests]
            return {key: [p["event"] for p in payloads if p["run"] == shown[key]] for key in folders}

        def hooked() -> dict[str, list[str]]:  # the events the hook got, by run
            return {key: [p["event"] for p in records(calls) if p["run"] == shown[key]] for key in folders}

        watch.wait_err("watching 4 runs")
        for done, episode in enumerate(EPISODES, 1):
            for writer in writers.values():
                writer.do(episode)
            wait_until(lambda n=done: all(len(events) == n for events in told().values()), f"{episode!r}")
        wait_until(lambda: all(len(hooked()[key]) == 5 for key in ("plain", "odd", "evil")), "the hook calls")
        watch.wait_err("(--webhook #1) failed (HTTP 500")
        assert watch.process.poll() is None  # still watching
    finally:
        for writer in writers.values():
            writer.close()
        code = watch.stop() if watch is not None else None
        if watch is not None:
            watch.kill()
        stop.touch()  # (ends the hanging hook's loop, should watch not have stopped it)
        failing.close()
        working.close()
    assert code == 0, watch.err.lines
    assert not any("Traceback" in line for line in watch.err.lines)
    # Every alert reached the working webhook, in order, each run's as they happened.
    assert told() == {key: EVENTS for key in folders}
    # The hook got every alert of the other runs, in order; the hanging run held only its own.
    assert hooked() == {"plain": EVENTS, "odd": EVENTS, "evil": EVENTS, "hang": ["finding"]}
    assert hung.exists()
    # Names are display-safe everywhere; the exact directory is there for scripts.
    payloads = [json.loads(r["body"].decode("utf-8")) for r in working.requests]
    odd = next(p for p in payloads if p["run"] == shown["odd"])
    assert odd["display_name"] == shown["odd"] and odd["directory"].endswith("/run-\\xff\\xfe")
    assert base64.b64decode(odd["directory_b64"]) == os.fsencode(logs) + b"/run-\xff\xfe"
    assert {line for line in raw.read_bytes().splitlines()} == {
        os.fsencode(logs) + b"/" + folders[key] for key in folders
    }
    printed = [strict_json(line) for line in watch.out.lines]
    assert len(printed) == 20 and all(line.isascii() for line in watch.out.lines)
    # The failing webhook was said once; what the hanging run left waiting was said at the end.
    assert len(watch.err.having("(--webhook #1) failed (HTTP 500")) == 1
    assert watch.err.having("--on-alert command: 4 alerts still waiting when rltop ended were not passed on")
    assert [line for line in watch.err.having("(--webhook #2)") if "watching" not in line] == []  # all went
    # The summary counts the alerts each recipient lost: those that failed and those left waiting.
    summary = [line for line in watch.err.lines if line.endswith(" times in all")]
    # 4 never started, and the hung call stopped (counted if its worker said so before the summary).
    assert {
        "rltop: --on-alert command failed 5 times in all",
        "rltop: --on-alert command failed 4 times in all",
    } & set(summary)
    (webhook,) = [line for line in summary if "(--webhook" in line]  # the working one lost nothing
    assert webhook.startswith("rltop: webhook http://127.0.0.1/… (--webhook #1) failed ")


def test_a_run_already_critical_at_start_is_reported_once_with_initial(tmp_path, logs):
    writer = Writer(logs / "ppo")
    writer.do("ok 5")
    writer.do("nan 1")
    watch = Watch(str(logs), "--format", "json")
    try:
        wait_until(lambda: watch.out.lines, "the first event")
        (event,) = [strict_json(line) for line in watch.out.lines]
        assert (event["event"], event["initial"], event["run"]) == ("finding", True, "ppo")
        writer.do("nan 1")
        writer.do("ok 3")
        wait_until(lambda: len(watch.out.lines) == 2, "the recovery")
        assert strict_json(watch.out.lines[1])["event"] == "recovery"
    finally:
        writer.close()
        code = watch.stop()
        watch.kill()
    assert code == 0


def test_text_lines_on_stderr_are_escaped(tmp_path, logs):
    writer = Writer(logs / "evil\x1b]0;pwned\x07")
    writer.do("ok 5")
    watch = Watch(str(logs))
    try:
        watch.wait_err("watching 1 run")
        writer.do("nan 1")
        watch.wait_err("CRITICAL")
    finally:
        writer.close()
        code = watch.stop()
        watch.kill()
    assert code == 0
    (line,) = watch.err.having("CRITICAL")
    assert "\x1b" not in line and "evil\\x1b]0;pwned\\x07: train/loss is NaN from step 6" in line


def run_watch(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PYTHON, "-m", "rltop", "watch", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def test_bad_input_is_one_line_and_exit_2(tmp_path, logs):
    missing = run_watch(str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1
    assert missing.stderr.startswith("rltop: error: ")
    bad_url = run_watch(str(logs), "--webhook", "ftp://user:secret@example.org/x")
    assert bad_url.returncode == 2
    assert bad_url.stderr == (
        "rltop: error: --webhook ftp://…: not an http(s) URL (STYLE+URL and env:NAME also work)\n"
    )
    unset = run_watch(str(logs), "--webhook", "env:RLTOP_TEST_UNSET_HOOK")
    assert unset.returncode == 2 and "RLTOP_TEST_UNSET_HOOK is not set" in unset.stderr
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    no_notify = run_watch(str(logs), "--notify", env={**os.environ, "PATH": str(bin_dir)})
    assert no_notify.returncode == 2
    assert no_notify.stderr.startswith("rltop: error: --notify needs notify-send, which is not on PATH")
    bad_timeout = run_watch(str(logs), "--hook-timeout", "0")
    assert bad_timeout.returncode == 2 and "the timeout must be > 0" in bad_timeout.stderr


def test_desktop_notification_through_notify_send(tmp_path, logs):
    bin_dir, shown = tmp_path / "bin", tmp_path / "shown.txt"
    bin_dir.mkdir()
    fake = bin_dir / "notify-send"  # records its arguments, one a line, as a notification server shows them
    fake.write_text(f'#!/bin/sh\nfor arg in "$@"; do echo "$arg"; done >> "{shown}"\n')
    fake.chmod(0o755)
    writer = Writer(logs / "grpo <b>&bold<b>")  # markup a notification server would read (no "/": one folder)
    writer.do("ok 5")
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    watch = subprocess.Popen(
        [PYTHON, "-m", "rltop", "watch", str(logs), "--notify"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        err = Lines(watch.stderr)
        wait_until(lambda: err.having("watching 1 run"), "watch to start")
        writer.do("nan 1")
        wait_until(lambda: shown.exists() and len(shown.read_text().splitlines()) >= 4, "the notification")
    finally:
        writer.close()
        watch.terminate()
        watch.wait(timeout=30)
    args = shown.read_text().splitlines()
    assert args[:3] == [
        "--app-name=rltop",
        "--urgency=critical",
        "rltop: CRITICAL grpo &lt;b&gt;&amp;bold&lt;b&gt;: non-finite value",
    ]
    assert args[3].startswith("CRITICAL grpo &lt;b&gt;&amp;bold&lt;b&gt;: train/loss is NaN from step 6")
    assert watch.returncode == 0
