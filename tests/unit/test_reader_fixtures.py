"""rltop reads exactly what tbparse reads on every real TRL fixture, value for value."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.paths import TRL, TRL_RUNS, trl_event_file

from rltop.ingest.follow.loader import load


def _bits(values) -> list[bytes]:
    # float32 bit patterns, with every NaN made one pattern so that NaN equals NaN.
    array = np.asarray(values, dtype=np.float32).copy()
    array[np.isnan(array)] = np.float32("nan")
    return [v.tobytes() for v in array]


def _tbparse_points(path) -> set[tuple[str, int, bytes]]:
    from tbparse import SummaryReader

    frame = SummaryReader(str(path)).scalars
    if frame.empty:
        return set()
    return set(zip(frame["tag"], frame["step"].astype(int), _bits(frame["value"])))


def _rltop_points(path) -> tuple[set[tuple[str, int, bytes]], int]:
    result = load([str(path)])
    (run,) = result.store.runs.values()
    points = set()
    total = 0
    for tag, series in run.series.items():
        total += len(series)
        points |= set(zip([tag] * len(series), series.steps.tolist(), _bits(series.values)))
    assert result.problems == []
    return points, total


@pytest.mark.parametrize("name", TRL_RUNS)
def test_same_points_as_tbparse(name: str) -> None:
    path = trl_event_file(name)
    ours, total = _rltop_points(path)
    theirs = _tbparse_points(path)
    assert ours == theirs
    from tbparse import SummaryReader

    assert total == len(SummaryReader(str(path)).scalars)  # no duplicates lost in the sets


@pytest.mark.parametrize("name", TRL_RUNS)
def test_config_is_a_dict(name: str) -> None:
    result = load([str(TRL / name)])
    (run,) = result.store.runs.values()
    config = run.config
    assert isinstance(config, dict)
    assert config["output_dir"] == f"out/{name}"
    assert run.file_version == "brain.Event:2"
    assert "model_config/text_summary" in run.texts


def test_grpo_quirks_are_kept() -> None:
    result = load([str(TRL / "grpo_with_eval")])
    (run,) = result.store.runs.values()
    epoch = run.series["train/epoch"]
    assert len(epoch) == 64  # 60 steps + 3 evaluations + the end-of-training summary
    assert len(run.series["eval/reward"]) == 3
    assert run.name == "runs/Nov29_21-47-07_vm"


def test_empty_run_has_texts_but_no_scalars() -> None:
    result = load([str(TRL / "grpo_liger_cpu_crash")])
    (run,) = result.store.runs.values()
    assert run.series == {}
    assert run.config is not None
