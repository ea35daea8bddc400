"""Shortest round-trip decimals of whole columns, in integer numpy arithmetic, as ASCII bytes.

`rltop.model.values` prints a value as the shortest text that reads back to it (numpy's Dragon4,
about 1.3 µs a value). For the values an event file mostly holds, this module finds the same text
for a whole column at once, exactly:

* a float ``v = m / 2**s`` (``m`` its integer significand) is split into its integer part and the
  fraction ``lo / 2**s``; the candidate with ``f`` fraction digits is ``lo * 10**f / 2**s``
  rounded half to even, computed as ``lo * 5**f`` shifted right by ``s - f`` bits (no overflow
  for the ranges below);
* it reads back to ``v`` exactly when it lies within half a unit in the last place of ``v``:
  ``|q * 2**(s-f+1) - 2 * lo * 5**f| <= 5**f`` (a tie reads back only to an even significand);
* more digits are never worse, so the fewest that work are found by bisection over ``f``; with
  the integer part fixed and a unit in the last place below 1, the fewest fraction digits are the
  fewest significant digits, and the correctly rounded candidate is the closest, which is what
  Dragon4 prints.

Only values numpy prints positionally are handled (float32: 1e-4 <= |v| < 1e6; float64: 1 <= |v|
< 2**53), and not those at a power of two (their interval below is half as wide), zero or
non-finite: `shortest_fixed` says which rows it did, and the caller formats the rest with numpy.

Goal served: ``rltop export`` of the 900k-scalar log at least 25x faster than tbparse's
``to_csv``: 0.86 CPU-s for the whole process, 4.41 with numpy's text for every value
(``benchmarks/bench_tiers.py --export``). Reference-equality test: ``tests/unit/test_export_columns.py``
(the same text as numpy's, on 100k+ values of every kind).
"""

from __future__ import annotations

import numpy as np

_FORMATS = {
    # dtype: (significand bits, exponent bias, most fraction digits tried, positional range)
    np.dtype(np.float32): (23, 127, 17, (1.0001e-4, 0.9999e6)),
    np.dtype(np.float64): (52, 1023, 17, (1.0, 2.0**53)),
}
_POW5 = np.array([5**k for k in range(18)], dtype=np.int64)
_POW10 = np.array([10**k for k in range(19)], dtype=np.int64)


