"""The spike rules' baseline: the median of the last ``window`` normal points before each point.

Sequential by nature: whether a point is a spike decides whether it enters the baseline. A live
batch is judged point by point, the window kept in a sorted list (O(log n) a point, about 1 µs in
Python). A whole history (100k points of a grad norm) is judged by speculation instead: a baseline
moves slowly, so the points of a stretch are guessed to be spikes or not against the baseline
before it, the medians of the whole stretch are computed at once on that guess, and they are kept
up to the first point they judge otherwise than the guess; the next stretch starts after it. Rare
spikes, episodes of spikes and a baseline held at its floor (a value loss below zero leaves only
the floor) are all guessed right. Both ways give the same numbers, bit for bit
(`tests/unit/test_spike_baseline.py`).
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import deque
from dataclasses import dataclass, field

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from rltop.health.numerics.robust import window_medians

SPECULATE_FROM = 512
"""Fewer new points than this (a live batch) are judged one by one."""
_STRETCH = (256, 4096)
"""Points judged at once: a stretch guessed right doubles the next one, a wrong guess quarters it
(4096 windows of 50 doubles stay in the CPU cache)."""
_WASTE = 4
"""Medians computed and thrown away (after a wrong guess) may reach this many times the points kept;
beyond that the baseline moves too much to guess past, and the rest is judged one by one."""


@dataclass
class SpikeWindow:
    """The last ``window`` normal points a spike baseline is the median of, oldest first, and the same
    points sorted (carried from call to call)."""

    recent: deque[float] = field(default_factory=deque)
    ordered: list[float] = field(default_factory=list)


def spike_references(
    values: np.ndarray,
    start: int,
    memo: SpikeWindow,
    window: int,
    warmup: int,
    need: int,
    floor: float,
    limit: float | None,
    skip_zeros: bool = False,
) -> np.ndarray:
    """The baseline each point of ``values[start:]`` is compared with (NaN while there is none).

    The baseline is ``max(median of the last window normal points, floor)`` once ``need`` normal
    points exist; the first ``warmup`` points never enter it, nor does a point at or above
    ``limit`` times its baseline (a spike), nor (``skip_zeros``) a value of exactly zero: a grad
    norm of 0 is a step that updated nothing, not the gradient's usual size (a sparse reward's
    run logs mostly zeros, whose median made every real gradient a "3e5x spike").
    ``memo`` carries the window from call to call.
    """
    need = max(need, 1)
    # In float64 once, here: the speculation compares in it (numpy 1 compares float32 in float32),
    # and the point-by-point loop gets the same Python floats either way (float32 widens exactly).
    new = np.asarray(values[start:], dtype=np.float64)
    references = [np.nan] * len(new)
    offset = max(warmup - start, 0)  # the warm-up never enters the baseline
    # Speculation starts on a full window, once judging has begun, and with a positive floor:
    # then a median of signed zeros (which a sorted list and a partition may order differently)
    # is the floor either way.
    if len(memo.recent) < window:
        offset = _one_by_one(
            new, offset, references, memo, window, need, floor, limit, skip_zeros, until_full=True
        )
    if (
        len(new) - offset >= SPECULATE_FROM
        and floor > 0
        and len(memo.recent) == window >= need
        and np.isfinite(new[offset:]).all()
        and not (skip_zeros and not new[offset:].all())  # (zeros left out: judged one by one)
    ):
        out = np.array(references, dtype=np.float64)
        offset = _speculate(new, offset, out, memo, window, floor, limit)
        tail = [np.nan] * (len(new) - offset)  # too short, or spikes too dense, to speculate
        _one_by_one(new[offset:], 0, tail, memo, window, need, floor, limit, skip_zeros)
        out[offset:] = tail
        return out
    _one_by_one(new, offset, references, memo, window, need, floor, limit, skip_zeros)
    return np.array(references, dtype=np.float64)


def _one_by_one(
    new: np.ndarray,
    offset: int,
    references: list[float],
    memo: SpikeWindow,
    window: int,
    need: int,
    floor: float,
    limit: float | None,
    skip_zeros: bool = False,
    until_full: bool = False,
) -> int:
    """Judge ``new[offset:]`` point by point into ``references``; return where it stopped: the
    end, or (``until_full``) where the window became full."""
    recent: deque[float] = memo.recent
    ordered: list[float] = memo.ordered
    size = len(recent)
    keep, forget, insert, find = recent.append, recent.popleft, insort, bisect_left
    # State in locals and output in a list: a third faster than len() calls and numpy item stores.
    for index, value in enumerate(new[offset:].tolist(), offset):
        if until_full and size >= window:
            return index
        if size >= need:
            middle = size >> 1
            median = ordered[middle] if size & 1 else 0.5 * (ordered[middle - 1] + ordered[middle])
            reference = floor if floor > median else median  # max(median, floor), ties included
            references[index] = reference
            if limit is not None and value >= limit * reference:
                continue  # a spike: it stays out of the baseline
        if skip_zeros and value == 0:
            continue  # (see `spike_references`)
        insert(ordered, value)
        keep(value)
        if size >= window:
            del ordered[find(ordered, forget())]
        else:
            size += 1
    return len(new)


def _speculate(
    new: np.ndarray,
    offset: int,
    out: np.ndarray,
    memo: SpikeWindow,
    window: int,
    floor: float,
    limit: float | None,
) -> int:
    """Judge ``new[offset:]`` in stretches (see the module) into ``out``; return where the rest is
    left to `_one_by_one`. The memo's window is rebuilt from the last normal points."""
    base = np.array(memo.recent, dtype=np.float64)  # the last `window` normal points, oldest first
    held = _baseline(base, floor)
    stretch, kept, wasted = _STRETCH[0], 0, 0
    while len(new) - offset >= SPECULATE_FROM and wasted <= _WASTE * kept + _STRETCH[1]:
        part = new[offset : offset + stretch]
        # The guess: the baseline holds still through the stretch, so a point is a spike when it
        # is at or above the limit of the baseline now.
        guess = part >= limit * held if limit is not None else np.zeros(len(part), dtype=bool)
        normal = ~guess
        joined = np.concatenate([base, part[normal]])
        # Window i: the `window` normal points before the i-th normal point of the stretch. A point
        # is judged against the window of the normal points before it, if the guess was right so far.
        before = np.cumsum(normal) - normal
        reference = np.maximum(window_medians(sliding_window_view(joined, window)), floor)[before]
        found = part >= limit * reference if limit is not None else guess
        wrong = np.flatnonzero(found != guess)
        # Every point up to the first wrong guess is judged right, that one included (its baseline
        # came from right guesses only).
        end = int(wrong[0]) + 1 if len(wrong) else len(part)
        out[offset : offset + end] = reference[:end]
        last, count = end - 1, int(before[end - 1])  # normal points of the stretch before the last
        if found[last]:  # a spike: the baseline does not move
            base = joined[count : count + window]
        else:
            base = np.concatenate([joined[count + 1 : count + window], part[last : last + 1]])
        held = float(reference[last]) if found[last] else _baseline(base, floor)
        offset += end
        kept += end
        wasted += len(part) - end
        stretch = min(2 * stretch, _STRETCH[1]) if end == len(part) else max(stretch // 4, _STRETCH[0])
    memo.recent = deque(base.tolist())
    memo.ordered = sorted(memo.recent)
    return offset


def _baseline(window: np.ndarray, floor: float) -> float:
    """The baseline a full window of normal points gives the next point."""
    return max(float(window_medians(window[None, :])[0]), floor)
