"""The live watcher, in process: first load, new points, new files and runs, both modes, clean stop.

Event files are written record by record with a tiny encoder (exactly when the test says), so the
tests see precisely what the watcher must deliver. Waits poll a condition with a generous
deadline; nothing asserts on timing."""

from __future__ import annotations

import re
import threading

import numpy as np
import pytest
from helpers.watcher import (  # noqa: F401 (fixtures among them)
    FAST_POLL,
    MODES,
    Consumer,
    EventLog,
    _point_batches,
    pytestmark,  # noqa: F401 (the module's marks)
    start_watcher,
    wait_for,
)

from rltop.ingest.columns import TagColumns
from rltop.ingest.feed import APPEARED, FALLBACK, WAITING, ChangeBatch, apply_batch
from rltop.ingest.follow import watcher as watcher_module
from rltop.ingest.follow.discovery import DiscoveryError
from rltop.ingest.follow.loader import load
from rltop.ingest.follow.watcher import Watcher
from rltop.model.run import Store


@pytest.mark.parametrize("mode", MODES)
def test_first_read_matches_a_full_load(trl_dir, mode, stop_all):
    watcher, consumer = start_watcher([trl_dir], mode)
    stop_all(watcher)
    assert watcher.mode == mode
    batches = consumer.snapshot()
    assert all(b.initial for b in batches) and batches[-1].caught_up
    live, loaded = consumer.store(), load([str(trl_dir)]).store
    assert sorted(live.runs) == sorted(loaded.runs)
    assert {e.run for e in consumer.events(APPEARED)} == set(loaded.runs)
    for name, run in loaded.runs.items():
        other = live.runs[name]
        assert sorted(other.series) == sorted(run.series)
        for tag, series in run.series.items():
            np.testing.assert_array_equal(other.series[tag].steps, series.steps)
            np.testing.assert_array_equal(other.series[tag].values, series.values)
        assert other.config == run.config
        assert other.last_change_time == run.last_change_time  # the files' mtime, not "now"


@pytest.mark.parametrize("mode", MODES)
def test_new_points_files_and_runs_arrive_exactly_once_in_order(tmp_path, mode, stop_all):
    a = EventLog(tmp_path / "a")
    expected = {("a", "loss"): a.add("loss", range(1, 4))}
    watcher, consumer = start_watcher([tmp_path], mode)
    stop_all(watcher)
    assert consumer.points("a", "loss") == expected["a", "loss"]

    expected["a", "loss"] += a.add("loss", range(4, 7))
    wait_for(lambda: consumer.points("a", "loss") == expected["a", "loss"], "appended points")

    restart = EventLog(tmp_path / "a", stamp=1700000100)  # a restart: second file, steps go back
    expected["a", "loss"] += restart.add("loss", range(5, 9), offset=0.5)
    b = EventLog(tmp_path / "deep" / "er" / "b", run="deep/er/b")  # a new run, two levels down
    expected["deep/er/b", "reward"] = b.add("reward", range(1, 3))
    for key, points in expected.items():
        wait_for(lambda key=key, points=points: consumer.points(*key) == points, f"points of {key}")
    assert [e.run for e in consumer.events(APPEARED)] == ["a", "deep/er/b"]
    store = consumer.store()
    assert store.runs["a"].series["loss"].steps.tolist() == [1, 2, 3, 4, 5, 6, 7, 8]  # purged restart
    assert store.runs["deep/er/b"].directory == str(tmp_path / "deep" / "er" / "b")
    assert not consumer.events("file_error")


def test_a_consumer_that_follows_progress_gets_the_first_read_in_one_batch(tmp_path, monkeypatch, stop_all):
    """The dashboard's case: one delivery of the whole first read (each delivery is appended to
    every series), progress told in between; live points afterwards arrive as before."""
    monkeypatch.setattr(watcher_module, "FLUSH_POINTS", 100)
    logs = {name: EventLog(tmp_path / name) for name in ("a", "b", "c")}
    expected = {name: log.add("loss", range(1, 301)) for name, log in logs.items()}
    progress: list[tuple[int, int]] = []
    watcher, consumer = start_watcher([tmp_path], "polling", on_progress=lambda *told: progress.append(told))
    stop_all(watcher)
    first = _point_batches(consumer)
    assert len(first) == 1 and first[0].initial
    delivered = {p.run: list(zip(p.points.steps.tolist(), p.points.values.tolist())) for p in first[0].points}
    assert delivered == expected
    # The progress goes with the batch: nothing is held any more, the three runs were found.
    assert first[0].held == (0, 3)
    held = [points for points, _ in progress]
    assert held and held == sorted(held) and held[-1] <= 900 and progress[-1][1] >= 2
    expected["a"] += logs["a"].add("loss", range(301, 304))
    wait_for(lambda: consumer.points("a", "loss") == expected["a"], "live points")


