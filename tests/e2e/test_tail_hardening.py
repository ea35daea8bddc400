"""``rltop tail`` under the faults of issue 11: a torn record, bytes that land after the size, a run
directory whose permissions go away and come back. Every point is printed exactly once.

The writer is this test process (exact bytes, exactly when the test says); ``rltop tail`` runs as a
real subprocess. Tests run as root, where ``chmod 000`` denies nothing, so the permission test runs
tail with `deny_as_user` installed: the same EACCES a normal user gets, for real chmods.
"""

from __future__ import annotations

import json
import os
import signal

import pytest
from helpers import deny_as_user
from helpers.tail import ROOT, Lines, start_tail, stop
from helpers.watcher import EventLog, scalar_record, start_watcher, wait_for

from rltop.ingest.feed import FILE_ERROR, REMOVED

TESTS = ROOT / "tests"
AS_USER = f"""
import sys
sys.path.insert(0, {str(TESTS)!r})
from helpers import deny_as_user
deny_as_user.install(sys.argv[2])  # the tail's PATH
from rltop.cli import main
sys.exit(main())
"""
MODES = {"native": [], "polling": ["--poll", "0.05"]}


def printed(out: Lines, run: str) -> list[int]:
    return [point["step"] for point in map(json.loads, out.lines) if point["run"] == run]


@pytest.fixture
def tailing():
    started = []

    def start(root, *args, bootstrap=None):
        process = start_tail(root, *args, bootstrap=bootstrap)
        started.append(process)
        return process, Lines(process.stdout), Lines(process.stderr)

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.fixture
def stop_all_watchers():
    started = []
    yield started.append
    for watcher in started:
        watcher.stop()


@pytest.mark.parametrize("mode", MODES)
def test_the_point_after_a_torn_record_is_printed(tmp_path, mode, tailing):
    log = EventLog(tmp_path / "run", run="run")
    log.add("train/loss", [1, 2, 3])
    tail, out, err = tailing(tmp_path, *MODES[mode])
    out.wait(lambda lines: len(lines) == 3, "the history")
    with open(log.path, "ab") as handle:
        handle.write(scalar_record("train/loss", 4, 4.0)[:30])  # a half-written step: disk full
    log.add("train/loss", [5])  # ... and the writer went on
    out.wait(lambda lines: len(lines) == 4, "the point after the tear")
    log.add("train/loss", [6, 7])
    out.wait(lambda lines: len(lines) == 6, "the points after it")
    stop(tail, signal.SIGINT)
    assert printed(out, "run") == [1, 2, 3, 5, 6, 7]
    (warning,) = err.lines
    assert "corrupt data at byte" in warning and "(30 bytes skipped)" in warning


@pytest.mark.parametrize("mode", MODES)
def test_bytes_landing_after_the_size_grew_are_read(tmp_path, mode, tailing):
    # What NFS shows: the file's size grows first, its bytes read as zeros until they land.
    late = EventLog(tmp_path / "a", run="a")
    marker = EventLog(tmp_path / "b", run="b")
    late.add("x", [1])
    tail, out, err = tailing(tmp_path, *MODES[mode])
    out.wait(lambda lines: len(lines) == 1, "the history")
    data = b"".join(scalar_record("x", step, float(step)) for step in (2, 3, 4))
    size = late.path.stat().st_size
    os.truncate(late.path, size + len(data))
    marker.add("x", [1])  # once tail printed this, it has read run a's zeros too (a is read first)
    out.wait(lambda lines: printed(out, "b") == [1], "the marker")
    fd = os.open(late.path, os.O_WRONLY)
    os.pwrite(fd, data, size)
    os.close(fd)
    late.add("x", [5])
    out.wait(lambda lines: printed(out, "a") == [1, 2, 3, 4, 5], "the late points")
    stop(tail, signal.SIGINT)
    assert printed(out, "a") == [1, 2, 3, 4, 5]
    assert err.lines == []  # neither "corrupt data" nor a skipped record


def test_chmod_000_and_back_keeps_the_run_without_duplicates(tmp_path, tailing):
    tmp_path.chmod(0o755)  # pytest makes it 0700: a normal user could not enter it at all
    a, b = EventLog(tmp_path / "a", run="a"), EventLog(tmp_path / "b", run="b")
    a.add("x", [1, 2])
    b.add("x", list(range(1, 151)))
    tail, out, err = tailing(tmp_path, "--poll", "0.05", bootstrap=AS_USER)
    out.wait(lambda lines: len(lines) == 152, "the history")
    os.chmod(tmp_path / "b", 0)
    try:
        err.wait(lambda lines: any("Permission denied" in line for line in lines), "the warning")
        b.add("x", [151, 152])  # written while rltop cannot look
        a.add("x", [3])
        out.wait(lambda lines: printed(out, "a") == [1, 2, 3], "run a to keep streaming")
    finally:
        os.chmod(tmp_path / "b", 0o755)
    b.add("x", [153])
    out.wait(lambda lines: printed(out, "b")[-1:] == [153], "run b after access came back")
    a.add("x", [4])
    out.wait(lambda lines: printed(out, "a") == [1, 2, 3, 4], "a last point of run a")
    stop(tail, signal.SIGINT)
    assert printed(out, "b") == list(range(1, 154))  # its 150 points once, then the new ones once
    assert not [line for line in err.lines if "deleted" in line or "new run" in line]
    assert len(err.lines) == len(set(err.lines)) <= 2, err.lines  # each warning once
    print("\n".join(err.lines))


def test_unreadable_run_is_not_removed_and_keeps_its_offsets(tmp_path, monkeypatch, stop_all_watchers):
    tmp_path.chmod(0o755)
    deny_as_user.install(str(tmp_path), monkeypatch.setattr)
    a, b = EventLog(tmp_path / "a", run="a"), EventLog(tmp_path / "b", run="b")
    a.add("x", [1])
    b.add("x", [1, 2])
    watcher, consumer = start_watcher([tmp_path], "polling")
    stop_all_watchers(watcher)
    os.chmod(tmp_path / "b", 0)
    try:
        wait_for(lambda: consumer.events(FILE_ERROR), "the warning")
        a.add("x", [2])
        wait_for(lambda: consumer.points("a", "x") == [(1, 1.0), (2, 2.0)], "run a to go on")
        assert not consumer.events(REMOVED)
        assert "b" in consumer.store().runs
    finally:
        os.chmod(tmp_path / "b", 0o755)
    b.add("x", [3])
    wait_for(lambda: consumer.points("b", "x") == [(1, 1.0), (2, 2.0), (3, 3.0)], "run b after access")
    assert not consumer.events(REMOVED)
