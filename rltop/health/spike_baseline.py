"""The spike rules' baseline: the median of the last ``window`` normal points before each point.

Sequential by nature: whether a point is a spike decides whether it enters the baseline. A live
batch is judged point by point, the window kept in a sorted list (O(log n) a point, about 1 µs in
Python). A whole history (100k points of a grad norm) is judged by speculation instead: spikes are
rare, so the medians of a stretch of points are computed at once as if none of them were a spike,
and kept up to the first one that is; the next stretch starts after it. Both ways give the same
numbers, bit for bit (`tests/test_spike_baseline.py`).
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import deque
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from rltop.health.robust import window_medians

SPECULATE_FROM = 512
"""Fewer new points than this (a live batch) are judged one by one."""
_STRETCH = (256, 4096)
"""Points judged at once: a stretch without a spike doubles the next one, a spike quarters it
(4096 windows of 50 doubles stay in the CPU cache)."""
_WASTE = 4
"""Medians computed and thrown away (after a spike) may reach this many times the points kept;
beyond that the spikes are too dense to guess past, and the rest is judged one by one."""


def spike_references(values: np.ndarray, start: int, memo: dict[str, Any], window: int, warmup: int,
                     need: int, floor: float, limit: float | None) -> np.ndarray:
    """The baseline each point of ``values[start:]`` is compared with (NaN while there is none).

    The baseline is ``max(median of the last window normal points, floor)`` once ``need`` normal
    points exist; the first ``warmup`` points never enter it, nor does a point at or above
    ``limit`` times its baseline (a spike). ``memo`` carries the window from call to call.
    """
    need = max(need, 1)
    memo.setdefault("recent", deque())
    memo.setdefault("ordered", [])
    # In float64 once, here: the speculation compares in it (numpy 1 compares float32 in float32),
    # and the point-by-point loop gets the same Python floats either way (float32 widens exactly).
    new = np.asarray(values[start:], dtype=np.float64)
    references = [np.nan] * len(new)
    offset = max(warmup - start, 0)  # the warm-up never enters the baseline
    # Speculation starts on a full window, once judging has begun, and with a positive floor:
    # then a median of signed zeros (which a sorted list and a partition may order differently)
    # is the floor either way.
    if len(memo["recent"]) < window:
        offset = _one_by_one(new, offset, references, memo, window, need, floor, limit, until_full=True)
    if (len(new) - offset >= SPECULATE_FROM and floor > 0 and len(memo["recent"]) == window >= need
            and np.isfinite(new[offset:]).all()):
        out = np.array(references, dtype=np.float64)
        offset = _speculate(new, offset, out, memo, window, floor, limit)
        tail = [np.nan] * (len(new) - offset)  # too short, or spikes too dense, to speculate
        _one_by_one(new[offset:], 0, tail, memo, window, need, floor, limit)
        out[offset:] = tail
        return out
    _one_by_one(new, offset, references, memo, window, need, floor, limit)
    return np.array(references, dtype=np.float64)


def _one_by_one(new: np.ndarray, offset: int, references: list[float], memo: dict[str, Any],
                window: int, need: int, floor: float, limit: float | None, until_full: bool = False) -> int:
    """Judge ``new[offset:]`` point by point into ``references``; return where it stopped: the
    end, or (``until_full``) where the window became full."""
    recent: deque[float] = memo["recent"]
    ordered: list[float] = memo["ordered"]
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
        insert(ordered, value)
        keep(value)
        if size >= window:
            del ordered[find(ordered, forget())]
        else:
            size += 1
    return len(new)


def _speculate(new: np.ndarray, offset: int, out: np.ndarray, memo: dict[str, Any], window: int,
               floor: float, limit: float | None) -> int:
    """Judge ``new[offset:]`` in stretches (see the module) into ``out``; return where the rest is
    left to `_one_by_one`. The memo's window is rebuilt from the last normal points."""
    base = np.array(memo["recent"], dtype=np.float64)  # the last `window` normal points, oldest first
    stretch, kept, wasted = _STRETCH[0], 0, 0
    while len(new) - offset >= SPECULATE_FROM and wasted <= _WASTE * kept + _STRETCH[1]:
        part = new[offset : offset + stretch]
        joined = np.concatenate([base, part])
        # Row j: the window before part[j], if no point of the stretch before j is a spike.
        reference = np.maximum(window_medians(sliding_window_view(joined[:-1], window)), floor)
        spikes = np.flatnonzero(part >= limit * reference) if limit is not None else ()
        if not len(spikes):
            out[offset : offset + len(part)] = reference
            base = joined[-window:]
            offset += len(part)
            kept += len(part)
            stretch = min(2 * stretch, _STRETCH[1])
            continue
        first = int(spikes[0])
        out[offset : offset + first + 1] = reference[: first + 1]
        base = joined[first : first + window]  # part[first] stays out of the baseline
        offset += first + 1
        # The points right after a spike are often spikes too (an episode): while they are, the
        # baseline does not move, so they are judged against it at once.
        held = reference[first]
        after = new[offset : offset + stretch]
        normal = np.flatnonzero(after < limit * held)
        spiked = int(normal[0]) if len(normal) else len(after)
        out[offset : offset + spiked] = held
        offset += spiked
        kept += first + 1 + spiked
        wasted += len(part) - first - 1
        stretch = max(stretch // 4, _STRETCH[0])
    memo["recent"] = deque(base.tolist())
    memo["ordered"] = sorted(memo["recent"])
    return offset

