"""Sparklines as text: block glyphs for downsampled columns, one row (every format) or several (cards).

The columns come from the spike-preserving downsampler (`rltop.model.downsample`); a column holding
a non-finite point is NaN and is drawn as `NON_FINITE_GLYPH`, so a NaN is seen where it happened. One
row is what snapshots print (`sparkline_text`); taller dashboard cards stack rows (`spark_rows`):
with ``rows`` rows a column has ``8 * rows`` levels, the lower rows fill with full blocks and the
top row takes the remainder glyph.

The scale is honest: it spans the shown values, but never less than a floor (`scale_floor`) that
depends on their magnitude and on the rule's thresholds, so an entropy going from 4.582 to 4.48
(−2 %) is a gentle slope, not a bar chart of a collapse, and a clip ratio wiggling around 1e-4
under a 0.05 threshold lies flat at the bottom. A series whose values are all equal draws as a
flat line (`FLAT_GLYPH`), neither as bars nor as zero.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from rltop.model.downsample import sparkline_values

SPARK_GLYPHS = "▁▂▃▄▅▆▇█"
"""The eight block glyphs of a unicode sparkline, lowest first."""

NON_FINITE_GLYPH = "×"
"""Drawn for a column that holds a NaN or ±Inf point."""

FLAT_GLYPH = "─"
"""Drawn for every finite column of a series whose shown values are all equal: a line, not bars."""

RELATIVE_FLOOR = 0.1
"""The scale spans at least this share of the values' magnitude (their largest absolute value):
a change of 2 % fills a fifth of the height, not all of it."""

THRESHOLD_FLOOR = 0.25
"""... and at least this share of the smallest threshold of the metric's rules: noise near zero,
far under a threshold of 0.05, stays near the bottom."""

_FULL = SPARK_GLYPHS[-1]
_GLYPH_ARRAY = np.array(list(SPARK_GLYPHS))

Thresholds = Sequence[float | None]


def scale_floor(columns: np.ndarray, thresholds: Thresholds = ()) -> float:
    """The least span a sparkline of ``columns`` is drawn with (see `RELATIVE_FLOOR` and
    `THRESHOLD_FLOOR`; ``thresholds``: the metric's band, warn and critical lines, None where absent)."""
    columns = np.asarray(columns, dtype=np.float64)
    finite = columns[np.isfinite(columns)]
    if not finite.size:
        return 0.0
    return _floor_of(float(np.max(np.abs(finite))), thresholds)


def _floor_of(magnitude: float, thresholds: Thresholds) -> float:
    """`scale_floor` of values whose largest absolute value is ``magnitude``."""
    floor = RELATIVE_FLOOR * magnitude
    limits = [abs(t) for t in thresholds if t is not None and math.isfinite(t) and t != 0.0]
    if limits:
        floor = max(floor, THRESHOLD_FLOOR * min(limits))
    return floor if math.isfinite(floor) else 0.0


def spark_scale(columns: np.ndarray, thresholds: Thresholds = ()) -> tuple[float, float] | None:
    """(low, high) to draw finite ``columns`` in; None when they are all equal (a flat line) or none
    is finite.

    The finite columns' range, widened to `scale_floor` around their middle when it is narrower;
    a widened range never crosses zero that the values do not cross (a ratio near 0 keeps 0 as its
    bottom), so the values keep their place relative to zero.
    """
    columns = np.asarray(columns, dtype=np.float64)
    finite = columns[np.isfinite(columns)]
    if not finite.size:
        return None
    low, high = float(finite.min()), float(finite.max())
    if not high > low:
        return None
    floor = _floor_of(max(abs(low), abs(high)), thresholds)
    # Halves keep the arithmetic finite even for values near ±1.8e308.
    if high / 2.0 - low / 2.0 >= floor / 2.0:
        return low, high
    middle = low / 2.0 + high / 2.0
    low, high = middle - floor / 2.0, middle + floor / 2.0
    if float(finite.min()) >= 0.0 > low:
        low, high = 0.0, floor
    elif float(finite.max()) <= 0.0 < high:
        low, high = -floor, 0.0
    return low, high


def _levels(columns: np.ndarray, low: float, high: float, steps: int) -> np.ndarray:
    """Each column's level in 0..steps-1 on the scale low..high (non-finite columns: 0)."""
    finite = np.isfinite(columns)
    half_span = high / 2.0 - low / 2.0
    if not np.isfinite(half_span) or half_span <= 0.0:
        return np.zeros(columns.shape[0], dtype=np.int64)
    with np.errstate(invalid="ignore", over="ignore"):
        halves = np.where(finite, columns, low) / 2.0 - low / 2.0
        scaled = halves / half_span * (steps - 1)
    return np.clip(np.rint(scaled), 0, steps - 1).astype(np.int64)


def sparkline_glyphs(
    columns: np.ndarray, low: float | None = None, high: float | None = None, thresholds: Thresholds = ()
) -> str:
    """Block glyphs for already downsampled column values (NaN columns drawn as ``NON_FINITE_GLYPH``).

    ``low``/``high`` fix the scale (to compare runs side by side); by default it is `spark_scale`'s
    (``thresholds``: the metric's band). Equal values draw as a row of ``FLAT_GLYPH``.
    """
    columns = np.asarray(columns, dtype=np.float64)
    finite = np.isfinite(columns)
    if not finite.any():
        return NON_FINITE_GLYPH * int(columns.shape[0])
    if low is None and high is None:
        scale = spark_scale(columns, thresholds)
        if scale is None:
            return _mark(FLAT_GLYPH * int(columns.shape[0]), finite)
        low, high = scale
    else:
        shown = columns[finite]
        low = float(np.min(shown)) if low is None else float(low)
        high = float(np.max(shown)) if high is None else float(high)
        if not high > low:
            return _mark(FLAT_GLYPH * int(columns.shape[0]), finite)
    levels = _levels(columns, low, high, len(SPARK_GLYPHS))
    glyphs = _GLYPH_ARRAY[levels]
    glyphs[~finite] = NON_FINITE_GLYPH
    return "".join(glyphs.tolist())


def sparkline_text(values: np.ndarray, width: int, thresholds: Thresholds = ()) -> str:
    """A unicode sparkline of at most ``width`` glyphs for a whole series (any values, NaN-safe)."""
    if width <= 0:
        return ""
    return sparkline_glyphs(sparkline_values(values, width), thresholds=thresholds)


def spark_rows(columns: np.ndarray, rows: int = 1, thresholds: Thresholds = ()) -> list[str]:
    """Lines (top first) of a sparkline of already downsampled ``columns`` (NaN = non-finite)."""
    columns = np.asarray(columns, dtype=np.float64)
    if rows <= 1:
        return [sparkline_glyphs(columns, thresholds=thresholds)]
    count = int(columns.shape[0])
    finite = np.isfinite(columns)
    if not finite.any():
        return [" " * count] * (rows - 1) + [NON_FINITE_GLYPH * count]
    scale = spark_scale(columns, thresholds)
    if scale is None:  # a flat line halfway up (the lower middle row), marks in the bottom row
        lines = [" " * count] * rows
        lines[rows // 2] = FLAT_GLYPH * count
        lines[-1] = _mark(lines[-1], finite)
        return lines
    steps = len(SPARK_GLYPHS) * rows
    levels = _levels(columns, *scale, steps)
    lines = []
    for row in range(rows - 1, -1, -1):  # top row first
        floor = row * len(SPARK_GLYPHS)
        chars = []
        for level in levels.tolist():
            if level >= floor + len(SPARK_GLYPHS):
                chars.append(_FULL)
            elif level >= floor:
                chars.append(SPARK_GLYPHS[level - floor])
            else:
                chars.append(" ")
        lines.append("".join(chars))
    lines[-1] = _mark(lines[-1], finite)
    return lines


def _mark(line: str, finite: np.ndarray) -> str:
    """Put the non-finite mark on the columns that have no finite value."""
    if bool(np.all(finite)):
        return line
    chars = list(line)
    for index in np.flatnonzero(~finite).tolist():
        chars[index] = NON_FINITE_GLYPH
    return "".join(chars)
