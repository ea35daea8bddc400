"""TensorBoard's debiased exponential moving average, vectorised and NaN-safe.

TensorBoard's scalar dashboard smooths with ``last = last * w + (1 - w) * x`` and divides by the
debias factor ``1 - w ** n`` (n = finite points seen so far), so the curve starts at the first
value instead of creeping up from zero. Non-finite points are passed through unchanged and do not
update the average, and a constant series is returned as is (both exactly like TensorBoard's
``vz_line_chart2`` ``resmoothDataset``).

The recurrence is evaluated in blocks with numpy: inside a block, ``s_k = w^k * (carry * w +
(1 - w) * cumsum(x_j * w^-j))``; the block length keeps ``w^-j`` far from overflow, so a million
points cost a few milliseconds instead of a Python loop.
"""

from __future__ import annotations

import math

import numpy as np

MAX_WEIGHT = 0.999  # TensorBoard's slider stops here: w = 1 would freeze the curve at 0
_BLOCK_SPAN = 150.0  # largest power of ten the per-block scale factor w^-j may reach


def ema_debiased(values: np.ndarray, weight: float = 0.6) -> np.ndarray:
    """The smoothed copy of ``values`` (float64, same length) as TensorBoard draws it.

    ``weight`` is clamped to [0, 0.999]; 0 returns the values unchanged. NaN and ±inf stay where
    they are and are skipped by the average.
    """
    data = np.asarray(values, dtype=np.float64)
    out = data.copy()
    weight = min(max(float(weight), 0.0), MAX_WEIGHT)
    if data.size == 0 or weight == 0.0:
        return out
    finite = np.isfinite(data)
    xs = data[finite]
    if xs.size == 0 or bool(np.all(xs == xs[0])):
        return out
    out[finite] = _smooth_finite(xs, weight)
    return out


def _smooth_finite(xs: np.ndarray, weight: float) -> np.ndarray:
    """Debiased EMA of an all-finite array."""
    count = xs.shape[0]
    block = min(count, max(1, int(_BLOCK_SPAN * math.log(10.0) / -math.log(weight))))
    rows = -(-count // block)
    padded = np.zeros(rows * block, dtype=np.float64)
    padded[:count] = xs
    chunks = padded.reshape(rows, block)
    j = np.arange(block, dtype=np.float64)
    grow = weight**-j  # w^-j, at most 1e150 by the block length
    shrink = weight**j
    # The biased EMA of every block as if it started from zero, all blocks at once:
    # local[b, j] = (1 - w) * sum_{i <= j} w^(j - i) x_i
    local = (1.0 - weight) * shrink * np.cumsum(chunks * grow, axis=1)
    # What each block inherits from the ones before: carry_b = w^B * carry_(b-1) + local[b-1, -1],
    # a short scalar recurrence (one step per block).
    ends = local[:, -1].tolist()
    decay = weight**block
    carries = [0.0] * rows
    for b in range(1, rows):
        carries[b] = carries[b - 1] * decay + ends[b - 1]
    biased = local + np.asarray(carries)[:, None] * (weight * shrink)[None, :]
    smoothed = biased.reshape(-1)[:count]
    # Debias: divide by 1 - w^n. Past a few hundred points w^n underflows below float precision
    # and the factor is exactly 1, so only the head needs the (slow) power.
    head = min(count, int(40.0 / -math.log10(weight)) + 1)
    smoothed[:head] /= 1.0 - weight ** np.arange(1, head + 1, dtype=np.float64)
    return smoothed
