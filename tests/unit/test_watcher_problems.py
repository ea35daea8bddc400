"""The watcher under trouble: deleted runs, truncated, replaced and unreadable files, vanished roots.

Each case must give exactly one warning, never an exception, and the other runs keep streaming.
Tests run as root (no chmod denial), so permission errors are injected where the reader opens
files and where discovery lists directories.
"""

from __future__ import annotations

import errno
import os
import shutil

import helpers.watcher as test_watcher
import pytest
from helpers.watcher import MODES, EventLog, start_watcher, wait_for

from rltop.ingest.feed import APPEARED, FILE_ERROR, RELOADED, REMOVED
from rltop.ingest.follow import watcher as watcher_module
from rltop.ingest.follow.run_tracker import RunTracker
from rltop.ingest.storage.local import LocalFile
from rltop.model.durations import format_duration

# watchdog warns about a harmless race when nested directories appear at once (rltop filters it
# out of its own output; pytest resets warning filters per test).
pytestmark = pytest.mark.filterwarnings("ignore:Callback with id:RuntimeWarning")
stop_all = test_watcher.stop_all  # the fixture: stops watchers, checks for leftover threads


def two_runs(tmp_path):
    a, b = EventLog(tmp_path / "a"), EventLog(tmp_path / "b")
    return a, b, {"a": a.add("x", [1, 2]), "b": b.add("x", [1, 2])}


def keeps_streaming(consumer, log: EventLog, expected: list, steps) -> None:
    """Append to a healthy run and wait for exactly what was written."""
    expected += log.add("x", steps)
    wait_for(lambda: consumer.points(log.run, "x") == expected, f"run {log.run} to keep streaming")


def errors_about(consumer, run: str | None, text: str) -> list:
    return [e for e in consumer.events(FILE_ERROR) if e.run == run and text in e.message]


@pytest.mark.parametrize("mode", MODES)
def test_deleted_run_directory(tmp_path, mode, stop_all):
    a, b, written = two_runs(tmp_path)
    watcher, consumer = start_watcher([tmp_path], mode)
    stop_all(watcher)
    shutil.rmtree(tmp_path / "b")
    wait_for(lambda: consumer.events(REMOVED), "the removed event")
    keeps_streaming(consumer, a, written["a"], [3, 4])
    keeps_streaming(consumer, a, written["a"], [5])
    (removed,) = consumer.events(REMOVED)
    assert removed.run == "b" and "was deleted" in removed.message
    assert sorted(consumer.store().runs) == ["a"]
    assert not consumer.events(FILE_ERROR)


@pytest.mark.parametrize("mode", MODES)
def test_file_truncated_to_zero(tmp_path, mode, stop_all):
    a, b, written = two_runs(tmp_path)
    watcher, consumer = start_watcher([tmp_path], mode)
    stop_all(watcher)
    os.truncate(a.path, 0)
    wait_for(lambda: errors_about(consumer, "a", "shrank"), "the truncation warning")
    keeps_streaming(consumer, b, written["b"], [3, 4])
    rewritten = a.add("x", [1, 2, 3], offset=0.25)  # the writer starts over in the same file
    wait_for(lambda: consumer.points("a", "x") == written["a"] + rewritten, "the rewritten points")
    keeps_streaming(consumer, b, written["b"], [5])
    assert len(consumer.events(FILE_ERROR)) == 1


@pytest.mark.parametrize("mode", MODES)
def test_file_replaced_by_a_new_one_with_the_same_name(tmp_path, mode, stop_all):
    a, b, written = two_runs(tmp_path)
    watcher, consumer = start_watcher([tmp_path], mode)
    stop_all(watcher)
    fresh = EventLog(tmp_path / "staging")
    new_points = fresh.add("x", [7, 8], offset=0.5)
    os.replace(fresh.path, a.path)
    wait_for(lambda: consumer.points("a", "x") == written["a"] + new_points, "the new file's points")
    keeps_streaming(consumer, b, written["b"], [3])
    (error,) = consumer.events(FILE_ERROR)
    assert error.run == "a" and "replaced" in error.message


@pytest.mark.parametrize("mode", MODES)
def test_file_that_cannot_be_read_is_reported_once(tmp_path, mode, monkeypatch, stop_all):
    a, b, written = two_runs(tmp_path)
    denied = {"on": False, "attempts": 0}

    real_enter = LocalFile.__enter__

    def guarded_enter(self):
        if denied["on"] and os.fspath(self.path) == str(a.path):
            denied["attempts"] += 1
            raise PermissionError(errno.EACCES, "Permission denied", str(self.path))
        return real_enter(self)

    monkeypatch.setattr("rltop.ingest.storage.local.LocalFile.__enter__", guarded_enter)
    watcher, consumer = start_watcher([tmp_path], mode)
    stop_all(watcher)
    denied["on"] = True
    held_back = []
    for step in (3, 4, 5):  # each append wakes the native watcher: several failed reads
        seen = denied["attempts"]
        held_back += a.add("x", [step])
        wait_for(lambda seen=seen: denied["attempts"] > seen, "another read attempt")
    keeps_streaming(consumer, b, written["b"], [3, 4])
    (error,) = consumer.events(FILE_ERROR)
    assert error.run == "a" and "Permission denied" in error.message
    denied["on"] = False
    more = a.add("x", [6])
    wait_for(lambda: consumer.points("a", "x") == written["a"] + held_back + more, "reading after recovery")
    assert len(consumer.events(FILE_ERROR)) == 1


