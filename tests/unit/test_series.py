"""Series store: amortised growth, non-finite values kept, TensorBoard's restart purge, narrow columns."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rltop.model import series as series_module
from rltop.model.series import Series


@pytest.fixture(params=[True, False], ids=["narrow", "wide"])
def narrow(request, monkeypatch) -> bool:
    """Both storages (tests/e2e/test_series_narrow.py holds them equal on the fixtures)."""
    monkeypatch.setattr(series_module, "NARROW", request.param)
    return request.param


def _append(series: Series, steps, values=None) -> int:
    steps = np.array(steps)
    values = np.arange(len(steps), dtype=float) if values is None else np.array(values, dtype=float)
    return series.append(steps, np.zeros(len(steps)), values)


def test_growth_keeps_all_points_in_order(narrow) -> None:
    series = Series("loss")
    for start in range(0, 10_000, 7):
        _append(series, range(start, start + 7))
    assert series.steps.tolist() == list(range(10_003))
    assert series.values.tolist() == [float(i % 7) for i in range(10_003)]
    point = 16 if narrow else 24
    assert series.nbytes() <= point * (10_003 * 9 // 8 + 64)  # an eighth spare at most


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


def test_compact_releases_spare_capacity(narrow) -> None:
    series = Series("x")
    _append(series, range(100))
    _append(series, range(100, 101))
    series.compact()
    assert series.nbytes() == (16 if narrow else 24) * 101


def test_readers_always_get_int64_steps_and_float64_values(narrow) -> None:
    series = Series("loss")
    _append(series, range(10), [0.5 * i for i in range(10)])
    assert series.narrow == (narrow, narrow)
    points = series.points(3, 6)
    for array, dtype in ((series.steps, np.int64), (series.values, np.float64), (points.steps, np.int64),
                         (points.values, np.float64), (series.steps_at([1, 2]), np.int64),
                         (series.values_at(slice(2, None)), np.float64)):  # fmt: skip
        assert array.dtype == dtype
    assert series.values_at(-1).dtype == np.float64 and int(series.steps_at(0)) == 0
    assert points.steps.tolist() == [3, 4, 5] and points.values.tolist() == [1.5, 2.0, 2.5]
    assert series.points(8).steps.tolist() == [8, 9]


def test_a_value_float32_cannot_hold_widens_the_values_only(narrow) -> None:
    series = Series("kl")
    _append(series, [1, 2], [0.25, 1.5])
    _append(series, [3], [0.1])  # float64's 0.1 is no float32
    assert series.narrow == (narrow, False)
    assert series.values.tolist() == [0.25, 1.5, 0.1]
    _append(series, [4], [0.5])  # once wide, wide for good
    assert series.narrow == (narrow, False) and series.values.tolist() == [0.25, 1.5, 0.1, 0.5]


def test_steps_beyond_int32_widen_the_steps_and_purge_right(narrow) -> None:
    series = Series("loss")
    _append(series, [1, 2, 3], [1.0, 2.0, 3.0])
    assert series.drop_from(2**40) == 3 and series.purge_from(-(2**40)) == 0  # bounds outside int32
    assert series.purged == 3
    _append(series, [5, 2**31], [1.0, 2.0])
    assert series.narrow == (False, narrow)
    assert series.steps.tolist() == [5, 2**31]
    assert series.drop_from(2**31) == 1 and series.steps.tolist() == [5]


def test_nan_payloads_and_signed_zeros_are_kept_bit_for_bit(narrow) -> None:
    float32_nan = np.array([np.float32("nan")]).astype(np.float64)  # a NaN a float32 field gave
    payload = np.array([0x7FF8_0000_0000_1234], dtype=np.uint64).view(np.float64)  # no float32 holds it
    series = Series("x")
    series.append(np.array([1, 2]), np.zeros(2), np.concatenate((float32_nan, [-0.0])))
    assert series.narrow == (narrow, narrow)
    series.append(np.array([3]), np.zeros(1), payload)
    assert series.narrow == (narrow, False)
    expected = np.concatenate((float32_nan, [-0.0], payload))
    assert series.values.view(np.uint64).tolist() == expected.view(np.uint64).tolist()


def test_an_adopted_batch_is_kept_wide_until_it_grows(narrow) -> None:
    series = Series("loss")
    steps, values = np.arange(100, dtype=np.int64), np.linspace(0, 1, 100).astype(np.float32).astype(float)
    series.append(steps, np.zeros(100), values, adopt=True)
    assert series.narrow == (False, False) and series.nbytes() == 24 * 100  # the load's own columns
    _append(series, [100], [0.5])
    assert series.narrow == (narrow, narrow)
    assert series.values[:100].tolist() == values.tolist() and series.steps[-1] == 100


def test_narrow_and_wide_series_agree_after_any_appends(monkeypatch) -> None:
    """The same random appends (restarts, equal steps, NaN, float64 values, huge steps) both ways."""
    series, kinds = {}, set()
    for narrow in (True, False):
        monkeypatch.setattr(series_module, "NARROW", narrow)
        one, seen = Series("x"), []
        rng = np.random.default_rng(7)
        for _ in range(300):
            count = int(rng.integers(1, 40))
            last = one.last_step or 0
            steps = last + np.cumsum(rng.integers(-3, 4, count))
            if rng.random() < 0.02:
                steps = steps + 2**33
            values = rng.normal(size=count).astype(np.float32).astype(np.float64)
            if rng.random() < 0.05:
                values[0] = rng.normal()  # a float64 value
            if rng.random() < 0.05:
                values[-1] = np.nan
            seen.append(one.append(steps, rng.random(count) * 1e9, values, adopt=rng.random() < 0.1))
            if rng.random() < 0.05:
                seen.append(one.drop_from(int(last)))
            kinds.add((narrow, one.narrow))
        series[narrow] = (one, seen)
    assert {(True, (True, True)), (True, (True, False)), (True, (False, False))} <= kinds
    (narrow_one, narrow_seen), (wide_one, wide_seen) = series[True], series[False]
    assert narrow_seen == wide_seen
    for name in ("steps", "wall_times", "values"):
        assert getattr(narrow_one, name).tobytes() == getattr(wide_one, name).tobytes()
    assert narrow_one.purged == wide_one.purged


def test_keep_wide_widens_and_stays_wide(narrow) -> None:
    series = Series("reward")
    _append(series, range(100), [0.5] * 100)
    _append(series, [100], [0.25])
    series.keep_wide()  # a reader of the whole columns at every batch (the health engine's rules)
    assert series.narrow == (False, False)
    _append(series, range(101, 300), [0.5] * 199)
    assert series.narrow == (False, False)
    assert series.steps.tolist() == list(range(300)) and series.values[100] == 0.25
    assert Series("x", wide=True).narrow == (False, False)
