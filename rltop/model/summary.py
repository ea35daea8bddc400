"""A live series' statistics and sparkline columns at a cost that does not grow with its history.

A dashboard card is redrawn each time its series gains a point. `series_stats` and
`sparkline_values` read the whole series: at 100k points that was 2 ms of numpy per card and new
point, at 1M points 10 ms. A `SeriesSummary` follows one series as it grows and reads only what is
new, plus a bounded part of the history:

- the count, extremes and non-finite count are carried forward over the appended points, and the
  positions of the non-finite points are kept (a handful: a series that is mostly non-finite
  falls back to `series_stats`);
- the trend reads its two windows (at most 1,000 finite points) and its range sample (2,048),
  found by position without compressing the series;
- the mean of the last 10 % reads that tail once (one pass; the card does not show it, the
  statistics hold it);
- nothing reads the whole series: `Series.values_at` widens only the points asked for when the
  series keeps its values as float32;
- sparkline columns come from summaries of `BLOCK`-point blocks (finite minimum, maximum, sum and
  count, about 0.45 B per point) plus the raw points at each column's two ends, so a column of
  any length costs two blocks' worth of raw points and a block per `BLOCK` points; a long
  sparkline's columns have a fixed size (`spark_bounds`), so only its last column is summed again
  at a new point, and only the last two columns' shown values are found again while the typical
  half-range of the spike rule stays the same (`REUSE_COLUMNS`).

The statistics equal `series_stats` exactly (zeros may differ in sign); the columns equal
`sparkline_values` up to the rounding of the column means, which are summed in another order
(tests/unit/test_summary.py holds both). A restart that purged points, or a new series object, starts
the summary over from the series (once, O(n)).
"""

from __future__ import annotations

import math
import os

import numpy as np

from rltop.model.downsample import spark_bounds, sparkline_values, spike_values, typical_half_range
from rltop.model.series import Series
from rltop.model.stats import (
    SeriesStats,
    range_stride,
    sample_spread,
    series_stats,
    trend_from,
    trend_window,
)

BLOCK = 64
"""Points per block summary."""
_BLOCK_OFFSETS = np.arange(BLOCK, dtype=np.int64)
DIRECT_COLUMN_POINTS = 4 * BLOCK
"""Series with fewer than this many points per column are downsampled directly (as cheap)."""
REUSE_COLUMNS = os.environ.get("RLTOP_PLAIN_CARDS", "") != "1"
"""Goal: a live card's sparkline costs one column per new point, not all of them (issue 28's CPU).
On: `columns` keeps the summaries of the columns a new point cannot change, and their shown
values. Off (``RLTOP_PLAIN_CARDS=1``, read at import): every column is summed at every call;
tests/unit/test_summary.py holds both equal."""
MAX_NON_FINITE_SHARE = 0.25
"""Beyond this share of non-finite points, their positions cost more than reading the series."""


