"""The rules' window statistics: the blocked median gives np.median's numbers exactly."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

from rltop.health.numerics import robust
from rltop.health.numerics.robust import rolling_median, trailing_median, window_medians


@pytest.mark.parametrize("width", [1, 2, 3, 4, 49, 50, 51, 130])  # 130: maxima along rows
def test_window_medians_equal_numpy_median_bit_for_bit(width, monkeypatch):
    monkeypatch.setattr(robust, "_MEDIAN_ROWS", 64)  # many blocks, and a short last one
    rng = np.random.default_rng(width)
    values = rng.normal(size=1000)
    for fill, share in ((np.inf, 50), (-np.inf, 60), (0.0, 4), (-0.0, 4)):  # signed zeros, infinities
        values[rng.choice(len(values), len(values) // share)] = fill
    values[:40] = 1.0  # long ties
    windows = sliding_window_view(values, width)
    with np.errstate(invalid="ignore"):  # inf - inf in a mean, for both
        expected, got = np.median(windows, axis=1), window_medians(windows)
    np.testing.assert_array_equal(got, expected)
    assert np.array_equal(np.signbit(got), np.signbit(expected))


def test_nan_and_other_dtypes_take_numpy_median_itself(monkeypatch):
    monkeypatch.setattr(robust, "_MEDIAN_ROWS", 8)
    values = np.arange(100, dtype=np.float64)
    values[57] = np.nan
    windows = sliding_window_view(values, 10)
    np.testing.assert_array_equal(window_medians(windows), np.median(windows, axis=1))
    single = sliding_window_view(np.arange(100, dtype=np.float32), 10)
    result = window_medians(single)
    assert result.dtype == np.float32
    np.testing.assert_array_equal(result, np.median(single, axis=1))


def test_trailing_and_rolling_medians_over_a_history_and_one_point_at_a_time(monkeypatch):
    monkeypatch.setattr(robust, "_MEDIAN_ROWS", 16)
    values = np.random.default_rng(7).lognormal(size=400)
    whole_trailing = trailing_median(values, 0, 50, 10)
    whole_rolling = rolling_median(values, 0, 25)
    for j in range(10, 400):
        assert whole_trailing[j] == np.median(values[max(j - 50, 0) : j])
    for j in range(24, 400):
        assert whole_rolling[j] == np.median(values[j - 24 : j + 1])
    np.testing.assert_array_equal(trailing_median(values, 397, 50, 10), whole_trailing[397:])
    np.testing.assert_array_equal(rolling_median(values, 397, 25), whole_rolling[397:])


@pytest.mark.parametrize("window", [1, 2, 3, 10, 50])
def test_window_extremes_equal_a_reduced_sliding_view(window):
    rng = np.random.default_rng(window)
    for length in (window, window + 1, 3 * window - 1, 1000):
        values = rng.normal(size=length)
        values[rng.choice(length, max(length // 40, 1))] = rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0])
        rows = sliding_window_view(values, window)
        for pick, reduce in ((np.maximum, rows.max), (np.minimum, rows.min)):
            np.testing.assert_array_equal(robust.window_extremes(values, window, pick), reduce(axis=1))


def test_rolling_range_over_a_history_and_point_by_point():
    rng = np.random.default_rng(3)
    values = np.round(rng.normal(size=400), 1)
    values[50:80] = 0.5  # stuck
    values[200] = np.nan
    whole = robust.rolling_range(values, 0, 10)
    one_by_one = np.concatenate([robust.rolling_range(values[: j + 1], j, 10) for j in range(len(values))])
    np.testing.assert_array_equal(whole, one_by_one)
    assert np.isnan(whole[:9]).all() and (whole[59:80] == 0).all()
