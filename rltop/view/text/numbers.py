"""Numbers for narrow columns: ``1.93``, ``0.0243``, ``4.58e-4``, ``1.2e6`` (exact ones: JSON, CSV)."""

from __future__ import annotations

import math

SHORT_WIDTH = 8
"""Cells `format_short` aims for (it needs 9 only beyond ±1e±99)."""


def format_short(value: float | None, digits: int = 4) -> str:
    """Compact text of a number for narrow columns: 1.93, 0.0243, 4.58e-4, 1.2e6, at most 8 cells.

    Up to ``digits`` significant digits, fewer when the text would be wider than `SHORT_WIDTH`.
    Reports print exact values elsewhere (JSON, CSV); this is for tables and cards. None is "–".
    """
    if value is None:
        return "–"
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == 0.0:
        return "0"
    text = ""
    for significant in range(max(digits, 1), 0, -1):
        text = _short(value, significant)
        if len(text) <= SHORT_WIDTH:
            break
    return text


def _short(value: float, digits: int) -> str:
    magnitude = abs(value)
    if 1e-3 <= magnitude < 1e5:
        text = f"{value:.{digits}g}"
        # 'g' turns 12345.6 into 1.235e+04 at 4 digits: keep numbers below 1e5 positional.
        return text if "e" not in text else f"{value:.0f}"
    mantissa, exponent = f"{value:.{max(digits - 1, 0)}e}".split("e")
    if "." in mantissa:
        mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa}e{int(exponent)}"
