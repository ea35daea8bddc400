"""Reduce a long series to a display width without losing its spikes. No Rich, no Textual.

A series of 30 000 points drawn in 40 terminal columns puts 750 points in each column. Averaging
them would hide exactly what a user looks for (one value-loss spike, one NaN), so every column keeps
its finite minimum and maximum (`downsample_minmax`), and the one value a sparkline shows per column
(`sparkline_values`) is its mean, or the extreme that stands out when the column holds a spike. Columns are
equal slices of the points in arrival order (as TensorBoard and Textual's Sparkline bucket them; a
long sparkline's are of a fixed size, the last one filling: `spark_bounds`), not of steps: GRPO
logs some tags only every few steps, and step buckets would show false gaps.

Non-finite values (NaN, ±Inf) never reach a column's value. A sparkline column that holds one is
NaN, which `rltop.view.chart.spark` draws as its non-finite mark: a NaN is seen where it happened at any
width (in a 5-cell narrow line too, where it shares its column with finite points), so callers can
hand any series to any renderer.
"""

from __future__ import annotations

import numpy as np

from rltop.model.stats import median_of

SPIKE_FACTOR = 2.0
"""A column extreme is a spike when it lies this many typical column half-ranges from its neighbours."""


def column_bounds(count: int, width: int) -> np.ndarray:
    """Start index of each of ``min(count, width)`` equal columns over ``count`` points, plus ``count``."""
    columns = max(0, min(int(count), int(width)))
    return (np.arange(columns + 1, dtype=np.int64) * count) // max(columns, 1)


FIXED_COLUMN_POINTS = 256
"""From this many points per sparkline column on, its columns have a fixed size (`spark_bounds`)."""


def spark_bounds(count: int, width: int) -> np.ndarray:
    """`column_bounds` of a sparkline: for a long series (at least `FIXED_COLUMN_POINTS` points and
    at least ``width`` points per column), columns of a fixed ``ceil(count / width)`` points from the
    first one, the last holding the rest (fewer by less than ``width``).

    Why: with equal slices a new point moves about half the column bounds, so every column of a
    live card was summed again at every point; fixed slices keep every column but the last until
    the size grows (once every ``width`` points), and the dashboard sums one column per point
    (`rltop.model.summary`). A column still holds hundreds of points: the picture is the same.
    """
    if width < 1 or count < width * max(FIXED_COLUMN_POINTS, width):
        return column_bounds(count, width)
    size = -(-count // width)
    bounds = np.arange(width + 1, dtype=np.int64) * size
    bounds[-1] = count  # the last column: count - (width - 1) * size points, in (size - width, size]
    return bounds


def downsample_minmax(values: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-column (min, max) over the finite values; NaN where a column has none.

    There are ``min(len(values), width)`` columns: a series shorter than the width keeps one
    column per point (it is never stretched), so a 3-point eval series gives 3 columns.
    """
    values = np.asarray(values, dtype=np.float64)
    return _minmax_from(values, column_bounds(values.shape[0], width)[:-1])


def _minmax_from(values: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`downsample_minmax` over the columns that start at ``starts``."""
    if starts.shape[0] == 0:
        empty = np.empty(0, dtype=np.float64)
        return empty, empty.copy()
    finite = np.isfinite(values)
    # reduceat over the raw values would let one NaN poison its column: mask the non-finite
    # values with the neutral element of each reduction instead.
    mins = np.minimum.reduceat(np.where(finite, values, np.inf), starts)
    maxs = np.maximum.reduceat(np.where(finite, values, -np.inf), starts)
    has_finite = np.add.reduceat(finite.astype(np.int64), starts) > 0
    mins[~has_finite] = np.nan
    maxs[~has_finite] = np.nan
    return mins, maxs


def sparkline_values(values: np.ndarray, width: int) -> np.ndarray:
    """One finite-or-NaN value per column (``min(len(values), width)`` columns), spikes kept.

    A column shows the mean of its finite values, unless its maximum (minimum) lies above (below)
    both neighbouring columns' means by more than `SPIKE_FACTOR` times the typical half-range of a
    column: then it shows that extreme. So a smooth curve or plain noise draws as its local level,
    and a lone spike (up or down) is never averaged away, however many points share its column.
    A column holding a non-finite point is NaN (drawn as the non-finite mark): one NaN among a
    thousand points is never averaged away either.
    """
    values = np.asarray(values, dtype=np.float64)
    bounds = spark_bounds(values.shape[0], width)
    starts = bounds[:-1]
    mins, maxs = _minmax_from(values, starts)
    if mins.shape[0] == 0 or mins.shape[0] == values.shape[0]:
        # One point per column: nothing to choose (non-finite points become NaN gaps).
        return np.where(np.isfinite(values), values, np.nan)
    finite = np.isfinite(values)
    counts = np.add.reduceat(finite.astype(np.int64), starts)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.add.reduceat(np.where(finite, values, 0.0), starts) / counts
    shown = column_values(mins, maxs, means)
    shown[counts < np.diff(bounds)] = np.nan  # a NaN or ±Inf inside
    return shown


def column_values(mins: np.ndarray, maxs: np.ndarray, means: np.ndarray) -> np.ndarray:
    """What `sparkline_values` shows per column, from each column's finite minimum, maximum and
    mean (NaN for a column without a finite value): the mean, or the extreme that is a spike.

    Shared with `rltop.model.summary`, which finds the three from block summaries of a long series.
    """
    typical = typical_half_range(mins, maxs)
    if typical is None:
        return means  # no finite value anywhere: all NaN
    return spike_values(mins, maxs, means, typical)


def typical_half_range(mins: np.ndarray, maxs: np.ndarray) -> float | None:
    """The median half-range of the columns that hold a finite value (None: none does)."""
    half_ranges = (maxs - mins)[np.isfinite(mins)] / 2.0
    return float(median_of(half_ranges)) if half_ranges.size else None


def spike_values(mins: np.ndarray, maxs: np.ndarray, means: np.ndarray, typical: float) -> np.ndarray:
    """`column_values` with the typical half-range given: each column's value depends only on its
    own summary and its neighbours' means (`rltop.model.summary` redoes the last two columns)."""
    # A spike must stand out from *both* neighbours: at a level change, the column between the two
    # levels holds points of each and must not be drawn as a spike of either.
    highest, lowest = _neighbour_bounds(means)
    with np.errstate(invalid="ignore"):
        above = maxs - highest
        below = lowest - mins
        spike_up = (above > SPIKE_FACTOR * typical) & ~(below > above)
        spike_down = (below > SPIKE_FACTOR * typical) & ~spike_up
    return np.where(spike_up, maxs, np.where(spike_down, mins, means))


def _neighbour_bounds(levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per column, the higher and the lower of the finite levels of the previous and next column.

    A column without a finite neighbour gets its own level (so it is judged against itself).
    """
    padded = np.full(levels.shape[0] + 2, np.nan)
    padded[1:-1] = levels
    padded[~np.isfinite(padded)] = np.nan  # (a ±Inf level is no level, as NaN is)
    before, after = padded[:-2], padded[2:]
    highest = np.fmax(before, after)  # (fmax and fmin take the other value where one is NaN)
    lowest = np.fmin(before, after)
    alone = np.isnan(highest)
    highest[alone] = levels[alone]
    lowest[alone] = levels[alone]
    return highest, lowest
