"""How the health engine writes numbers in its messages: ``0.0243``, ``3.1%``, ``3 of 5 points``.

Shared by the rules and the evidence they quote, and kept below both (no rule imports here).
"""

from __future__ import annotations


def num(value: float | None) -> str:
    """Compact text of a number for messages (4 significant digits)."""
    if value is None:
        return "-"
    if value == 0:
        return "0"
    return f"{value:.4g}"


def pct(share: float) -> str:
    """A share as a percentage: 0.031 -> "3.1%"."""
    return f"{share * 100:.3g}%"


def persistence_text(m: int, n: int) -> str:
    """ "3 of 5 points" or "1 point"."""
    return f"{m} of {n} points" if n > 1 else "1 point"
