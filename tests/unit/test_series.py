"""Series store: amortised growth, non-finite values kept, TensorBoard's restart purge."""

from __future__ import annotations

import math

import numpy as np

from rltop.model.series import Series


def _append(series: Series, steps, values=None) -> int:
    steps = np.array(steps)
    values = np.arange(len(steps), dtype=float) if values is None else np.array(values, dtype=float)
    return series.append(steps, np.zeros(len(steps)), values)


def test_growth_keeps_all_points_in_order() -> None:
    series = Series("loss")
    for start in range(0, 10_000, 7):
        _append(series, range(start, start + 7))
    assert series.steps.tolist() == list(range(10_003))
    assert series.nbytes() <= 2 * 24 * 10_003 + 24 * 64


def test_non_finite_values_are_kept() -> None:
    series = Series("kl")
    _append(series, [1, 2, 3], [math.nan, math.inf, -math.inf])
    values = series.values
    assert math.isnan(values[0]) and values[1] == math.inf and values[2] == -math.inf


def test_restart_discards_newer_steps_of_that_tag() -> None:
    series = Series("reward")
    _append(series, [1, 2, 3, 4, 5], [10, 20, 30, 40, 50])
    first = _append(series, [3, 4], [31, 41])  # resumed from the step-2 checkpoint
    assert first == 2
    assert series.steps.tolist() == [1, 2, 3, 4]
    assert series.values.tolist() == [10, 20, 31, 41]
    assert series.purged == 3


def test_restart_inside_one_batch() -> None:
    series = Series("reward")
    _append(series, [1, 2, 3, 2, 3, 4], [1, 2, 3, 20, 30, 40])
    assert series.steps.tolist() == [1, 2, 3, 4]
    assert series.values.tolist() == [1, 20, 30, 40]


def test_equal_steps_are_kept_side_by_side() -> None:
    # transformers logs train/epoch twice at the last step of a finished run.
    series = Series("train/epoch")
    _append(series, [1, 2, 2], [0.1, 0.2, 0.2])
    assert series.steps.tolist() == [1, 2, 2]


def test_compact_releases_spare_capacity() -> None:
    series = Series("x")
    _append(series, range(100))
    _append(series, range(100, 101))
    series.compact()
    assert series.nbytes() == 24 * 101