def shortest_fixed(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(done, integer part, fraction digits as an integer, fraction digit count) per value.

    ``values`` is float32 or float64; a row not ``done`` must be formatted another way. The text
    is ``-`` if negative, the integer part, ``.``, and the fraction zero-padded to its digit count
    (at least 1: ``3.0``).
    """
    bits_count, bias, most, (low, high) = _FORMATS[values.dtype]
    unsigned = np.uint32 if values.dtype == np.float32 else np.uint64
    bits = values.view(unsigned).astype(np.int64) if unsigned is np.uint32 else values.view(np.int64)
    fraction_bits = bits & ((1 << bits_count) - 1)
    exponent = (bits >> bits_count) & ((bias << 1) | 1)
    with np.errstate(invalid="ignore"):
        magnitude = np.abs(values.astype(np.float64))
    done = (magnitude >= low) & (magnitude < high) & (fraction_bits != 0)
    significand = fraction_bits | (1 << bits_count)
    shift = np.where(done, bias + bits_count - exponent, 0)  # v = significand / 2**shift
    done &= (shift >= 0) & (shift <= 62)
    shift = np.where(done, shift, 0)
    integer = significand >> shift
    low_bits = significand & ((np.int64(1) << shift) - 1)
    even = (significand & 1) == 0
    # The most fraction digits whose candidate stays in int64 (lo * 5**f < 2**61), at most
    # ``shift`` (that many digits are exact) and ``most``; a value not exact there is left over.
    headroom = (60.9 - np.log2(low_bits.astype(np.float64) + 1.0)) / np.log2(5.0)
    cap = np.clip(np.floor(headroom).astype(np.int64), 0, np.minimum(shift, most))
    cap = np.where(done, cap, 0)
    # A float32 needs at most 9 significant digits (a float64 17) and usually 7 (15) or more:
    # that window is searched first, the whole range [0, cap] only where the answer is outside.
    significant = 9 if values.dtype == np.float32 else 17
    with np.errstate(divide="ignore"):
        exponent10 = np.floor(np.log10(np.where(done, magnitude, 1.0))).astype(np.int64)
    hi = np.clip(significant - exponent10, 0, cap)  # one digit more than needed, for safety
    lo = np.maximum(hi - 3, 0)
    inside = _valid(low_bits, shift, hi, even)
    outside = np.flatnonzero(done & ~inside)
    if outside.size:  # (the estimate was off): the whole range, if its top works at all
        works = _valid(low_bits[outside], shift[outside], cap[outside], even[outside])
        done[outside[~works]] = False
        hi[outside], lo[outside] = cap[outside], 0
    start = lo.copy()
    lo, hi = _bisect(low_bits, shift, even, lo, hi)
    below = (hi == start) & (start > 0)  # the window's first count works: maybe fewer do too
    below &= _valid(low_bits, shift, np.maximum(start - 1, 0), even)
    if below.any():
        rows = np.flatnonzero(below)
        _, hi[rows] = _bisect(
            low_bits[rows], shift[rows], even[rows], np.zeros(rows.size, np.int64), start[rows] - 1
        )
    digits = hi
    quotient, _ = _rounded(low_bits, shift, digits)
    carry = quotient >= _POW10[digits]
    integer = integer + carry
    quotient = np.where(carry, 0, quotient)
    return done, integer, quotient, digits


def _bisect(low_bits, shift, even, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The fewest fraction digits in ``[lo, hi]`` that work (``hi`` works; more never fail)."""
    while True:
        active = lo < hi
        if not active.any():
            return lo, hi
        middle = (lo + hi) >> 1
        ok = _valid(low_bits, shift, middle, even)
        hi = np.where(active & ok, middle, hi)
        lo = np.where(active & ~ok, middle + 1, lo)


def _rounded(low_bits: np.ndarray, shift: np.ndarray, digits: np.ndarray, power: np.ndarray | None = None):
    """``low_bits * 10**digits / 2**shift`` rounded half to even (digits <= shift), and
    ``low_bits * 5**digits`` (the same fraction over ``2**(shift - digits)``)."""
    scaled = low_bits * (_POW5[digits] if power is None else power)
    drop = shift - digits
    quotient = scaled >> drop
    twice = (scaled - (quotient << drop)) << 1  # twice the remainder, against the unit 2**drop
    unit = np.int64(1) << drop
    up = twice > unit
    tie = twice == unit  # (never with drop 0: the remainder is 0 there)
    if tie.any():
        up |= tie & ((quotient & 1) == 1)
    return quotient + up, scaled


def _valid(low_bits, shift, digits, even) -> np.ndarray:
    """Whether the candidate with ``digits`` fraction digits reads back to the value."""
    power = _POW5[digits]
    quotient, scaled = _rounded(low_bits, shift, digits, power)
    distance = np.abs((quotient << (shift - digits + 1)) - (scaled << 1))
    return (distance < power) | ((distance == power) & even)


def digit_matrix(numbers: np.ndarray, width: int) -> np.ndarray:
    """ASCII digits of non-negative integers, right-aligned and zero-padded: shape (width, n),
    one row per digit position (the most significant first).

    Below 2**53 the digits come from float64 division (exact there: a quotient of x / 10 is at
    least 0.1 away from the next integer unless it is one), several times faster than int64's.
    """
    out = np.empty((width, numbers.size), dtype=np.uint8)  # one contiguous row per position
    if numbers.size and int(numbers.max()) < 1 << 53:
        rest = numbers.astype(np.float64)
        for column in range(width - 1, -1, -1):
            quotient = np.floor(rest / 10.0)
            out[column] = rest - quotient * 10.0 + 48.0
            rest = quotient
    else:
        rest = numbers.copy()
        for column in range(width - 1, -1, -1):
            rest, digit = np.divmod(rest, 10)
            out[column] = digit + 48
    return out


def digit_count(numbers: np.ndarray) -> np.ndarray:
    """Decimal digits of non-negative integers (1 for 0)."""
    return np.searchsorted(_POW10[1:], numbers, side="right") + 1
