"""`SeriesSummary` (rltop.model.summary) against the functions it stands in for, on growing series.

The dashboard draws a live card from a running summary instead of reading the whole series at every
new point. Its statistics must be `series_stats` exactly, and its sparkline columns
`sparkline_values` up to the rounding of the column means (summed in another order), through
appends of any size, non-finite values, restarts that purge points, and a series replaced by a
new one.
"""

from __future__ import annotations

import numpy as np
import pytest

from rltop.model import series as series_module
from rltop.model import summary as summary_module
from rltop.model.downsample import column_bounds, spark_bounds, sparkline_values
from rltop.model.series import Series
from rltop.model.stats import median_of, series_stats
from rltop.model.summary import BLOCK, SeriesSummary


def _same_stats(summary: SeriesSummary, series: Series) -> None:
    got, want = summary.stats(series), series_stats(series)
    assert got == want  # (== treats 0.0 and -0.0 alike: the extremes may differ in sign only)


def _same_columns(summary: SeriesSummary, series: Series, width: int) -> None:
    got, want = summary.columns(series, width), sparkline_values(series.values, width)
    assert got.shape == want.shape
    # Sums in another order differ in proportion to the values summed, not to their mean (a column
    # of ±1e4 spikes whose mean is 1e-5).
    finite = series.values[np.isfinite(series.values)]
    scale = float(np.abs(finite).max()) if finite.size else 0.0
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=max(1e-300, 1e-12 * scale), equal_nan=True)