class SeriesSummary:
    """What the dashboard shows of one series, kept up to date as it grows (`update`)."""

    __slots__ = ("_series", "_version", "_count", "_min", "_max", "_non_finite", "_positions",
                 "_mins", "_maxs", "_sums", "_finite", "_blocks", "_range", "_kept_columns",
                 "_kept_shown")  # fmt: skip

    def __init__(self) -> None:
        self._series: Series | None = None
        self._version: tuple[int, int] | None = None
        self._reset()

    def _reset(self) -> None:
        self._count = 0
        self._min = math.inf
        self._max = -math.inf
        self._non_finite = 0
        self._positions: np.ndarray | None = np.empty(0, dtype=np.int64)  # None: too many to keep
        self._mins = np.empty(0, dtype=np.float64)
        self._maxs = np.empty(0, dtype=np.float64)
        self._sums = np.empty(0, dtype=np.float64)
        self._finite = np.empty(0, dtype=np.int32)
        self._blocks = 0
        self._range: tuple[tuple[int, int], float] | None = None  # (sample key, spread)
        # ((width, column size), the columns' summaries, every one but the last final): see `columns`
        self._kept_columns: tuple[tuple[int, int], tuple[np.ndarray, ...]] | None = None
        # (key, the columns' means, typical half-range, the values shown) of the last call: `columns`
        self._kept_shown: tuple[tuple[int, int], np.ndarray, float, np.ndarray] | None = None

    def update(self, series: Series) -> None:
        """Take in what ``series`` gained since the last call (all of it after a restart's purge)."""
        version = (len(series), series.purged)
        if series is self._series and version == self._version:
            return
        if (
            series is not self._series
            or self._version is None
            or series.purged != self._version[1]
            or (len(series) < self._count)
        ):
            self._reset()
            self._series = series
        new = series.values_at(slice(self._count, None))  # (only what is new: a narrow series widens it)
        if new.shape[0]:
            finite = np.isfinite(new)
            if finite.any():
                kept = new[finite]
                self._min = min(self._min, float(kept.min()))
                self._max = max(self._max, float(kept.max()))
            bad = int(new.shape[0] - np.count_nonzero(finite))
            if bad:
                self._non_finite += bad
                if self._positions is not None:
                    self._positions = np.concatenate((self._positions, np.flatnonzero(~finite) + self._count))
                    if self._non_finite > MAX_NON_FINITE_SHARE * len(series) and self._non_finite > BLOCK:
                        self._positions = None
        self._count = len(series)
        self._version = version
        self._add_blocks(series)

    def _add_blocks(self, series: Series) -> None:
        """Summaries of the blocks that became complete."""
        complete = self._count // BLOCK
        if complete <= self._blocks:
            return
        chunk = series.values_at(slice(self._blocks * BLOCK, complete * BLOCK)).reshape(-1, BLOCK)
        finite = np.isfinite(chunk)
        mins = np.where(finite, chunk, np.inf).min(axis=1)
        maxs = np.where(finite, chunk, -np.inf).max(axis=1)
        sums = np.where(finite, chunk, 0.0).sum(axis=1)
        counts = finite.sum(axis=1, dtype=np.int32)
        if complete >= self._mins.shape[0]:  # (one more than the blocks: the neutral one of `columns`)
            capacity = max(complete + 1, int(self._mins.shape[0] * 1.5), 16)
            self._mins, self._maxs, self._sums, self._finite = (
                _grown(array, capacity, self._blocks)
                for array in (self._mins, self._maxs, self._sums, self._finite)
            )  # fmt: skip
        done = slice(self._blocks, complete)
        self._mins[done], self._maxs[done], self._sums[done], self._finite[done] = mins, maxs, sums, counts
        self._blocks = complete

    # -- what the dashboard reads ---------------------------------------------------------------

    def stats(self, series: Series) -> SeriesStats:
        """`series_stats(series)`, without reading the whole series."""
        self.update(series)
        count = self._count
        if count == 0 or self._positions is None:
            return series_stats(series)
        finite_count = count - self._non_finite
        tail_start = count - max(1, math.ceil(count * 0.1))
        tail = series.values_at(slice(tail_start, None))
        if self._non_finite_from(tail_start):
            tail = tail[np.isfinite(tail)]
        return SeriesStats(
            count=count,
            first_step=series.first_step,
            last_step=series.last_step,
            last=float(series.values_at(-1)),
            min=self._min if finite_count else None,
            max=self._max if finite_count else None,
            mean_last_10pct=float(tail.mean()) if tail.size else None,
            trend=self._trend(series, finite_count),
            non_finite=self._non_finite,
        )

    def _non_finite_from(self, start: int) -> int:
        """Non-finite points at or after index ``start``."""
        positions = self._positions
        return int(positions.shape[0] - np.searchsorted(positions, start)) if positions is not None else 1

    def _finite_at(self, ranks: np.ndarray) -> np.ndarray:
        """Indices in the series of the finite points of these ranks (0 = the first finite point)."""
        positions = self._positions
        if positions is None or positions.shape[0] == 0:
            return ranks
        # The i-th non-finite point has positions[i] - i finite points before it.
        before = positions - np.arange(positions.shape[0], dtype=np.int64)
        return ranks + np.searchsorted(before, ranks, side="right")

    def _trend(self, series: Series, finite_count: int) -> str:
        if finite_count < 2:
            return "flat"
        window = trend_window(finite_count)
        recent = slice(finite_count - window, finite_count)
        before = slice(max(0, finite_count - 2 * window), finite_count - window)
        at = series.values_at
        if self._non_finite:  # (ranks of finite points, not positions: gathered around the others)
            recent, before = (self._finite_at(np.arange(part.start, part.stop)) for part in (recent, before))
        return trend_from(at(recent), at(before), lambda: self._spread(series, finite_count))

    def _spread(self, series: Series, finite_count: int) -> float:
        """`sample_spread` of the range sample, kept while the sample stays the same (past 4,096
        points it takes every n-th value and gains one only every n points)."""
        stride = range_stride(finite_count)
        key = (stride, -(-finite_count // stride))
        if self._range is None or self._range[0] != key:
            sample = np.arange(0, finite_count, stride, dtype=np.int64)
            self._range = (key, sample_spread(series.values_at(self._finite_at(sample))))
        return self._range[1]

    def columns(self, series: Series, width: int) -> np.ndarray:
        """`sparkline_values(series.values, width)`, from the block summaries of a long series.

        Its columns have a fixed size (`spark_bounds`): the summaries of all but the last are kept
        for the next call, which sums only the last column while the size stays the same.
        """
        self.update(series)
        count, width = self._count, max(1, int(width))
        if count < width * DIRECT_COLUMN_POINTS:
            return sparkline_values(series.values, width)
        bounds = spark_bounds(count, width)
        key = (width, int(bounds[1]))
        kept = self._kept_columns
        fixed = bounds[-2] == (width - 1) * bounds[1]  # (equal slices otherwise: nothing to keep)
        if REUSE_COLUMNS and fixed and kept is not None and kept[0] == key:
            mins, maxs, sums, counts = kept[1]  # (the last column's place is filled anew)
            for column, last in zip(kept[1], self._column_summaries(series, bounds[-2:])):
                column[-1] = last[0]
            shown = self._last_columns_shown(key, bounds)
            if shown is not None:
                return shown
        else:
            mins, maxs, sums, counts = self._column_summaries(series, bounds)
            if fixed:
                self._kept_columns = (key, (mins, maxs, sums, counts))
        # (Masking the kept arrays in place is safe: a column without finite points stays so.)
        empty = counts == 0
        mins[empty] = np.nan
        maxs[empty] = np.nan
        with np.errstate(invalid="ignore", divide="ignore"):
            means = sums / counts
        typical = typical_half_range(mins, maxs)
        shown = means.copy() if typical is None else spike_values(mins, maxs, means, typical)
        shown[counts < np.diff(bounds)] = np.nan  # a NaN or ±Inf inside: marked, as `sparkline_values`
        self._kept_shown = (key, means, typical, shown.copy()) if fixed and typical is not None else None
        return shown

    def _last_columns_shown(self, key: tuple[int, int], bounds: np.ndarray) -> np.ndarray | None:
        """The shown values after a new point changed the last column's summary only: the last two
        columns are found again (a column's value reads its neighbours' means), the others are
        those of the last call; None when the typical half-range moved (every column may change)."""
        kept = self._kept_shown
        mins, maxs, sums, counts = self._kept_columns[1]  # type: ignore[index]
        if kept is None or kept[0] != key or mins.shape[0] < 3:
            return None
        _, means, typical, shown = kept
        if counts[-1] == 0:
            mins[-1] = maxs[-1] = np.nan
        with np.errstate(invalid="ignore", divide="ignore"):
            means[-1:] = sums[-1:] / counts[-1:]
        if typical_half_range(mins, maxs) != typical:
            self._kept_shown = None
            return None
        shown[-2:] = spike_values(mins[-3:], maxs[-3:], means[-3:], typical)[-2:]
        inside = counts[-2:] < np.diff(bounds[-3:])
        shown[-2:][inside] = np.nan  # a NaN or ±Inf inside
        return shown.copy()

    def _column_summaries(self, series: Series, bounds: np.ndarray) -> tuple[np.ndarray, ...]:
        """(finite min, max, sum, count) of each column between ``bounds``: whole blocks from their
        summaries, the raw points at each column's two ends (less than a block each)."""
        starts, ends = bounds[:-1], bounds[1:]
        columns = starts.shape[0]
        first_block = -(-starts // BLOCK)  # the whole blocks of each column: [first, last)
        last_block = ends // BLOCK
        # Whole blocks: one reduceat over [first, last) pairs. A column may hold none (the last one,
        # down to a point): its pair is then [last, last), which reduceat reads as the block at
        # last (at most the neutral one): masked below.
        pairs = np.empty(2 * columns, dtype=np.int64)
        pairs[0::2], pairs[1::2] = np.minimum(first_block, last_block), last_block
        blocks = self._blocks
        if pairs[-1] >= blocks:  # reduceat wants indices inside the array: a neutral block at the end
            self._ensure_spare()
        mins = np.minimum.reduceat(self._mins[: blocks + 1], pairs)[0::2]
        maxs = np.maximum.reduceat(self._maxs[: blocks + 1], pairs)[0::2]
        sums = np.add.reduceat(self._sums[: blocks + 1], pairs)[0::2]
        counts = np.add.reduceat(self._finite[: blocks + 1].astype(np.int64), pairs)[0::2]
        none = last_block <= first_block
        if none.any():
            mins[none], maxs[none], sums[none], counts[none] = np.inf, -np.inf, 0.0, 0
        left = (starts, np.minimum(first_block * BLOCK, ends))
        right = (np.maximum(last_block * BLOCK, left[1]), ends)
        edge_min, edge_max, edge_sum, edge_count = _segment_summaries(series, left, right)
        return (np.minimum(mins, edge_min), np.maximum(maxs, edge_max), sums + edge_sum, counts + edge_count)

    def _ensure_spare(self) -> None:
        """One neutral block after the last complete one."""
        if self._mins.shape[0] <= self._blocks:
            capacity = max(self._blocks + 1, int(self._mins.shape[0] * 1.5), 16)
            self._mins, self._maxs, self._sums, self._finite = (
                _grown(array, capacity, self._blocks)
                for array in (self._mins, self._maxs, self._sums, self._finite)
            )  # fmt: skip
        spare = self._blocks
        self._mins[spare], self._maxs[spare], self._sums[spare], self._finite[spare] = np.inf, -np.inf, 0.0, 0

    def nbytes(self) -> int:
        """Bytes the summary holds (block summaries and non-finite positions)."""
        arrays = (self._mins, self._maxs, self._sums, self._finite)
        positions = self._positions.nbytes if self._positions is not None else 0
        return int(sum(array.nbytes for array in arrays)) + positions


def _grown(array: np.ndarray, capacity: int, used: int) -> np.ndarray:
    grown = np.empty(capacity, dtype=array.dtype)
    grown[:used] = array[:used]
    return grown


def _segment_summaries(series: Series, left: tuple[np.ndarray, np.ndarray],
                       right: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, ...]:  # fmt: skip
    """Per column, (finite min, max, sum, count) over its left and right raw segments together.

    Each segment is shorter than a block: both are read as a (columns, 2, BLOCK) window from the
    segment's start, the points past its end masked out.
    """
    begins = np.empty((left[0].shape[0], 2, 1), dtype=np.int64)  # (columns, 2, 1)
    begins[:, 0, 0], begins[:, 1, 0] = left[0], right[0]
    ends = np.empty_like(begins)
    ends[:, 0, 0], ends[:, 1, 0] = left[1], right[1]
    index = begins + _BLOCK_OFFSETS
    window = series.values_at(np.minimum(index, len(series) - 1))
    finite = (index < ends) & np.isfinite(window)
    mins = np.where(finite, window, np.inf).min(axis=(1, 2))
    maxs = np.where(finite, window, -np.inf).max(axis=(1, 2))
    sums = np.where(finite, window, 0.0).sum(axis=(1, 2))
    counts = finite.sum(axis=(1, 2))
    return mins, maxs, sums, counts
