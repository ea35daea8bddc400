"""Robust window statistics for the rules, vectorised so a bulk load and a one-point update share code.

Every function judges the points ``values[start:]`` and may look back at earlier values, so the
engine can call it on a whole history at once or on each newly appended point.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

# 1.4826 * MAD estimates the standard deviation of normal data (scipy's scale="normal").
MAD_SCALE = 1.4826
# Up to this many points are computed one by one (cheaper than sliding windows for a live batch).
_FEW = 4
# Window rows partitioned at once by `window_medians`: a buffer of this many rows stays in the CPU
# cache, where ``np.median`` over a whole history copies every window first (40 MB for 100k
# points and a window of 50), which cost a quarter more.
_MEDIAN_ROWS = 4096
# Rows up to this wide have their maxima taken column by column (`_row_maxima`).
_COLUMN_MAXIMA = 64


def trailing_median(values: np.ndarray, start: int, window: int, warmup: int) -> np.ndarray:
    """For each index j >= start: median of the up-to-``window`` points before j (not j itself).

    NaN where fewer than ``warmup`` points precede j (too little history to compare against).
    """
    count = len(values) - start
    out = np.full(count, np.nan)
    if count <= 0:
        return out
    first = max(start, warmup, 1)
    if len(values) - first <= _FEW:  # a live batch: one median per point beats building windows
        for j in range(first, len(values)):
            out[j - start] = np.median(values[max(j - window, 0) : j])
        return out
    # Indices whose window is still growing (j < window): few in a run's life, a short loop.
    for j in range(first, min(window, len(values))):
        out[j - start] = np.median(values[:j])
    full_from = max(first, window)
    if full_from < len(values):
        windows = sliding_window_view(values[full_from - window : len(values) - 1], window)
        out[full_from - start :] = window_medians(windows)
    return out


def window_medians(windows: np.ndarray) -> np.ndarray:
    """``np.median(windows, axis=1)`` of 2-D ``windows`` (a sliding view), the same numbers, in
    cache-sized blocks: the middle elements are found by partitioning a reused buffer."""
    count, width = windows.shape
    if (
        count == 0
        or width == 0
        or windows.dtype != np.float64
        or np.isnan(windows[:, 0]).any()
        or np.isnan(windows[-1]).any()
    ):
        return np.median(windows, axis=1)  # (NaN: np.median's own rule, NaN out)
    middle = width // 2
    out = np.empty(count)
    buffer = np.empty((min(count, _MEDIAN_ROWS), width))
    lower = np.empty(len(buffer))  # the lower middle values of a block (even widths)
    for begin in range(0, count, _MEDIAN_ROWS):
        rows = buffer[: min(_MEDIAN_ROWS, count - begin)]
        rows[...] = windows[begin : begin + len(rows)]
        # One kth: partitioning at [middle - 1, middle] at once took 5x as long (95 ms against
        # 17 ms for 100k windows of 50). The lower middle value is the largest one left of middle.
        rows.partition(middle, axis=1)
        block = out[begin : begin + len(rows)]
        # np.median takes the mean of the middle value(s): a sum that starts at 0.0 (so -0.0 comes
        # out as 0.0), divided by their count.
        if width % 2:
            np.add(rows[:, middle], 0.0, out=block)
        else:
            np.add(_row_maxima(rows[:, :middle], lower), rows[:, middle], out=block)
            block += 0.0
            block /= 2
    return out


def _row_maxima(rows: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``rows.max(axis=1)``, the same numbers: for narrow rows, column by column into ``out``
    (a reduction along short rows costs numpy a loop setup per row; this took half the time for
    4096 rows of 25). ``+0.0`` is added to the result by the caller, so a signed zero's sign, which
    the order of comparisons decides, does not matter."""
    count, width = rows.shape
    if width > _COLUMN_MAXIMA or width < 2:
        return rows.max(axis=1)
    result = out[:count]
    np.maximum(rows[:, 0], rows[:, 1], out=result)
    for column in range(2, width):
        np.maximum(result, rows[:, column], out=result)
    return result


def rolling_median(values: np.ndarray, start: int, window: int) -> np.ndarray:
    """For each index j >= start: median of the ``window`` points ending at j; NaN before that."""
    return _rolling(
        values,
        start,
        window,
        lambda rows: np.median(rows, axis=-1) if rows.ndim == 1 else window_medians(rows),
    )


def rolling_range(values: np.ndarray, start: int, window: int) -> np.ndarray:
    """For each index j >= start: max - min of the ``window`` points ending at j; NaN before that."""
    return _rolling(
        values,
        start,
        window,
        lambda rows: rows.max(axis=-1) - rows.min(axis=-1),
        lambda segment: (
            window_extremes(segment, window, np.maximum) - window_extremes(segment, window, np.minimum)
        ),
    )


def window_extremes(values: np.ndarray, window: int, pick: np.ufunc) -> np.ndarray:
    """``pick.reduce`` (np.maximum or np.minimum) of every full window of ``values``, in O(n)
    whatever the window (van Herk / Gil-Werman): in blocks of ``window`` points, the running
    extremes from each block's start and from its end; a window spans the end of one block and
    the start of the next. A third of the time of reducing a sliding view of 10-point windows.
    NaN propagates as in the reduction; a zero's sign may differ."""
    count = len(values) - window + 1
    padded = np.concatenate([values, np.zeros(-len(values) % window)])  # never inside a full window
    blocks = padded.reshape(-1, window).T  # a block a column: each running step is a whole row
    from_start = pick.accumulate(blocks, axis=0).T.ravel()
    from_end = pick.accumulate(blocks[::-1], axis=0)[::-1].T.ravel()
    return pick(from_end[:count], from_start[window - 1 : window - 1 + count])


def _rolling(values: np.ndarray, start: int, window: int, reduce, whole=None) -> np.ndarray:
    """``reduce`` (over the last axis) of the ``window`` points ending at each index j >= start;
    ``whole``, if given, computes it for every full window of a stretch of values at once."""
    count = len(values) - start
    out = np.full(max(count, 0), np.nan)
    first = max(start, window - 1)
    if len(values) - first <= _FEW:  # a live batch: a few direct windows beat building the view
        for j in range(first, len(values)):
            out[j - start] = reduce(values[j - window + 1 : j + 1])
    elif first < len(values):
        segment = values[first - window + 1 :]
        out[first - start :] = whole(segment) if whole else reduce(sliding_window_view(segment, window))
    return out


def noise_sigma(values: np.ndarray) -> float:
    """Point-to-point noise of a series, robust to trends: 1.4826 * MAD of first differences / sqrt 2."""
    if len(values) < 3:
        return 0.0
    diffs = np.diff(values)
    sigma = float(MAD_SCALE * np.median(np.abs(diffs - np.median(diffs))) / np.sqrt(2.0))
    if sigma == 0.0 and np.any(diffs):
        # Mostly-equal values (a reward that is 0 for most steps, 0.01 now and then): the median
        # difference is 0, yet the series is not noiseless; the plain deviation says how far it moves.
        sigma = float(np.std(diffs) / np.sqrt(2.0))
    return sigma


def finite_or(values: np.ndarray, fill: float = 1e300) -> np.ndarray:
    """``values`` with NaN -> 0 and ±Inf -> ±fill (a cheap ``nan_to_num`` for severities)."""
    return np.where(np.isnan(values), 0.0, np.clip(values, -fill, fill))
