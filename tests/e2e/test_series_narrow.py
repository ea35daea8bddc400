"""Narrow series columns (int32 steps, float32 values) change nothing anyone sees (rltop.model.series).

The wide columns (``RLTOP_WIDE_SERIES=1``: int64 steps, float64 values) are the reference. Every
fixture folder is loaded both ways, its series appended in small batches of varying size (as a live
dashboard appends them, so that they grow, narrow and widen) instead of adopting the load's columns:
the stores must hold the same points bit for bit as a plain load, the engine must reach the same
verdicts, and every ``snapshot`` format and every ``export`` format must print the same bytes.
"""

from __future__ import annotations

import copy
import itertools
import time
from pathlib import Path

import numpy as np
import pytest
from helpers.paths import FIXTURES
from helpers.snapshot import freeze_clock, isolate_user_rules, run_cli

from rltop.health.engine import assess_store
from rltop.health.settings import load_rules
from rltop.ingest.follow import loader
from rltop.ingest.follow.loader import load
from rltop.model import series as series_module
from rltop.model.series import Series

FOLDERS = sorted(
    path
    for path in FIXTURES.iterdir()
    if path.is_dir() and path.name != "mlflow"  # (mlflow: its own stores, read by test_mlflow_*)
)
SNAPSHOT_FORMATS = ("text", "markdown", "json", "csv", "svg", "html")
EXPORT_FORMATS = ("csv", "jsonl")
CHUNKS = (1, 2, 5, 64, 3, 300, 17)
"""Sizes the appends are cut into, in turn: growth from a handful of points, and in long steps."""
NOW = time.time()

_append = Series.append


def _in_chunks(self: Series, steps, wall_times, values, single_precision=True, adopt=False) -> int:
    """`Series.append` as a live feed does it: in small batches, never adopting the columns."""
    steps, wall_times, values = np.asarray(steps), np.asarray(wall_times), np.asarray(values)
    first, start = len(self), 0
    for size in itertools.cycle(CHUNKS):
        if start >= len(steps):
            return first
        part = slice(start, start + size)
        first = min(first, _append(self, steps[part], wall_times[part], values[part], single_precision))
        start += size
    raise AssertionError("unreachable")


@pytest.fixture(autouse=True)
def frozen(monkeypatch, tmp_path) -> None:
    freeze_clock(monkeypatch, NOW)
    isolate_user_rules(monkeypatch, tmp_path)


def _bits(array: np.ndarray) -> bytes:
    return np.ascontiguousarray(array).tobytes()  # NaN payloads and signed zeros included


def _store_bits(store) -> dict:
    return {
        (name, tag): (
            _bits(series.steps), _bits(series.wall_times), _bits(series.values), series.steps.dtype,
            series.values.dtype, series.single_precision, series.purged,
        )
        for name, run in store.runs.items()
        for tag, series in run.series.items()
    }  # fmt: skip


def _everything(folder: Path, narrow: bool, monkeypatch, capsys, tmp_path) -> dict:
    """What rltop shows of ``folder`` with narrow columns allowed or not (appends in chunks)."""
    monkeypatch.setattr(series_module, "NARROW", narrow)
    monkeypatch.setattr(Series, "append", _in_chunks)
    # The folder is loaded once per width and each command gets a copy of that load, as it was before
    # anything judged it (the engine widens the tags it judges): eight loads of the same files gave
    # the same result eight times, and took a third of the test (the completions' parquet scans).
    loaded = load([str(folder)])
    monkeypatch.setattr(
        loader,
        "load",
        lambda paths, tags=None, runs=None, on_progress=None: _copy_of(loaded, paths, tags, runs),
    )
    shown: dict = {}
    store = copy.deepcopy(loaded).store
    shown["store"] = _store_bits(store)
    shown["narrow"] = any(any(series.narrow) for run in store.runs.values() for series in run.series.values())
    health = assess_store(store, load_rules(), now=NOW)
    shown["verdicts"] = {name: repr(verdict) for name, verdict in health.items()}
    for fmt in SNAPSHOT_FORMATS:
        out = tmp_path / f"{narrow}.{fmt}"
        code, stdout, stderr = run_cli(capsys, "snapshot", str(folder), "--format", fmt, "--output", str(out))
        shown[f"snapshot {fmt}"] = (code, stdout, stderr, out.read_bytes())
    for fmt in EXPORT_FORMATS:
        shown[f"export {fmt}"] = run_cli(capsys, "export", str(folder), "--format", fmt)
    return shown


def _copy_of(loaded, paths: list[str], tags: str | None, runs: str | None):
    """A fresh copy of the folder's load, for a command that loads the same folder unfiltered."""
    assert (paths, tags, runs) == ([str(folder) for folder in loaded.discovery.roots], None, None), paths
    return copy.deepcopy(loaded)


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda path: path.name)
def test_narrow_columns_show_exactly_what_wide_ones_show(folder: Path, monkeypatch, capsys, tmp_path) -> None:
    wide = _everything(folder, False, monkeypatch, capsys, tmp_path)
    narrow = _everything(folder, True, monkeypatch, capsys, tmp_path)
    assert narrow["narrow"] and not wide["narrow"]  # the fast path ran, and the reference did not
    monkeypatch.setattr(Series, "append", _append)
    plain = _store_bits(load([str(folder)]).store)  # adopted columns, as a one-shot load keeps them
    assert wide["store"] == plain
    assert narrow["store"] == plain
    for key in wide:
        if key != "narrow":
            assert narrow[key] == wide[key], f"{folder.name}: {key} differs"


def test_the_tags_rules_judge_stay_wide_and_the_others_narrow(monkeypatch) -> None:
    """The engine's rules read a judged tag's whole columns at every batch: those stay wide, so a
    batch costs no widening of the history (`Series.keep_wide`)."""
    monkeypatch.setattr(series_module, "NARROW", True)
    monkeypatch.setattr(Series, "append", _in_chunks)
    store = load([str(FIXTURES / "trl" / "grpo_healthy")]).store
    (run,) = store.runs.values()
    assert all(series.narrow == (True, True) for series in run.series.values())
    assess_store(store, load_rules(), now=NOW)
    judged = {tag for tag, series in run.series.items() if series.narrow == (False, False)}
    assert "train/reward" in judged and "train/kl" in judged
    assert any(series.narrow == (True, True) for series in run.series.values())  # (the others)
