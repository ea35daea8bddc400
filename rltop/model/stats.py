"""Summary statistics of one series for displays and reports (snapshot, dashboard). No Rich/Textual.

Every statistic except ``last`` and ``count`` is taken over the finite values only, so one NaN never
turns min/max into NaN; ``non_finite`` counts what was left out, and ``last`` is the last logged value
as it is (NaN included), because that is what the run is doing now.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rltop.model.series import Series

TRENDS = ("up", "down", "flat")

# The recent window of the trend: the last 10 % of the finite points (like mean_last_10pct), at
# least 3 and at most 500 points, compared with the same number of points just before it.
_TREND_FRACTION = 0.1
_TREND_MIN, _TREND_MAX = 3, 500
# A change counts when it is both meaningful (>= 5 % of the series' robust range) and larger than
# twice its standard error estimated from the windows' own noise (MAD), so noise reads as flat.
_TREND_RELATIVE = 0.05
_TREND_Z = 2.0
_RANGE_SAMPLE = 2048


@dataclass
class SeriesStats:
    """What a row of a metric table shows about one series."""

    count: int
    """Number of points (finite or not)."""
    first_step: int | None
    last_step: int | None
    last: float | None
    """The last point's value as logged (may be NaN/±Inf); None for an empty series."""
    min: float | None
    """Smallest finite value; None when there is none."""
    max: float | None
    mean_last_10pct: float | None
    """Mean of the finite values among the last 10 % of the points (at least one point)."""
    trend: str
    """"up", "down" or "flat": the recent direction (see `trend_of`)."""
    non_finite: int
    """Number of NaN/±Inf points."""


def series_stats(series: Series) -> SeriesStats:
    """Statistics of one series (O(n) numpy work; cheap enough for every repaint of 60 tags)."""
    values = series.values
    count = int(values.shape[0])
    if count == 0:
        return SeriesStats(0, None, None, None, None, None, None, "flat", 0)
    steps = series.steps
    finite_mask = np.isfinite(values)
    finite = values[finite_mask]
    tail = values[count - max(1, math.ceil(count * 0.1)) :]
    tail_finite = tail[np.isfinite(tail)]
    return SeriesStats(
        count=count,
        first_step=int(steps[0]),
        last_step=int(steps[-1]),
        last=float(values[-1]),
        min=float(finite.min()) if finite.size else None,
        max=float(finite.max()) if finite.size else None,
        mean_last_10pct=float(tail_finite.mean()) if tail_finite.size else None,
        trend=trend_of(finite),
        non_finite=count - int(finite.size),
    )


def trend_of(finite: np.ndarray) -> str:
    """Recent direction of a series of finite values: "up", "down" or "flat".

    Compares the median of the recent window with the median of the window before it; the change
    must exceed 5 % of the series' 2nd-98th percentile range and two standard errors of the
    difference (from the windows' MAD), so a noisy but level series stays "flat".
    """
    n = int(finite.shape[0])
    if n < 2:
        return "flat"
    window = trend_window(n)
    return trend_from(finite[n - window :], finite[max(0, n - 2 * window) : n - window],
                      lambda: sample_spread(finite[:: range_stride(n)]))  # fmt: skip


def trend_window(finite_count: int) -> int:
    """Points in each of the two windows `trend_of` compares (at least 2 finite points)."""
    wanted = min(_TREND_MAX, max(_TREND_MIN, math.ceil(finite_count * _TREND_FRACTION)))
    return max(min(wanted, finite_count // 2), 1)


def range_stride(finite_count: int) -> int:
    """`trend_of` takes the series' range from every this-many-th finite value."""
    return max(1, finite_count // _RANGE_SAMPLE)


def trend_from(recent: np.ndarray, before: np.ndarray, spread: Callable[[], float]) -> str:
    """`trend_of` from its parts: the recent window, the one before it, and the series' range
    (``spread``: `sample_spread` of its range sample, asked for only when the windows differ).
    `rltop.model.summary` gathers the same parts from a long series without reading it all."""
    recent_median, before_median = median_of(recent), median_of(before)
    delta = float(recent_median - before_median)
    if delta == 0.0:
        return "flat"
    if not abs(delta) >= _TREND_RELATIVE * spread():
        return "flat"
    noise = 1.4826 * float(
        median_of(np.concatenate((np.abs(recent - recent_median), np.abs(before - before_median))))
    )
    # 1.2533 = sqrt(pi/2): the standard error of a median is that much larger than of a mean.
    standard_error = 1.2533 * noise * math.sqrt(1.0 / recent.size + 1.0 / before.size)
    if abs(delta) <= _TREND_Z * standard_error:
        return "flat"
    return "up" if delta > 0 else "down"


def sample_spread(sample: np.ndarray) -> float:
    """The robust range of a series from its range sample: its 2nd to 98th percentile (its whole
    range below 50 values)."""
    low, high = np.percentile(sample, [2.0, 98.0]) if sample.size >= 50 else (sample.min(), sample.max())
    return float(high - low)


def median_of(values: np.ndarray) -> np.float64:
    """`np.median` of a non-empty 1-D array of finite values, bit for bit (the middle value, or
    the mean of the two middle values), without its generic machinery: a dashboard card finds
    three medians per new point, and np.median's overhead was most of their cost."""
    count = int(values.shape[0])
    half = count // 2
    # np.median averages the middle values with np.mean, whose sum starts from +0.0 (so a lone
    # -0.0 comes out as 0.0): the same additions here.
    if count % 2:
        return 0.0 + np.partition(values, half)[half]
    middle = np.partition(values, (half - 1, half))
    return (0.0 + middle[half - 1] + middle[half]) / 2.0