def _values(rng: np.random.Generator, count: int, kind: str) -> np.ndarray:
    if kind == "walk":
        values = np.cumsum(rng.normal(size=count))
    elif kind == "spiky":
        values = rng.normal(size=count)
        values[rng.random(count) < 0.002] *= 1e4
    elif kind == "plateaus":
        values = np.repeat(rng.normal(size=count // 50 + 1), 50)[:count]
    else:  # "broken": NaN and ±Inf among the values
        values = rng.normal(size=count)
        bad = rng.random(count) < 0.01
        values[bad] = rng.choice([np.nan, np.inf, -np.inf], size=int(bad.sum()))
    return values


@pytest.mark.parametrize("float32", [False, True], ids=["float64", "float32"])
@pytest.mark.parametrize("kind", ["walk", "spiky", "plateaus", "broken"])
def test_a_growing_series_is_summarised_as_if_read_whole(kind, float32, monkeypatch):
    # float32: values as event files log them, which a series keeps in a narrow column (read
    # through `Series.values_at`); float64 ones keep it wide.
    monkeypatch.setattr(series_module, "NARROW", True)
    rng = np.random.default_rng(len(kind))
    series, summary = Series("t"), SeriesSummary()
    step = 0
    for size in [1, 1, 2, 5, 40, 1, 700, 1, 3, 9000, 1, 1, 25_000, 1, 64, 63, 65, 1]:
        values = _values(rng, size, kind)
        if float32:
            values = values.astype(np.float32).astype(np.float64)
        series.append(np.arange(step, step + size), np.zeros(size), values)
        assert series.narrow[1] == float32
        step += size
        _same_stats(summary, series)
        for width in (1, 7, 26, 47, 120):
            _same_columns(summary, series, width)


def test_long_series_are_summarised_by_blocks(monkeypatch):
    """Past a few blocks per column the columns come from the block summaries, not from reading the
    series (the fallback is made to fail here), in about half a byte per point."""
    rng = np.random.default_rng(7)
    series, summary = Series("t"), SeriesSummary()
    series.append(np.arange(200_000), np.zeros(200_000), _values(rng, 200_000, "broken"))
    want = {width: sparkline_values(series.values, width) for width in (10, 26, 61)}

    def whole_series_read(values, width):
        raise AssertionError("read the whole series")

    monkeypatch.setattr(summary_module, "sparkline_values", whole_series_read)
    for width, columns in want.items():
        np.testing.assert_allclose(summary.columns(series, width), columns, rtol=1e-12, equal_nan=True)
    non_finite = int((~np.isfinite(series.values)).sum())
    assert summary.nbytes() <= 0.5 * len(series) + 8 * non_finite


@pytest.mark.parametrize("kind", ["walk", "spiky", "broken"])
def test_kept_columns_equal_every_column_summed_anew_point_by_point(kind, monkeypatch):
    """Goal of `REUSE_COLUMNS` (a live card sums one column per point): after every single point,
    across column-size changes, widths (300: a column of as many points as columns, its last one
    down to a point; 3: few columns) and a restart's purge, the columns equal the ones summed anew,
    bit for bit; the shown values of the last two columns alone are found again when the typical
    half-range stays (see the next test for when it moves)."""
    rng = np.random.default_rng(len(kind) + 20)
    series, plain = Series("t"), SeriesSummary()
    kept = {width: SeriesSummary() for width in (3, 26, 47, 300)}  # (a card keeps its own, at its width)
    partial = {True: 0, False: 0}
    last_columns_shown = SeriesSummary._last_columns_shown

    def counted(self, *args):
        shown = last_columns_shown(self, *args)
        partial[shown is not None] += 1
        return shown

    monkeypatch.setattr(SeriesSummary, "_last_columns_shown", counted)
    series.append(np.arange(90_000), np.zeros(90_000), _values(rng, 90_000, kind))
    step, reused = 90_000, 0

    def check(width: int) -> None:
        nonlocal reused
        mine = kept[width]._kept_columns
        reused += mine is not None and mine[0] == (width, int(spark_bounds(len(series), width)[1]))
        monkeypatch.setattr(summary_module, "REUSE_COLUMNS", True)
        got = kept[width].columns(series, width)
        monkeypatch.setattr(summary_module, "REUSE_COLUMNS", False)
        want = plain.columns(series, width)
        assert got.tobytes() == want.tobytes()
        _same_columns(plain, series, width)

    for point in range(700):
        value = np.nan if kind == "broken" and point % 97 == 5 else rng.normal()
        value *= 400.0 if point % 53 == 7 else 1.0  # (a spike in the last column)
        series.append(np.array([step]), np.zeros(1), np.array([value]))
        step += 1
        for width in (300,) if point < 150 else (3, 26, 47):
            check(width)
        if point == 400:  # resumed from step 60,000: every later point replaced
            series.append(np.arange(60_000, 60_100), np.zeros(100), _values(rng, 100, kind))
            step = 60_100
    assert reused > 1000  # (the kept columns did serve)
    assert partial[True] > 1000  # (the last two columns alone were found again)


def test_a_point_that_moves_the_typical_half_range_redoes_every_column(monkeypatch):
    """Three columns of about 300 points, half-ranges 0.55 (with a spike of 1), 0.1 and 0.075: the
    typical one 0.1. A point of 10 in the last column makes the typical one 0.55: every column's
    spike test changes (the first column's spike is no longer one), so every shown value is found
    again; it equals the plain path's bit for bit."""
    shape = np.concatenate([np.linspace(-scale, scale, 300) for scale in (0.1, 0.1, 0.05)])
    shape[150] = 1.0
    series, kept, plain = Series("t"), SeriesSummary(), SeriesSummary()
    series.append(np.arange(901), np.zeros(901), np.append(shape, 0.1))  # (columns of 301 until 903 points)
    partial = []
    last_columns_shown = SeriesSummary._last_columns_shown

    def counted(self, *args):
        partial.append(last_columns_shown(self, *args))
        return partial[-1]

    monkeypatch.setattr(SeriesSummary, "_last_columns_shown", counted)
    assert kept.columns(series, 3)[0] == 1.0  # a spike under the typical half-range 0.1 (kept from here on)
    for value in (10.0, 0.2):
        series.append(np.array([len(series)]), np.zeros(1), np.array([value]))
        got = kept.columns(series, 3)
        monkeypatch.setattr(summary_module, "REUSE_COLUMNS", False)
        assert got.tobytes() == plain.columns(series, 3).tobytes()
        monkeypatch.setattr(summary_module, "REUSE_COLUMNS", True)
        assert got[0] != 1.0  # no spike under the typical half-range 0.55
    assert [shown is not None for shown in partial] == [False, True]


def test_long_sparklines_have_fixed_columns_the_last_holding_the_rest():
    for count, width in ((26 * 256, 26), (26 * 256 + 1, 26), (90_000, 300), (90_299, 300), (1_000_003, 47)):
        bounds = spark_bounds(count, width)
        sizes = np.diff(bounds)
        assert bounds[0] == 0 and bounds[-1] == count and sizes.shape[0] == width
        assert (sizes[:-1] == sizes[0]).all() and sizes[0] - width < sizes[-1] <= sizes[0]
    assert (spark_bounds(26 * 256 - 1, 26) == column_bounds(26 * 256 - 1, 26)).all()  # shorter: equal slices


def test_a_restart_that_purges_points_starts_the_summary_over():
    rng = np.random.default_rng(3)
    series, summary = Series("t"), SeriesSummary()
    series.append(np.arange(30_000), np.zeros(30_000), _values(rng, 30_000, "walk"))
    _same_stats(summary, series)
    # Training resumed from the checkpoint at step 20,000: every point from there on is replaced.
    series.append(np.arange(20_000, 20_500), np.zeros(500), _values(rng, 500, "spiky"))
    assert series.purged == 10_000
    _same_stats(summary, series)
    _same_columns(summary, series, 26)


def test_a_new_series_object_is_summarised_afresh():
    rng = np.random.default_rng(5)
    first, second, summary = Series("t"), Series("t"), SeriesSummary()
    first.append(np.arange(10_000), np.zeros(10_000), _values(rng, 10_000, "walk"))
    second.append(np.arange(10_000), np.zeros(10_000), _values(rng, 10_000, "plateaus"))
    _same_stats(summary, first)
    _same_stats(summary, second)  # the same length, another series: nothing carried over
    _same_columns(summary, second, 26)


def test_a_mostly_broken_series_falls_back_to_reading_it_whole():
    rng = np.random.default_rng(9)
    series, summary = Series("t"), SeriesSummary()
    values = rng.normal(size=5_000)
    values[::2] = np.nan
    series.append(np.arange(5_000), np.zeros(5_000), values)
    _same_stats(summary, series)
    series.append(np.arange(5_000, 5_100), np.zeros(100), rng.normal(size=100))
    _same_stats(summary, series)


def test_block_boundaries_and_exact_multiples():
    rng = np.random.default_rng(11)
    for count in (BLOCK * 26 * 4, BLOCK * 26 * 4 + 1, BLOCK * 26 * 4 - 1, BLOCK * 1000):
        series, summary = Series("t"), SeriesSummary()
        series.append(np.arange(count), np.zeros(count), _values(rng, count, "spiky"))
        _same_columns(summary, series, 26)


@pytest.mark.parametrize("count", [*range(1, 40), 499, 500, 1000, 2047, 2048])
def test_median_of_is_numpys_median_bit_for_bit(count):
    rng = np.random.default_rng(count)
    for _ in range(20):
        values = rng.normal(size=count) * 10.0 ** rng.integers(-6, 6)
        if rng.random() < 0.3:
            values = rng.choice([0.0, -0.0, 1.5, -1.5], size=count)  # ties and signed zeros
        want, got = np.median(values), median_of(values)
        assert got == want and np.signbit(got) == np.signbit(want) and type(got) is type(want)
