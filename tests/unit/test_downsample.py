"""Downsampling for display: per-column min/max, spike-preserving sparkline values, NaN-safe glyphs."""

from __future__ import annotations

import numpy as np
import pytest

from rltop.model.downsample import column_bounds, downsample_minmax, sparkline_values
from rltop.view.chart.spark import (
    FLAT_GLYPH,
    NON_FINITE_GLYPH,
    SPARK_GLYPHS,
    scale_floor,
    spark_rows,
    spark_scale,
    sparkline_glyphs,
    sparkline_text,
)


def test_columns_split_points_evenly_and_cover_all() -> None:
    bounds = column_bounds(30_000, 40)
    assert bounds[0] == 0 and bounds[-1] == 30_000 and len(bounds) == 41
    sizes = np.diff(bounds)
    assert sizes.min() == sizes.max() == 750
    uneven = np.diff(column_bounds(10, 3))
    assert uneven.sum() == 10 and uneven.max() - uneven.min() <= 1


def test_minmax_matches_a_python_reference() -> None:
    rng = np.random.default_rng(0)
    values = rng.normal(size=1003)
    mins, maxs = downsample_minmax(values, 17)
    bounds = column_bounds(values.size, 17)
    for i in range(17):
        chunk = values[bounds[i] : bounds[i + 1]]
        assert mins[i] == chunk.min() and maxs[i] == chunk.max()


def test_minmax_ignores_non_finite_and_marks_empty_columns() -> None:
    values = np.array([1.0, np.nan, 3.0, np.inf, np.nan, -np.inf, 2.0, 5.0])
    mins, maxs = downsample_minmax(values, 4)
    assert mins[0] == 1.0 and maxs[0] == 1.0  # NaN does not poison its column
    assert mins[1] == 3.0 and maxs[1] == 3.0  # neither does +inf
    assert np.isnan(mins[2]) and np.isnan(maxs[2])  # NaN and -inf only: no finite value
    assert (mins[3], maxs[3]) == (2.0, 5.0)


def test_short_series_are_not_stretched() -> None:
    mins, maxs = downsample_minmax(np.array([1.0, 2.0, 3.0]), 40)
    assert mins.tolist() == [1.0, 2.0, 3.0] == maxs.tolist()
    assert len(sparkline_text(np.array([1.0, 2.0, 3.0]), 40)) == 3
    empty_min, empty_max = downsample_minmax(np.array([]), 10)
    assert empty_min.size == empty_max.size == 0
    assert sparkline_text(np.array([]), 10) == ""


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_single_spike_survives_heavy_downsampling(sign: float) -> None:
    rng = np.random.default_rng(1)
    values = 1.0 + 0.01 * rng.normal(size=30_000)
    values[12_345] = 1.0 + sign * 50.0
    shown = sparkline_values(values, 40)
    assert shown.size == 40
    spike_column = 12_345 // 750
    assert shown[spike_column] == values[12_345]
    text = sparkline_text(values, 40)
    assert text[spike_column] == (SPARK_GLYPHS[-1] if sign > 0 else SPARK_GLYPHS[0])
    # Everything else is the noise around 1.0: drawn as its level, at the other end of the scale.
    others = text[:spike_column] + text[spike_column + 1 :]
    assert set(others) == {SPARK_GLYPHS[0] if sign > 0 else SPARK_GLYPHS[-1]}


def test_noise_draws_as_its_level_not_as_its_envelope() -> None:
    rng = np.random.default_rng(2)
    values = np.concatenate((rng.normal(0.0, 1.0, 20_000), rng.normal(10.0, 1.0, 20_000)))
    shown = sparkline_values(values, 40)
    assert np.all(np.abs(shown[:20]) < 0.5) and np.all(np.abs(shown[20:] - 10.0) < 0.5)


def test_a_spike_down_in_a_falling_curve_is_kept() -> None:
    values = np.linspace(5.0, 1.0, 3000)
    values[1500] = -20.0
    shown = sparkline_values(values, 30)
    assert shown[15] == -20.0
    assert np.all(np.diff(np.delete(shown, 15)) < 0)


def test_a_smooth_ramp_stays_monotonic_and_even() -> None:
    shown = sparkline_values(np.linspace(0.0, 1.0, 10_000), 50)
    assert np.all(np.diff(shown) > 0)
    assert sparkline_text(np.linspace(0.0, 1.0, 10_000), 8) == SPARK_GLYPHS