def test_directory_that_cannot_be_listed_is_not_a_deleted_run(tmp_path, monkeypatch, stop_all):
    a, b, written = two_runs(tmp_path)
    real_walk = os.walk
    blocked = str(tmp_path / "b")

    def walk(top, onerror=None, **kwargs):
        for directory, subdirs, files in real_walk(top, onerror=onerror, **kwargs):
            if directory == blocked:
                onerror(PermissionError(errno.EACCES, "Permission denied", directory))
                continue
            yield directory, subdirs, files

    watcher, consumer = start_watcher([tmp_path], "polling")
    stop_all(watcher)
    monkeypatch.setattr("rltop.ingest.storage.local.os.walk", walk)
    wait_for(lambda: errors_about(consumer, None, "cannot list directory"), "the listing warning")
    keeps_streaming(consumer, a, written["a"], [3])
    keeps_streaming(consumer, b, written["b"], [3])  # its known file is still read
    keeps_streaming(consumer, a, written["a"], [4])
    assert not consumer.events(REMOVED)
    assert len(consumer.events(FILE_ERROR)) == 1


@pytest.mark.parametrize("mode", MODES)
def test_root_deleted_then_recreated(tmp_path, mode, monkeypatch, stop_all):
    monkeypatch.setattr(watcher_module, "NATIVE_SWEEP", 0.1)  # the sweep re-watches a new root
    # ... every 0.1 s whatever a sweep costs: spaced out by its CPU time (x 1000 by default), a sweep
    # slowed by a busy machine pushed the next one past the wait below.
    monkeypatch.setattr(watcher_module, "SWEEP_BUDGET", 1.0)
    root = tmp_path / "logs"
    EventLog(root / "old").add("x", [1])
    watcher, consumer = start_watcher([root], mode)
    stop_all(watcher)
    shutil.rmtree(root)
    wait_for(lambda: consumer.events(REMOVED), "the removed run")
    new = EventLog(root / "new")
    written = new.add("x", [1, 2])
    wait_for(lambda: consumer.points("new", "x") == written, "the new run in the re-created root")
    more = new.add("x", [3])
    wait_for(lambda: consumer.points("new", "x") == written + more, "new points in the re-created root")
    assert [e.run for e in consumer.events(APPEARED)] == ["old", "new"]
    assert len(errors_about(consumer, None, "no such file or directory")) == 1


@pytest.mark.parametrize("mode", MODES)
def test_deleted_event_file_and_corrupt_bytes(tmp_path, mode, stop_all):
    a, b, written = two_runs(tmp_path)
    second = EventLog(tmp_path / "a", stamp=1700000500)
    written["a"] += second.add("x", [3])
    watcher, consumer = start_watcher([tmp_path], mode)
    stop_all(watcher)
    os.unlink(a.path)
    wait_for(lambda: errors_about(consumer, "a", "deleted"), "the deleted-file warning")
    with open(second.path, "ab") as handle:
        handle.write(b"\x17" * 40)  # damage, then valid records: resynchronised, reported once
    keeps_streaming(consumer, second, written["a"], [4, 5])
    assert len(errors_about(consumer, "a", "corrupt")) == 1
    assert len(consumer.events(FILE_ERROR)) == 2
    assert "a" in consumer.store().runs  # the run stays: it still has a file


def test_format_duration():
    assert [format_duration(s) for s in (5, 420, 9000, 86400 * 3)] == ["5 s", "7 min", "2 h 30 min", "3 d"]


def test_an_internal_error_in_one_cycle_is_reported_once_and_watching_goes_on(
    tmp_path, monkeypatch, stop_all
):
    a, b, written = two_runs(tmp_path)
    real = RunTracker.scan_completions
    failures = {"left": 3}

    def flaky(self, force=False):
        if failures["left"]:
            failures["left"] -= 1
            raise RuntimeError("boom")
        return real(self, force)

    monkeypatch.setattr(RunTracker, "scan_completions", flaky)
    watcher, consumer = start_watcher([tmp_path], "polling")
    stop_all(watcher)
    wait_for(lambda: not failures["left"], "the failing cycles")
    keeps_streaming(consumer, a, written["a"], [3])
    (error,) = consumer.events(FILE_ERROR)
    assert "internal error while watching (RuntimeError: boom); still watching" in error.message


@pytest.mark.parametrize("mode", MODES)
def test_file_replaced_by_a_copy_of_itself_leaves_no_duplicates(tmp_path, mode, stop_all):
    # rsync-style rewrite (new inode, same bytes): the run is read again, not appended twice,
    # even for points at equal steps (which a restart purge would not remove).
    a, b, written = two_runs(tmp_path)
    a.add("x", [2])  # a second point at step 2, as transformers' train/epoch has
    watcher, consumer = start_watcher([tmp_path], mode)
    stop_all(watcher)
    wait_for(lambda: len(consumer.points("a", "x")) == 3, "the first read")
    copy = tmp_path / "copy"
    shutil.copyfile(a.path, copy)
    os.replace(copy, a.path)
    wait_for(lambda: consumer.events(RELOADED), "the reload")
    keeps_streaming(consumer, b, written["b"], [3])
    store = consumer.store()
    assert store.runs["a"].series["x"].steps.tolist() == [1, 2, 2]
