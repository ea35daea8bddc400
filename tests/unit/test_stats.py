"""Series statistics for displays: finite-only extremes, mean of the last 10 %, trend, short numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rltop.model.series import Series
from rltop.model.stats import SeriesStats, series_stats, trend_of
from rltop.view.text.numbers import format_short


def make_series(values, steps=None) -> Series:
    values = np.asarray(values, dtype=np.float64)
    steps = np.arange(1, values.size + 1) if steps is None else np.asarray(steps)
    series = Series("train/x")
    series.append(steps, np.zeros(values.size), values)
    return series


def test_empty_series() -> None:
    assert series_stats(Series("t")) == SeriesStats(0, None, None, None, None, None, None, "flat", 0)


def test_basic_statistics() -> None:
    stats = series_stats(make_series(np.arange(1.0, 101.0), steps=np.arange(10, 1010, 10)))
    assert (stats.count, stats.first_step, stats.last_step) == (100, 10, 1000)
    assert (stats.last, stats.min, stats.max) == (100.0, 1.0, 100.0)
    assert stats.mean_last_10pct == pytest.approx(np.mean(np.arange(91.0, 101.0)))
    assert stats.trend == "up" and stats.non_finite == 0


def test_non_finite_values_are_counted_not_used() -> None:
    values = [1.0, np.nan, 5.0, np.inf, -2.0, -np.inf, 3.0, np.nan]
    stats = series_stats(make_series(values))
    assert stats.non_finite == 4
    assert (stats.min, stats.max) == (-2.0, 5.0)
    assert math.isnan(stats.last)  # the last point as logged
    # The last 10 % of 8 points is 1 point, NaN: no finite value to average.
    assert stats.mean_last_10pct is None


def test_all_non_finite() -> None:
    stats = series_stats(make_series([np.nan, np.inf]))
    assert stats.min is None and stats.max is None and stats.mean_last_10pct is None
    assert stats.non_finite == 2 and stats.trend == "flat" and stats.last == math.inf


def test_mean_of_last_tenth_rounds_up_to_whole_points() -> None:
    stats = series_stats(make_series(np.arange(15.0)))  # ceil(1.5) = 2 points: 13, 14
    assert stats.mean_last_10pct == 13.5
    assert series_stats(make_series([7.0])).mean_last_10pct == 7.0


def test_trends() -> None:
    rng = np.random.default_rng(0)
    assert trend_of(np.linspace(0, 1, 200)) == "up"
    assert trend_of(np.linspace(1, 0, 200)) == "down"
    assert trend_of(np.full(200, 3.0)) == "flat"
    assert trend_of(rng.normal(size=2000)) == "flat"  # level noise
    assert trend_of(np.array([1.0])) == "flat"
    # A jump in the last points is a recent change...
    assert trend_of(np.concatenate((np.zeros(180), np.ones(20)))) == "up"
    # ...but a tiny change after a huge early fall is flat (5 % of the range rule).
    collapse = np.concatenate((np.linspace(4.5, 0.001, 30), 0.001 - np.linspace(0, 1e-4, 170)))
    assert trend_of(collapse) == "flat"
    # Noise on a clear ramp is still a ramp.
    assert trend_of(np.linspace(0, 10, 1000) + rng.normal(0, 0.5, 1000)) == "up"


def test_format_short() -> None:
    cases = {
        0.0: "0", 1.93: "1.93", 0.02431: "0.02431", 4.58e-4: "4.58e-4", -4.58e-4: "-4.58e-4",
        1.2e6: "1.2e6", 12345.6: "12346", 33.8: "33.8", 1e-3: "0.001", -0.5: "-0.5", 1e-4: "1e-4",
        math.nan: "nan", math.inf: "inf", -math.inf: "-inf",
    }  # fmt: skip
    for value, text in cases.items():
        assert format_short(value) == text, value
    assert format_short(None) == "–"
    magnitudes = np.geomspace(1e-30, 1e30, 2000)
    for value in np.concatenate((magnitudes, -magnitudes)):
        text = format_short(float(value))
        assert len(text) <= 8, text
        assert float(text) == pytest.approx(value, rel=0.06), text