def test_non_finite_values_never_crash_and_are_marked() -> None:
    values = np.array([np.nan, 1.0, np.inf, 2.0, -np.inf, 3.0, np.nan])
    text = sparkline_text(values, 40)
    assert len(text) == 7
    assert text[0] == text[2] == text[4] == text[6] == NON_FINITE_GLYPH
    assert text[1] == SPARK_GLYPHS[0] and text[5] == SPARK_GLYPHS[-1]
    assert sparkline_text(np.full(100, np.nan), 10) == NON_FINITE_GLYPH * 10
    assert sparkline_text(np.array([np.inf, -np.inf]), 10) == NON_FINITE_GLYPH * 2
    # A column holding a non-finite point is marked, however many finite points share it: a
    # 14-step run with a NaN at its last step keeps its mark in a 5-cell narrow line.
    mixed = np.array([np.nan] * 50 + [5.0] + [np.nan] * 49 + [1.0] * 100)
    assert sparkline_text(mixed, 2) == NON_FINITE_GLYPH + FLAT_GLYPH
    crash = np.array([3.2, 2.1, 1.4, 0.9, 0.5, 0.3, 0.1, 0.05, 0.01, 1e-3, 1e-4, 1e-5, 1e-6, np.nan])
    assert (
        sparkline_text(crash, 5)[-1] == NON_FINITE_GLYPH
        and NON_FINITE_GLYPH not in sparkline_text(crash, 5)[:-1]
    )
    spiky = np.ones(100_000)
    spiky[53_210] = np.inf
    text = sparkline_text(spiky, 40)
    assert text.count(NON_FINITE_GLYPH) == 1 and text.index(NON_FINITE_GLYPH) == 53_210 * 40 // 100_000


def test_flat_and_extreme_series() -> None:
    assert sparkline_text(np.full(500, 7.0), 20) == FLAT_GLYPH * 20
    huge = np.array([-1.7e308, 1.7e308, 0.0])
    text = sparkline_text(huge, 3)
    assert text == SPARK_GLYPHS[0] + SPARK_GLYPHS[-1] + SPARK_GLYPHS[4]  # 0 is mid-scale: 3.5 rounds to 4
    tiny = np.array([1e-300, 2e-300, 3e-300, 8e-300])
    assert sparkline_text(tiny, 4) == SPARK_GLYPHS[0] + SPARK_GLYPHS[1] + SPARK_GLYPHS[2] + SPARK_GLYPHS[-1]
    assert sparkline_text(np.arange(5.0), 0) == ""


def test_fixed_scale_clips_out_of_range_columns() -> None:
    glyphs = sparkline_glyphs(np.array([-5.0, 0.0, 0.5, 1.0, 9.0, np.nan]), low=0.0, high=1.0)
    assert glyphs == SPARK_GLYPHS[0] * 2 + SPARK_GLYPHS[4] + SPARK_GLYPHS[-1] * 2 + NON_FINITE_GLYPH


# -- an honest scale ---------------------------------------------------------------------------------


def test_a_two_percent_change_is_a_gentle_slope_not_a_collapse() -> None:
    """grpo_healthy's entropy, 4.582 -> 4.475 (-2 %), on a card marked ok: it used to be drawn
    ``██████▇▇▇▆▆▆▅▅▄▄▃▃▃▂▂▁``; the scale now spans at least a tenth of the values' magnitude."""
    entropy = np.linspace(4.582, 4.48, 200)
    text = sparkline_text(entropy, 22)
    levels = [SPARK_GLYPHS.index(glyph) for glyph in text]
    assert max(levels) - min(levels) <= 2 and levels == sorted(levels, reverse=True)
    rows = spark_rows(sparkline_values(entropy, 26), 2)
    assert rows[0].strip() and rows[1] == rows[1].replace(" ", "")  # most of the bar stays full
    collapse = sparkline_text(np.linspace(4.582, 0.5, 200), 22)  # a real collapse still reads as one
    assert collapse[0] == SPARK_GLYPHS[-1] and collapse[-1] == SPARK_GLYPHS[0]


def test_noise_far_under_a_threshold_stays_at_the_bottom() -> None:
    clip_ratio = np.array([0.0, 1e-4, 0.0, 2e-4, 0.0, 5e-5])
    assert set(sparkline_text(clip_ratio, 10, thresholds=(None, 0.05, None, 0.2))) == {SPARK_GLYPHS[0]}
    assert sparkline_text(clip_ratio, 10)[3] == SPARK_GLYPHS[-1]  # without a threshold: its own range
    assert scale_floor(clip_ratio, (None, 0.05, None, 0.2)) == 0.25 * 0.05
    assert spark_scale(np.array([0.001, 0.002]), (None, 0.05, None, None)) == (0.0, 0.0125)  # zero stays
    assert spark_scale(np.array([-0.002, -0.0019])) == pytest.approx((-0.00205, -0.00185))  # widened
    assert spark_scale(np.array([-2.0, 3.0])) == (-2.0, 3.0)  # a range wider than the floor is kept


def test_constants_draw_as_a_flat_line() -> None:
    assert sparkline_text(np.zeros(100), 10) == "─" * 10
    assert sparkline_text(np.array([2.5, 2.5, np.nan]), 10) == "──" + NON_FINITE_GLYPH
    assert spark_rows(np.full(4, 3.0), 3) == ["    ", "────", "    "]
    assert spark_rows(np.array([3.0, 3.0, np.nan]), 2) == ["   ", "──×"]
