"""The shortest period of a sequence (record lengths, record layouts), when it has one."""

from __future__ import annotations

import numpy as np

_ANCHORS = 32  # positions whose values a period must repeat before it is checked in full
_TRIED = 16  # periods checked in full


def shortest_period(values: np.ndarray, longest: int, mismatches: int = 0) -> int | None:
    """The shortest period ``p <= longest`` of the last three quarters of ``values`` (which must
    hold it at least twice), allowing ``mismatches`` positions where ``values[i + p] != values[i]``.

    Periods are first screened on a few anchors spread over the sequence, so that runs of equal
    values (many tags of one length) do not make every short shift a candidate.
    """
    tail = values[values.size // 4 :]
    half = min(tail.size // 2, longest)
    if half < 2:
        return None
    # Anchors where the sequence changes value: in a cycle of many tags of one length and a few
    # of others, anchors among the equal ones would let every short shift through.
    changes = np.flatnonzero(tail[1 : tail.size - half] != tail[: tail.size - half - 1]) + 1
    if changes.size >= 4:
        anchors = changes[np.linspace(0, changes.size - 1, num=min(_ANCHORS, changes.size), dtype=np.int64)]
    else:
        anchors = np.linspace(0, tail.size - half - 1, num=min(_ANCHORS, tail.size - half), dtype=np.int64)
    shifts = np.arange(1, half + 1, dtype=np.int64)
    agree = (tail[anchors[:, None] + shifts[None, :]] == tail[anchors][:, None]).sum(axis=0)
    screened = shifts[agree >= anchors.size - min(mismatches, anchors.size // 4)]
    for period in screened[:_TRIED].tolist():
        if np.count_nonzero(tail[period:] != tail[:-period]) <= mismatches:
            return period
    return None
