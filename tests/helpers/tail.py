"""Shared by the tests: what test_tail.py used to define for itself and others."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from helpers.live import Lines
from helpers.paths import REPO
from helpers.watcher import scalar_record

ROOT = REPO  # the repository root


PYTHON = sys.executable
MARKER = "marker/end"
"""The tag of the point `scenario` appends last, to know tail has read everything before it."""


WRITER = r"""
import glob, json, sys, time
from tensorboardX import SummaryWriter

root, expected_path = sys.argv[1], sys.argv[2]
written = []

def add(writer, run, tag, step, value):
    writer.add_scalar(tag, value, step)
    written.append([run, tag, step, value])

def records(path):
    # The whole tfrecord records in the file: 8-byte length, its CRC, the data, the data's CRC.
    with open(path, "rb") as handle:
        data = handle.read()
    at = count = 0
    while at + 12 <= len(data):
        at += 12 + int.from_bytes(data[at : at + 8], "little") + 4
        count += at <= len(data)
    return count

def settle(*writers):
    # SummaryWriter hands events to a logger thread: flush() may run before an event reached the
    # file. Whatever misses this flush lands with the next one (or at close).
    time.sleep(0.04)
    for w in writers:
        w.flush()

a = SummaryWriter(root + "/run_a")
for step in range(1, 4):
    add(a, "run_a", "train/loss", step, step + 0.5)
    add(a, "run_a", "train/reward", step, -step)
settle(a)
history = glob.glob(root + "/run_a/events*")[0]
while records(history) < 1 + len(written):  # the file-version record, then every point: on disk
    settle(a)
print("history", flush=True)
sys.stdin.readline()
for step in range(4, 8):
    add(a, "run_a", "train/loss", step, step + 0.5)
    add(a, "run_a", "train/reward", step, -step)
    settle(a)
b = SummaryWriter(root + "/group/run_b")  # a new run directory, two levels down, while a streams
for step in range(8, 12):
    add(a, "run_a", "train/loss", step, step + 0.5)
    add(b, "group/run_b", "train/kl", step, step / 4)
    settle(a, b)
a.close()
a = SummaryWriter(root + "/run_a", filename_suffix=".restart")  # a restart: a second event file
for step in range(10, 14):  # resumed from an earlier checkpoint: steps go back
    add(a, "run_a", "train/loss", step, step + 0.25)
    add(b, "group/run_b", "train/kl", step, step / 4)
    settle(a, b)
a.close()
b.close()
with open(expected_path, "w") as handle:
    json.dump(written, handle)
print("done", flush=True)
"""


NO_INOTIFY = r"""
import errno, sys
from watchdog.observers import inotify_c

def refuse(self, path, mask):
    raise OSError(errno.ENOSPC, "inotify watch limit reached")

inotify_c.InotifyFD._get_or_create_watch = refuse
from rltop.cli import main
sys.exit(main())
"""


def start_tail(root: Path, *args: str, bootstrap: str | None = None) -> subprocess.Popen:
    command = [PYTHON, "-c", bootstrap] if bootstrap else [PYTHON, "-m", "rltop"]
    return subprocess.Popen(
        [*command, "tail", str(root), *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def stop(process: subprocess.Popen, how: int) -> float:
    """Send a signal; return how long the process took to exit."""
    sent = time.monotonic()
    process.send_signal(how)
    process.wait(timeout=10)
    return time.monotonic() - sent


def scenario(tmp_path: Path, tail_args: list[str], how: int, bootstrap: str | None = None, empty_first=False):
    """Writer and tail side by side; returns (expected points, printed points, stderr lines, exit time)."""
    root = tmp_path / "logs"
    root.mkdir()
    expected_path = tmp_path / "expected.json"
    tail = writer = None
    try:
        if empty_first:  # before training starts: tail waits for event files
            tail = start_tail(root, *tail_args, bootstrap=bootstrap)
            err = Lines(tail.stderr)
            err.wait(lambda lines: any("waiting" in line for line in lines), "the waiting notice")
        writer = subprocess.Popen(
            [PYTHON, "-c", WRITER, str(root), str(expected_path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert writer.stdout.readline().strip() == "history"
        if tail is None:
            tail = start_tail(root, *tail_args, bootstrap=bootstrap)
            err = Lines(tail.stderr)
        out = Lines(tail.stdout)
        out.wait(lambda lines: len(lines) >= 6, "the points already written")
        writer.stdin.write("go\n")
        writer.stdin.flush()
        assert writer.stdout.readline().strip() == "done"
        assert writer.wait(timeout=30) == 0
        expected = [tuple(p) for p in json.loads(expected_path.read_text())]
        out.wait(lambda lines: len(lines) >= len(expected), f"{len(expected)} points")
        # A point appended once the writer is done: when tail prints it, it has handled every change
        # before it, and a point read twice would be printed by then (a pause proved nothing).
        with open(next((root / "group" / "run_b").glob("events*")), "ab") as handle:
            handle.write(scalar_record(MARKER, 99, 1.0))
        out.wait(lambda lines: any(MARKER in line for line in lines), "the marker point")
        took = stop(tail, how)
        printed = [point for point in map(json.loads, out.lines) if point["tag"] != MARKER]
        return expected, printed, err.lines, took, tail.returncode
    finally:
        for process in (writer, tail):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()


def assert_exactly_once_in_order(expected, printed):
    assert all(set(p) == {"run", "tag", "step", "wall_time", "value", "session"} for p in printed)
    got = [(p["run"], p["tag"], p["step"], p["value"]) for p in printed]
    assert sorted(got) == sorted(expected), "every point exactly once"
    for key in {(run, tag) for run, tag, _, _ in expected}:
        mine = [(s, v) for r, t, s, v in got if (r, t) == key]
        assert mine == [(s, v) for r, t, s, v in expected if (r, t) == key], f"order of {key}"
