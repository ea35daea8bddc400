"""TensorBoard's debiased exponential moving average, vectorised and NaN-safe.

TensorBoard's scalar dashboard smooths with ``last = last * w + (1 - w) * x`` and divides by the
debias factor ``1 - w ** n`` (n = finite points seen so far), so the curve starts at the first
value instead of creeping up from zero. Non-finite points are passed through unchanged and do not
update the average, and a constant series is returned as is (both exactly like TensorBoard's
``vz_line_chart2`` ``resmoothDataset``).

The recurrence is evaluated in blocks with numpy: inside a block, ``s_k = w^k * (carry * w +
(1 - w) * cumsum(x_j * w^-j))``; the block length keeps ``w^-j`` far from overflow, so a million
points cost a few milliseconds instead of a Python loop.

A chart of a live run smooths the same series again at every new point: `GrowingEma` keeps the
blocks of its last call and, when the new values only add to the old ones (bit for bit), computes
the last block and the new ones only (`EXTEND_SMOOTHING`).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

MAX_WEIGHT = 0.999  # TensorBoard's slider stops here: w = 1 would freeze the curve at 0
_BLOCK_SPAN = 150.0  # largest power of ten the per-block scale factor w^-j may reach
EXTEND_SMOOTHING = os.environ.get("RLTOP_PLAIN_SMOOTHING", "") != "1"
"""Goal served: the dashboard's CPU while a run logs (issue 28): a grid chart smooths its 20k-point
series twice at every new point (the curve, and the curve with clipped points held at the edge),
0.3 ms each. On: `GrowingEma` extends its last result when the values only grew (about 0.05 ms).
Off (``RLTOP_PLAIN_SMOOTHING=1``, read at import): every call smooths the whole series
(``tests/unit/test_smoothing.py`` holds both equal bit for bit)."""
KEEP_POINTS = 250_000
"""`GrowingEma` keeps a copy of the values it smoothed (to know the next ones begin with them) and
its result, 2 MB each at this length (a chart keeps two: 8 MB, and its y range's sorted values,
`rltop.view.chart.scale.GrowingLimits`, 4 MB more): a longer series is smoothed whole at every
call instead."""


def ema_debiased(values: np.ndarray, weight: float = 0.6) -> np.ndarray:
    """The smoothed copy of ``values`` (float64, same length) as TensorBoard draws it.

    ``weight`` is clamped to [0, 0.999]; 0 returns the values unchanged. NaN and ±inf stay where
    they are and are skipped by the average.
    """
    return _debiased(values, weight, None)[0]


_Kept = tuple[float, np.ndarray, "_Blocks"]
"""(weight, the values smoothed, their finite values' blocks): what extends a smoothing."""


def _debiased(values: np.ndarray, weight: float, last: _Kept | None) -> tuple[np.ndarray, _Kept | None]:
    """`ema_debiased`'s result, and what the next call could extend it from (None: nothing, the
    values were empty, constant or not smoothed); ``last``: such a thing from an earlier call,
    used when ``values`` begin with its values and the weight is the same."""
    data = np.asarray(values, dtype=np.float64)
    out = data.copy()
    weight = min(max(float(weight), 0.0), MAX_WEIGHT)
    if data.size == 0 or weight == 0.0:
        return out, None
    finite = np.isfinite(data)
    xs = data[finite]
    if xs.size == 0 or bool(np.all(xs == xs[0])):
        return out, None
    prior = None
    if last is not None and last[0] == weight and starts_with(data, last[1]):
        prior = last[2]  # (the same values first: the same finite values first)
    blocks = _smooth_blocks(xs, weight, prior)
    out[finite] = blocks.smoothed
    return out, (weight, data, blocks)


@dataclass
class _Blocks:
    """One smoothing of an all-finite array, block by block: enough to extend it."""

    block: int
    smoothed: np.ndarray
    ends: list[float]
    """Each block's last biased value, as if it started from zero."""
    carries: list[float]
    """What each block inherits from the ones before it."""


def _block_length(weight: float) -> int:
    """The block length for ``weight``: ``w^-j`` stays under 1e150 within a block."""
    return max(1, int(_BLOCK_SPAN * math.log(10.0) / -math.log(weight)))


def _smooth_blocks(xs: np.ndarray, weight: float, prior: _Blocks | None) -> _Blocks:
    """Debiased EMA of an all-finite array, by blocks; with ``prior`` (the same computation over a
    prefix of ``xs``), the blocks it completed are taken from it and only the rest is computed:
    every block's values depend on its own values and its carry only, so they come out the same."""
    count = xs.shape[0]
    nominal = _block_length(weight)
    block = min(count, nominal)
    rows = -(-count // block)
    # Debias: divide by 1 - w^n. Past a few hundred points w^n underflows below float precision
    # and the factor is exactly 1, so only the head needs the (slow) power.
    head = min(count, int(40.0 / -math.log10(weight)) + 1)
    first = 0  # the first block computed here
    if prior is not None and prior.block == block == nominal:
        first = min(prior.smoothed.shape[0] // block, rows)
        if first * block < head:
            first = 0  # (the head's blocks are divided after the sums: computed again)
    rest = rows - first
    padded = np.zeros(rest * block, dtype=np.float64)
    padded[: count - first * block] = xs[first * block :]
    chunks = padded.reshape(rest, block)
    j = np.arange(block, dtype=np.float64)
    grow = weight**-j  # w^-j, at most 1e150 by the block length
    shrink = weight**j
    # The biased EMA of every block as if it started from zero, all blocks at once:
    # local[b, j] = (1 - w) * sum_{i <= j} w^(j - i) x_i
    local = (1.0 - weight) * shrink * np.cumsum(chunks * grow, axis=1)
    # What each block inherits from the ones before: carry_b = w^B * carry_(b-1) + local[b-1, -1],
    # a short scalar recurrence (one step per block).
    ends = (prior.ends[:first] if first else []) + local[:, -1].tolist()
    decay = weight**block
    carries = (prior.carries[:first] if first else []) + [0.0] * rest
    for b in range(max(first, 1), rows):
        carries[b] = carries[b - 1] * decay + ends[b - 1]
    biased = local + np.asarray(carries[first:])[:, None] * (weight * shrink)[None, :]
    smoothed = biased.reshape(-1)[: count - first * block]
    if first:
        assert prior is not None
        smoothed = np.concatenate((prior.smoothed[: first * block], smoothed))
    else:
        smoothed[:head] /= 1.0 - weight ** np.arange(1, head + 1, dtype=np.float64)
    return _Blocks(block, smoothed, ends, carries)


class GrowingEma:
    """`ema_debiased` of one growing series, call after call: when the new values begin with the
    last call's values (bit for bit) and the weight is the same, the blocks that call completed are
    kept and only the last one and the new ones are computed (`EXTEND_SMOOTHING`; up to
    `KEEP_POINTS` values). The result is `ema_debiased`'s, bit for bit, whatever the values."""

    def __init__(self) -> None:
        self._last: _Kept | None = None

    def smooth(self, values: np.ndarray, weight: float = 0.6) -> np.ndarray:
        """``ema_debiased(values, weight)``."""
        last, self._last = self._last, None
        out, made = _debiased(values, weight, last if EXTEND_SMOOTHING else None)
        # Kept when the next call can use it: a series shorter than a block (about 676 points at
        # 0.6, 34k at 0.99) is one block, computed again whole anyway.
        if EXTEND_SMOOTHING and made is not None:
            kept_weight, data, blocks = made
            if data.shape[0] <= KEEP_POINTS and blocks.block == _block_length(kept_weight):
                self._last = (kept_weight, data.copy(), blocks)
        return out


def starts_with(values: np.ndarray, prefix: np.ndarray) -> bool:
    """Whether ``values`` begins with ``prefix``, bit for bit (NaN payloads and signed zeros too)."""
    count = prefix.shape[0]
    return values.shape[0] >= count and np.array_equal(values[:count].view(np.int64), prefix.view(np.int64))
