"""The change feed: ChangeBatch contents and apply_batch on a consumer's own store."""

from __future__ import annotations

import re

import numpy as np

from rltop.ingest.feed import (
    APPEARED,
    REMOVED,
    ChangeBatch,
    PointsBatch,
    RunEvent,
    apply_batch,
)
from rltop.ingest.follow.loader import load
from rltop.ingest.sources.tfevents.tfrecord.records import DecodedBatch
from rltop.model.run import Store
from rltop.model.series import Points


def points(run: str, tag: str, steps, values) -> PointsBatch:
    steps = np.asarray(steps, dtype=np.int64)
    return PointsBatch(run, tag, Points(steps, steps * 10.0, np.asarray(values, dtype=np.float64)))


def test_apply_batch_creates_runs_and_reports_first_changed_index():
    store = Store()
    batch = ChangeBatch(
        points=[points("a", "loss", [1, 2], [0.5, 0.25]), points("a", "loss", [3], [0.125])],
        events=[RunEvent(APPEARED, "a", "new run a (/logs/a)", "/logs/a")],
        changed_runs={"a": "/logs/a"},
        change_times={"a": 1234.0},
    )
    assert apply_batch(store, batch) == [("a", "loss", 0)]
    run = store.runs["a"]
    assert run.directory == "/logs/a"
    assert run.series["loss"].steps.tolist() == [1, 2, 3]
    assert run.last_change_time == 1234.0
    assert run.last_point_wall_time == 30.0
    more = ChangeBatch(points=[points("a", "loss", [4], [1.0])], changed_runs={"a": "/logs/a"}, time=2000.0)
    assert apply_batch(store, more) == [("a", "loss", 3)]
    assert run.last_change_time == 2000.0  # no per-run time: the batch time


def test_restart_purge_shows_in_first_changed_index():
    store = Store()
    apply_batch(store, ChangeBatch(points=[points("a", "x", [1, 2, 3, 4], [1, 2, 3, 4])]))
    changes = apply_batch(store, ChangeBatch(points=[points("a", "x", [3, 4], [30, 40])]))
    assert changes == [("a", "x", 2)]
    assert store.runs["a"].series["x"].values.tolist() == [1, 2, 30, 40]


def test_removed_event_drops_the_run_before_new_points():
    store = Store()
    apply_batch(store, ChangeBatch(points=[points("a", "x", [1], [1])], changed_runs={"a": "/a"}))
    batch = ChangeBatch(
        events=[RunEvent(REMOVED, "a", "run a: deleted", "/a"), RunEvent(APPEARED, "a", "new run a", "/a")],
        points=[points("a", "x", [1], [7])],
        changed_runs={"a": "/a"},
    )
    apply_batch(store, batch)
    assert store.runs["a"].series["x"].values.tolist() == [7]


def test_texts_and_file_version_are_applied():
    store = Store()
    batch = ChangeBatch(
        texts=[("a", "args/text_summary", 0, 1.0, '{"learning_rate": 1e-06}')],
        changed_runs={"a": "/a"},
        file_versions={"a": "brain.Event:2"},
    )
    apply_batch(store, batch)
    assert store.runs["a"].config == {"learning_rate": 1e-06}
    assert store.runs["a"].file_version == "brain.Event:2"


def test_add_decoded_filters_tags_and_drop_run_forgets_a_run():
    decoded = DecodedBatch(
        scalars={
            "train/loss": Points(np.array([1]), np.array([1.0]), np.array([0.5])),
            "train/kl": Points(np.array([1]), np.array([1.0]), np.array([0.1]), False),
        },
        texts=[("note", 1, 1.0, "hello")],
        file_version="brain.Event:2",
    )
    batch = ChangeBatch()
    batch.add_decoded("a", "/a", decoded, re.compile("kl"))
    assert [(p.run, p.tag, p.points.single_precision) for p in batch.points] == [("a", "train/kl", False)]
    assert batch.texts == [("a", "note", 1, 1.0, "hello")]
    assert batch.changed_runs == {"a": "/a"} and batch.file_versions == {"a": "brain.Event:2"}
    assert batch.point_count() == 1 and not batch.is_empty()
    batch.drop_run("a")
    assert batch.is_empty()


def test_load_goes_through_the_feed_and_keeps_file_times(trl_dir):
    result = load([str(trl_dir / "grpo_healthy")])
    (run,) = result.store.runs.values()
    (path,) = (trl_dir / "grpo_healthy").glob("runs/*/events.out.tfevents.*")
    assert run.last_change_time == path.stat().st_mtime  # staleness of data on disk: its mtime
    assert run.config is not None and run.scalar_count() > 0


def test_a_batch_settled_with_join_is_adopted_without_another_copy(monkeypatch):
    """The watcher settles a batch with ``join=True`` in its own thread: the consumer's thread then
    joins nothing, and the new series keeps the joined columns as they are."""
    from rltop.ingest import feed

    held = points("a", "x", [1, 2], [0.5, 0.25])
    held.extend(points("a", "x", [3], [0.125]).points)
    batch = ChangeBatch(points=[held])
    batch.settle(join=True)
    joined = held.points

    def no_join(parts):
        raise AssertionError("joined again in the consumer's thread")

    monkeypatch.setattr(feed, "join_points", no_join)
    store = Store()
    assert apply_batch(store, batch, consume=True) == [("a", "x", 0)]
    series = store.runs["a"].series["x"]
    assert series.steps.tolist() == [1, 2, 3] and series.values.tolist() == [0.5, 0.25, 0.125]
    assert np.shares_memory(series.values, joined.values)  # adopted, not copied
