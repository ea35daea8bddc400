"""Sparklines one or more rows tall, from the shared spike-preserving downsampler.

One row is exactly `rltop.model.downsample.sparkline_glyphs` (what snapshots print). Taller cards
stack rows: with ``rows`` rows a column has ``8 * rows`` levels, the lower rows fill with full
blocks and the top row takes the remainder glyph. Columns without a finite value are drawn as the
shared non-finite mark on the bottom row, so a NaN is seen where it happened.
"""

from __future__ import annotations

import numpy as np

from rltop.model.downsample import FLAT_GLYPH, NON_FINITE_GLYPH, SPARK_GLYPHS, sparkline_glyphs

_FULL = SPARK_GLYPHS[-1]


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
