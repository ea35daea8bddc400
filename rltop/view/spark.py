"""Sparklines as text: block glyphs for downsampled columns, one row (every format) or several (cards).

The columns come from the spike-preserving downsampler (`rltop.model.downsample`); a column without
a finite value is NaN and is drawn as `NON_FINITE_GLYPH`, so a NaN is seen where it happened. One
row is what snapshots print (`sparkline_text`); taller dashboard cards stack rows (`spark_rows`):
with ``rows`` rows a column has ``8 * rows`` levels, the lower rows fill with full blocks and the
top row takes the remainder glyph.
"""

from __future__ import annotations

import numpy as np

from rltop.model.downsample import sparkline_values

SPARK_GLYPHS = "▁▂▃▄▅▆▇█"
"""The eight block glyphs of a unicode sparkline, lowest first."""

NON_FINITE_GLYPH = "×"
"""Drawn for a column that holds no finite value (only NaN or ±Inf points)."""

FLAT_GLYPH = SPARK_GLYPHS[3]
"""Drawn for every finite column of a series whose shown values are all equal."""

_FULL = SPARK_GLYPHS[-1]


def sparkline_glyphs(columns: np.ndarray, low: float | None = None, high: float | None = None) -> str:
    """Block glyphs for already downsampled column values (NaN columns drawn as ``NON_FINITE_GLYPH``).

    ``low``/``high`` fix the scale (to compare runs side by side); by default it spans the finite
    columns. A flat series draws as a row of ``FLAT_GLYPH``, mid-height, so it does not read as zero.
    """
    columns = np.asarray(columns, dtype=np.float64)
    finite = np.isfinite(columns)
    if not finite.any():
        return NON_FINITE_GLYPH * int(columns.shape[0])
    low = float(np.min(columns[finite])) if low is None else float(low)
    high = float(np.max(columns[finite])) if high is None else float(high)
    # Halves keep the span finite even for values near ±1.8e308.
    half_span = high / 2.0 - low / 2.0
    if not np.isfinite(half_span) or half_span <= 0.0:
        levels = np.full(columns.shape[0], 3, dtype=np.int64)
    else:
        with np.errstate(invalid="ignore", over="ignore"):
            halves = np.where(finite, columns, low) / 2.0 - low / 2.0
            scaled = halves / half_span * (len(SPARK_GLYPHS) - 1)
        levels = np.clip(np.rint(scaled), 0, len(SPARK_GLYPHS) - 1).astype(np.int64)
    glyphs = np.array(list(SPARK_GLYPHS))[levels]
    glyphs[~finite] = NON_FINITE_GLYPH
    return "".join(glyphs.tolist())


def sparkline_text(values: np.ndarray, width: int) -> str:
    """A unicode sparkline of at most ``width`` glyphs for a whole series (any values, NaN-safe)."""
    if width <= 0:
        return ""
    return sparkline_glyphs(sparkline_values(values, width))


def spark_rows(columns: np.ndarray, rows: int = 1) -> list[str]:
    """Lines (top first) of a sparkline of already downsampled ``columns`` (NaN = non-finite)."""
    columns = np.asarray(columns, dtype=np.float64)
    if rows <= 1:
        return [sparkline_glyphs(columns)]
    count = int(columns.shape[0])
    finite = np.isfinite(columns)
    steps = len(SPARK_GLYPHS) * rows
    if not finite.any():
        return [" " * count] * (rows - 1) + [NON_FINITE_GLYPH * count]
    low, high = float(columns[finite].min()), float(columns[finite].max())
    half_span = high / 2.0 - low / 2.0
    if not np.isfinite(half_span) or half_span <= 0.0:
        flat = [" " * count] * (rows - 1) + [FLAT_GLYPH * count]
        return [line if rows - i - 1 else _mark(line, finite) for i, line in enumerate(flat)]
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = (np.where(finite, columns, low) / 2.0 - low / 2.0) / half_span * (steps - 1)
    levels = np.clip(np.rint(scaled), 0, steps - 1).astype(np.int64)
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
    if bool(finite.all()):
        return line
    chars = list(line)
    for index in np.flatnonzero(~finite).tolist():
        chars[index] = NON_FINITE_GLYPH
    return "".join(chars)