def test_the_watcher_hands_each_tag_over_joined(tmp_path, monkeypatch, stop_all):
    """The first read's parts of a tag (one per split of the held columns) are joined in the
    watcher's thread: the consumer's thread joins nothing and gets every point, in order."""
    from rltop.ingest import feed
    from rltop.ingest.sources.tfevents.tfrecord.reader import EventFileReader

    monkeypatch.setattr(EventFileReader.__init__, "__defaults__", (4096,))  # reads of 4 kB
    monkeypatch.setattr(feed, "SPLIT_POINTS", 64)  # a split after every small read
    joins: list[str] = []
    join_points = feed.join_points

    def recording_join(parts):
        joins.append(threading.current_thread().name)
        return join_points(parts)

    monkeypatch.setattr(feed, "join_points", recording_join)
    log = EventLog(tmp_path / "a")
    expected = {tag: log.add(tag, range(1, 401)) for tag in ("loss", "kl")}
    watcher, consumer = start_watcher([tmp_path], "polling", on_progress=lambda *told: None)
    stop_all(watcher)
    (first,) = _point_batches(consumer)
    assert joins and threading.main_thread().name not in joins  # several parts, joined over there

    def no_join(parts):
        raise AssertionError("joined in the consumer's thread")

    monkeypatch.setattr(feed, "join_points", no_join)
    store = Store()
    apply_batch(store, first, consume=True)
    series = store.runs["a"].series
    assert {
        tag: list(zip(series[tag].steps.tolist(), series[tag].values.tolist())) for tag in expected
    } == expected


def test_progress_of_several_followers_adds_up_and_goes_with_each_batch(tmp_path):
    """A local root and a remote one each hold a first read: the consumer is told their sum, and
    a follower's batch says what the other still holds (its runs found stay counted)."""
    told: list[tuple[int, int]] = []
    watcher = Watcher(
        [str(tmp_path), "memory://bucket/logs"],
        lambda batch: None,
        on_progress=lambda *progress: told.append(progress),
    )
    local, remote = watcher._followers
    watcher.progress(local, 400_000, 10)
    watcher.progress(remote, 200_000, 5)
    assert told == [(400_000, 10), (600_000, 15)]
    batch = ChangeBatch(changed_runs={f"run{i}": "dir" for i in range(10)})
    watcher.deliver(batch, True, local)
    assert batch.held == (200_000, 15)
    assert told == [(400_000, 10), (600_000, 15)]  # nothing more: the batch carried it


def test_points_held_under_a_tag_filter_count_only_the_tags_kept():
    """``--tags``: the held count a first read tells is what the consumer will get."""
    batch = ChangeBatch()
    names = ["train/loss", "train/other"]
    columns = TagColumns(
        names, np.array([1000, 500], np.int64), np.arange(1500, dtype=np.int64), np.zeros(1500), np.ones(1500)
    )
    batch._hold("run", "", columns, re.compile("loss"))
    assert batch.point_count() == 1000
    names.append("train/loss_2")  # the file's tag list grows with a later read
    batch._hold(
        "run",
        "",
        TagColumns(
            names, np.array([0, 0, 7], np.int64), np.arange(7, dtype=np.int64), np.zeros(7), np.ones(7)
        ),
        re.compile("loss"),
    )
    assert batch.point_count() == 1007
    batch.settle()
    assert batch.point_count() == 1007 and {p.tag for p in batch.points} == {"train/loss", "train/loss_2"}


@pytest.mark.parametrize("hold", [None, 0.0])
def test_without_progress_or_past_the_hold_the_first_read_goes_out_in_parts(
    tmp_path, monkeypatch, stop_all, hold
):
    """``rltop tail`` (no progress to follow), and a first read that outlasts the hold: batches
    go out every FLUSH_POINTS points, in order, with nothing lost."""
    monkeypatch.setattr(watcher_module, "FLUSH_POINTS", 100)
    options = {}
    if hold is not None:
        monkeypatch.setattr(watcher_module, "FIRST_READ_DELIVER_EVERY", hold)
        options["on_progress"] = lambda *told: None
    logs = {name: EventLog(tmp_path / name) for name in ("a", "b", "c")}
    expected = {name: log.add("loss", range(1, 301)) for name, log in logs.items()}
    watcher, consumer = start_watcher([tmp_path], "polling", **options)
    stop_all(watcher)
    assert len(_point_batches(consumer)) >= 3
    assert {name: consumer.points(name, "loss") for name in logs} == expected


