"""Shared by the tests: what test_verl_jsonl.py used to define for itself and others."""

from __future__ import annotations

import json
import math
from pathlib import Path

from helpers.paths import FIXTURES
from rltop.ingest.feed import apply_batch
from rltop.ingest.follow.run_tracker import RunTracker
from rltop.model.run import Store

WRITTEN = FIXTURES / "verl" / "written"


VERSIONS = ["verl0_9_1", "verl0_7_0"]


def independent_points(path: Path) -> dict[str, list[tuple[int, float]]]:
    """What a reader of the file must find, from Python's json (null: NaN; text that is a number: it)."""
    points: dict[str, list[tuple[int, float]]] = {}

    def add(key: str, step: int, value) -> None:
        if isinstance(value, dict):
            for inner, item in value.items():
                add(f"{key}/{inner}", step, item)
            return
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                return
        points.setdefault(key, []).append((step, math.nan if value is None else float(value)))

    for line in path.read_text().splitlines():
        record = json.loads(line)
        for key, value in record["data"].items():
            add(key, record["step"], value)
    return points


def as_text(points) -> list[tuple[int, str]]:
    return [(step, repr(value)) for step, value in points]


def drive(tracker: RunTracker, store: Store):
    """One synchronous watcher cycle: list, read everything marked, apply the batch."""
    tracker.rescan()
    tracker.read_dirty(lambda: False, lambda: None)
    batch = tracker.take_batch()
    apply_batch(store, batch)
    return batch
