"""Columns of many reads joined and split by tag once (rltop.ingest.columns, ChangeBatch)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from rltop.ingest.columns import group_by_tag, split_by_tag
from rltop.ingest.feed import ChangeBatch, apply_batch
from rltop.ingest.sources.tfevents.tfrecord.records import DecodedBatch
from rltop.model.run import Store
from rltop.model.series import Points


def _reads(names: list[str], per_read: list[int], seed: int = 0):
    """Random reads of a file whose tags appear over time (``names`` grows); the expected points."""
    rng = np.random.default_rng(seed)
    expected: dict[str, list[np.ndarray]] = {}
    parts = []
    step = 0
    for read, count in enumerate(per_read):
        known = names[: max(1, len(names) * (read + 1) // len(per_read))]
        ids = rng.integers(0, len(known), count)
        steps = step + np.arange(count, dtype=np.int64)
        step += count
        walls, values = steps * 0.5, rng.standard_normal(count)
        for tag_id in range(len(known)):
            expected.setdefault(known[tag_id], []).append(np.flatnonzero(ids == tag_id) + steps[0])
        parts.append(group_by_tag(names, ids, steps, walls, values))
    return parts, {tag: np.concatenate(chunks) for tag, chunks in expected.items()}


@pytest.mark.parametrize("tags, per_read", [(5, [4000, 3000, 5000]), (400, [900, 1100, 700, 1300])])
def test_split_joins_every_tag_in_file_order(tags, per_read):
    # Few tags with many points per read join per tag; thousands of small blocks take one gather.
    names = [f"tag/{i}" for i in range(tags)]
    parts, expected = _reads(names, per_read)
    split = split_by_tag(parts)
    assert list(split) == [tag for tag in names if tag in split]  # in id order
    for tag, steps in expected.items():
        if steps.size == 0:
            assert tag not in split
            continue
        points = split[tag]
        assert np.array_equal(points.steps, steps)
        assert np.array_equal(points.wall_times, steps * 0.5)
        assert points.values.dtype == np.float64 and len(points.values) == steps.size


def _columns_read(names, ids, steps):
    batch = DecodedBatch()
    steps = np.asarray(steps, dtype=np.int64)
    batch.columns = group_by_tag(names, np.asarray(ids), steps, steps * 1.0, steps * 2.0)
    batch.lowest_step = int(steps.min())
    return batch


def test_change_batch_keeps_reading_order_around_a_read_split_by_tag():
    names = ["loss", "kl"]
    batch = ChangeBatch()
    batch.add_decoded("a", "/a", _columns_read(names, [0, 1, 0], [1, 1, 2]), path="/a/s1/events")
    assert batch.point_count() == 3 and not batch.is_empty() and batch.points == []
    # A read with points of the general decoder (already split by tag) comes after what came before.
    slow = DecodedBatch(scalars={"loss": Points(np.array([3]), np.array([3.0]), np.array([6.0]))})
    batch.add_decoded("a", "/a", slow, path="/a/s1/events")
    batch.add_decoded("a", "/a", _columns_read(names, [1, 0], [4, 4]), path="/a/s1/events")
    store = Store()
    apply_batch(store, batch)
    run = store.runs["a"]
    assert run.series["loss"].steps.tolist() == [1, 2, 3, 4]
    assert run.series["kl"].steps.tolist() == [1, 4]
    assert run.series["kl"].values.tolist() == [2.0, 8.0]


def test_change_batch_filters_columns_and_knows_the_session_start():
    names = ["train/loss", "train/kl", "eval/loss"]
    batch = ChangeBatch()
    read = _columns_read(names, [2, 0, 1, 0], [5, 7, 7, 8])
    batch.add_decoded("a", "/a", read, re.compile("^train/"), path="/logs/a/s2/events.out.tfevents.1")
    assert batch.session_steps[("a", "s2")][1] == 7  # eval/loss (step 5) is filtered out
    batch.settle()
    assert sorted(p.tag for p in batch.points) == ["train/kl", "train/loss"]
    batch.drop_run("a")
    assert batch.is_empty()


def test_reading_scalars_of_a_columns_batch_splits_them():
    read = _columns_read(["x", "y"], [1, 0, 1], [1, 2, 3])
    assert read.scalars["y"].steps.tolist() == [1, 3] and read.columns is None
