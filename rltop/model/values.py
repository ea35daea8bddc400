"""Exact, shortest text for numbers: what export, tail and every report print.

A value logged as float32 (``simple_value``) is printed as the shortest decimal that reads back to
the same float32 (``0.1``, not ``0.10000000149011612``); a float64 value as the shortest decimal
for float64. Non-finite values print as ``nan``, ``inf`` and ``-inf``. numpy's vectorised
``astype(str)`` implements exactly this (Dragon4, "unique" mode) in C, so millions of points
format in well under a second. `json_number` is the same convention for JSON (which has no NaN):
non-finite numbers become the strings ``"nan"``, ``"inf"`` and ``"-inf"``.
"""

from __future__ import annotations

import math

import numpy as np


def format_values(values: np.ndarray, single_precision: bool) -> list[str]:
    """Shortest round-trip text of each value (float32 precision when ``single_precision``)."""
    dtype = np.float32 if single_precision else np.float64
    return np.asarray(values, dtype=dtype).astype(str).tolist()


def format_value(value: float, single_precision: bool = False) -> str:
    """Shortest round-trip text of one value."""
    return format_values(np.array([value]), single_precision)[0]


def format_steps(steps: np.ndarray) -> list[str]:
    """Decimal text of integer steps."""
    return np.asarray(steps, dtype=np.int64).astype(str).tolist()


def json_number(value: float | None, single_precision: bool = False) -> float | int | str | None:
    """A number for JSON: shortest round-trip float, ``"nan"``/``"inf"``/``"-inf"``, or None."""
    if value is None:
        return None
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    # float() of the shortest text is the float64 nearest to it, which json prints as that text.
    return float(format_value(value, single_precision))