def test_waits_for_event_files_then_follows_them(tmp_path, stop_all):
    watcher, consumer = start_watcher([tmp_path], "native")
    stop_all(watcher)
    (waiting,) = consumer.events(WAITING)
    assert str(tmp_path) in waiting.message
    log = EventLog(tmp_path / "run")
    written = log.add("kl", range(1, 4))
    wait_for(lambda: consumer.points("run", "kl") == written, "the first points")
    assert len(consumer.events(WAITING)) == 1


def test_tag_and_run_filters(tmp_path, stop_all):
    EventLog(tmp_path / "keep").add("train/kl", [1])
    EventLog(tmp_path / "skip").add("train/kl", [1])
    watcher, consumer = start_watcher([tmp_path], "polling", tags="kl$", runs="^keep")
    stop_all(watcher)
    EventLog(tmp_path / "keep", stamp=1700000001).add("train/loss", [2])
    later = EventLog(tmp_path / "keep2", stamp=1700000002)
    written = later.add("train/kl", [3])
    wait_for(lambda: consumer.points("keep2", "train/kl") == written, "a new matching run")
    assert {(p.run, p.tag) for b in consumer.snapshot() for p in b.points} == {
        ("keep", "train/kl"),
        ("keep2", "train/kl"),
    }


def test_single_event_file_path(tmp_path, stop_all):
    log = EventLog(tmp_path / "r")
    first = log.add("x", [1])
    watcher, consumer = start_watcher([log.path], "native")
    stop_all(watcher)
    more = log.add("x", [2, 3])
    wait_for(lambda: consumer.points("r", "x") == first + more, "points of a single-file path")


def test_symlinked_root_is_followed_natively(tmp_path, stop_all):
    log = EventLog(tmp_path / "real" / "run")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    watcher, consumer = start_watcher([tmp_path / "link"], "native")
    stop_all(watcher)
    written = log.add("x", [1, 2])
    wait_for(lambda: consumer.points("run", "x") == written, "points under a symlinked root")


def test_native_failure_falls_back_to_polling_once(tmp_path, monkeypatch, stop_all):
    import errno

    def refuse(self):
        raise OSError(errno.ENOSPC, "inotify watch limit reached")

    monkeypatch.setattr(watcher_module.NativeObserver, "start", refuse)
    monkeypatch.setattr(watcher_module, "DEFAULT_POLL", FAST_POLL)
    log = EventLog(tmp_path / "run")
    watcher = Watcher([str(tmp_path)], consumer := Consumer())
    watcher.start()
    stop_all(watcher)
    written = log.add("x", [1, 2])
    wait_for(lambda: consumer.points("run", "x") == written, "points while polling")
    assert watcher.mode == "polling"
    (fallback,) = consumer.events(FALLBACK)
    assert "inotify watch limit reached" in fallback.message
    assert "max_user_watches" in fallback.message and "polling every 0.05 s" in fallback.message


def test_network_file_system_is_polled_from_the_start(tmp_path, monkeypatch, stop_all):
    monkeypatch.setattr(watcher_module, "network_filesystem", lambda paths: (paths[0], "nfs4"))
    watcher, consumer = start_watcher([tmp_path], "native")
    stop_all(watcher)
    assert watcher.mode == "polling"
    (fallback,) = consumer.events(FALLBACK)
    assert "is on nfs4" in fallback.message


def test_forced_polling_says_nothing(tmp_path, stop_all):
    EventLog(tmp_path / "r").add("x", [1])
    watcher, consumer = start_watcher([tmp_path], "polling")
    stop_all(watcher)
    assert not consumer.events(FALLBACK)


def test_bad_arguments_fail_before_any_thread_starts(tmp_path):
    with pytest.raises(DiscoveryError, match="no such file"):
        Watcher([str(tmp_path / "missing")], Consumer()).start()
    with pytest.raises(ValueError, match="--tags"):
        Watcher([str(tmp_path)], Consumer(), tags="(")
    with pytest.raises(ValueError, match="positive"):
        Watcher([str(tmp_path)], Consumer(), poll=0)


def test_stop_right_after_start_leaves_no_thread(tmp_path):
    EventLog(tmp_path / "r").add("x", range(1, 20001))
    before = set(threading.enumerate())
    watcher = Watcher([str(tmp_path)], Consumer())
    watcher.start()
    watcher.stop()
    assert not watcher.running
    assert set(threading.enumerate()) <= before
