"""Cells of the narrow one-line-per-metric layout, shared by the board and its cards (no numpy here)."""

from __future__ import annotations

VALUE_WIDTH = 8
"""Cells for a value in a narrow metric line (`format_short`'s ordinary width)."""
NARROW_FIXED = 1 + VALUE_WIDTH + 1 + 1 + 1 + 4
"""Cells of a narrow metric line besides name and sparkline: gaps, value, trend, level badge."""
