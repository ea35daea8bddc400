"""Vectorised framing: every record start of a buffer at once, without walking it record by record.

It serves the full-load goals (`rltop.ingest.tfrecord.fast`): a Python walk over frames alone tops
out near 3M records/s, slower than the whole vectorised load. Candidates are the byte positions
whose payload would start with ``0x09`` (an Event's ``wall_time`` field, which writers always
serialise first), whose length fits the buffer and whose length CRC checks (computed once per
distinct length); `rltop.ingest.tfrecord.frames.scan_frames` takes every chain of candidates that
end where the next starts, and walks only where a chain breaks. A logging loop's records repeat
one cycle of lengths: from the first 64 KB the next headers are predicted, and a predicted record
is taken only when its header holds the predicted length and that length's CRC.
"""

from __future__ import annotations

import numpy as np

from rltop.ingest.tfrecord.fast.period import shortest_period
from rltop.ingest.tfrecord.frames import (
    HEADER,
    MAX_RECORD,
    OVERHEAD,
    RESYNC_WINDOW,
    filter_length_crc,
    length_crcs,
)


def record_candidates(buf: np.ndarray, u64: np.ndarray, u32: np.ndarray, n: int):
    """`_candidates` of the whole buffer, or of its end only when a cycle of lengths proves the rest.

    A writer logging the same tags every step writes records whose lengths repeat one cycle. The
    candidates of the first 64 KB (512 KB for a long cycle) give the start of the chain; from where
    its lengths repeat, the next records are predicted, and a predicted record is taken only when
    its header holds the length predicted and that length's CRC: each proven record ends where the
    next begins, so the chain is exactly what the candidate scan would have found, without
    searching 4 MB for it.
    """
    for prefix in _PREFIXES:  # a short cycle shows in a short prefix; thousands of tags need more
        if n <= prefix * 2:
            return _candidates(buf, u64, u32, n)
        starts, lengths = _candidates(buf, u64, u32, prefix)
        if starts.size < _MIN_CHAIN or starts[0] != 0:
            return _candidates(buf, u64, u32, n)
        ends = starts + OVERHEAD + lengths
        broken = np.flatnonzero(ends[:-1] != starts[1:])
        chain = int(broken[0]) + 1 if broken.size else starts.size  # records chained from 0
        period = shortest_period(lengths[:chain], _MAX_CYCLE) if chain >= _MIN_CHAIN else None
        if period is not None:
            break
        if broken.size:
            return _candidates(buf, u64, u32, n)
    else:
        return _candidates(buf, u64, u32, n)
    cycle_lengths = lengths[chain - period : chain]
    sizes = cycle_lengths + OVERHEAD
    cycle_bytes = int(sizes.sum())
    at = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    begin = int(ends[chain - 1])
    whole = (n - begin) // cycle_bytes
    predicted = ((begin + cycle_bytes * np.arange(whole + 1, dtype=np.int64))[:, None] + at).ravel()
    expected = np.tile(cycle_lengths, whole + 1)
    fits = predicted + OVERHEAD + expected <= n
    predicted, expected = predicted[fits], expected[fits]
    crcs = np.tile(length_crcs(cycle_lengths), whole + 1)[fits]
    proven = (u64[predicted] == expected.astype(np.uint64)) & (u32[predicted + 8] == crcs)
    bad = np.flatnonzero(~proven)
    taken = int(bad[0]) if bad.size else predicted.size
    stop = int(predicted[taken - 1] + OVERHEAD + expected[taken - 1]) if taken else begin
    later_starts, later_lengths = _candidates(buf, u64, u32, n, stop)
    return (np.concatenate([starts[:chain], predicted[:taken], later_starts]),
            np.concatenate([lengths[:chain], expected[:taken], later_lengths]))


_PREFIXES = (1 << 16, 1 << 19)  # the second holds two cycles of 4000 records of 60 bytes
_MIN_CHAIN = 64
_MAX_CYCLE = 4096


def _candidates(buf: np.ndarray, u64: np.ndarray, u32: np.ndarray, n: int, start: int = 0):
    """Record starts in ``[start, n)`` whose payload begins with 0x09, that end by ``n``, and whose
    length CRC checks."""
    if n - start < OVERHEAD + 1:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    # Block by block: the comparison's mask is a byte per byte, and a window holding one huge
    # record (a 500 MB text summary) must not cost a second buffer of its size.
    blocks = [
        np.flatnonzero(buf[block + HEADER : min(block + RESYNC_WINDOW, n - HEADER) + HEADER] == 0x09) + block
        for block in range(start, n - HEADER, RESYNC_WINDOW)
    ]
    cand = np.concatenate(blocks) if len(blocks) != 1 else blocks[0]
    if cand.size == 0:
        return cand.astype(np.int64), cand.astype(np.int64)
    # A length of 2^63 or more reads as negative: "does not fit", like any other too large.
    lengths = u64[cand].view(np.int64)
    fits = (lengths < MAX_RECORD) & (lengths >= 0) & (cand + OVERHEAD + lengths <= n)
    if not fits.all():
        cand, lengths = cand[fits], lengths[fits]
    return filter_length_crc(u32, cand, lengths)


