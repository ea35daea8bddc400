"""TFRecord framing: find every complete record in a byte buffer, fast and defensively.

A record is ``[u64 length][u32 masked crc32c(length)][payload][u32 masked crc32c(payload)]``.
The plain scan walks the records one by one. With the vectorised tier on (the default), the
candidate record starts of the whole buffer are found at once (`tfrecord.fast.framing`),
every chain of candidates that end where the next starts is taken whole, and the walk runs only
where the chain breaks: events of another shape, damage, and the tail.

A length-CRC mismatch is "not written yet" when no valid record follows it (the writer is in the
middle of a record, or a network file system shows zero-filled space before the data), and
corruption when one does: the scan then resynchronises on that next valid record and reports the
skipped span once. A stretch of more than 16 MB with no valid record at all is given up on (reported
once, its last 64 KB kept) so that garbage can never hold unbounded memory.

A valid header whose record does not fit in the buffer is waited for, unless a complete valid record
starts inside its claimed span: then the writer has moved on (a torn write, or a length that is
wrong although its CRC checks) and the span is damage like any other. Payload CRCs are checked by
the decoder (`tfrecord.records`), for every record; `tfrecord.torn` then
searches the claimed span of each record that fails for the records hidden in it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from rltop.ingest.sources.tfevents.tfrecord import fast
from rltop.ingest.sources.tfevents.tfrecord.crc import masked_crc32c_rows

HEADER = 12  # u64 length + u32 length crc
OVERHEAD = 16  # header + u32 payload crc
MAX_RECORD = 1 << 31  # a larger length is treated as damage, never allocated
MAX_BLOCKED = 16 << 20  # bytes after a bad header, with nothing valid in them, before giving up
KEEP_AFTER_GIVING_UP = 1 << 16  # the tail kept then: a valid record may be starting in it


@dataclass
class FrameScan:
    """The complete records found in a buffer and how far the buffer was consumed."""

    payload_starts: np.ndarray  # int64 offsets of each payload in the buffer
    payload_lengths: np.ndarray  # int64
    consumed: int  # bytes up to which the buffer is fully processed
    damage: list[tuple[int, int]] = field(default_factory=list)  # (offset, bytes skipped)
    # Offset of an invalid header with nothing valid after it (waiting for the writer), if any.
    blocked_at: int | None = None
    # Claimed length of the valid header at ``consumed`` whose record goes past the buffer, if any.
    waiting_length: int | None = None
    # The record at ``consumed`` is complete but fails its payload CRC, and nothing valid follows it:
    # its bytes may not have landed yet (set by `tfrecord.torn`).
    retry: bool = False
    # The damage at the end ran past `MAX_BLOCKED` and the scan gave up on it at ``consumed``: the
    # next window may continue the same damaged span (one span, one report).
    gave_up: bool = False


def strided_view(buf: bytes | memoryview, dtype: str) -> np.ndarray:
    """A view where element i is the ``dtype`` value stored at byte i (stride 1, no copy)."""
    size = np.dtype(dtype).itemsize
    count = len(buf) - size + 1
    if count <= 0:
        return np.empty(0, dtype=dtype)
    return np.ndarray(shape=(count,), dtype=dtype, buffer=buf, offset=0, strides=(1,))


def scan_frames(data: bytes) -> FrameScan:
    """Find the complete, valid records of ``data`` (which starts on a record boundary)."""
    n = len(data)
    buf = np.frombuffer(data, dtype=np.uint8)
    u64 = strided_view(data, "<u8")
    u32 = strided_view(data, "<u4")
    if fast.ENABLED:
        from rltop.ingest.sources.tfevents.tfrecord.fast.framing import record_candidates

        starts, lengths = record_candidates(buf, u64, u32, n)
    else:  # the plain reader: the walk below takes every record
        starts = lengths = np.empty(0, np.int64)
    ends = starts + OVERHEAD + lengths
    breaks = np.flatnonzero(ends[:-1] != starts[1:]) if starts.size > 1 else np.empty(0, np.int64)

    found_starts: list[np.ndarray] = []
    found_lengths: list[np.ndarray] = []
    damage: list[tuple[int, int]] = []
    pos = 0
    blocked_at = waiting_length = None
    while pos < n:
        j = int(np.searchsorted(starts, pos))
        if j < starts.size and starts[j] == pos:
            b = int(np.searchsorted(breaks, j))
            last = int(breaks[b]) if b < breaks.size else starts.size - 1
            found_starts.append(starts[j : last + 1])
            found_lengths.append(lengths[j : last + 1])
            pos = int(ends[last])
            continue
        if n - pos < HEADER:
            break  # header not complete yet
        length = int(u64[pos])
        header_ok = length < MAX_RECORD and _length_crc_ok(data, pos, length, int(u32[pos + 8]))
        if header_ok:
            if pos + OVERHEAD + length > n:
                inside = _next_valid_record(data, buf, u64, u32, pos + 1, starts)
                if inside is None:
                    waiting_length = length  # payload not written yet
                    break
                damage.append((pos, inside - pos))  # the writer went on: the length lies
                pos = inside
                continue
            found_starts.append(np.array([pos], dtype=np.int64))
            found_lengths.append(np.array([length], dtype=np.int64))
            pos += OVERHEAD + length
            continue
        resync = _next_valid_record(data, buf, u64, u32, pos + 1, starts)
        if resync is None:
            blocked_at = pos
            break  # nothing valid after it: most likely a record still being written
        damage.append((pos, resync - pos))
        pos = resync

    gave_up = blocked_at is not None and n - blocked_at > MAX_BLOCKED
    if gave_up:
        resume = n - KEEP_AFTER_GIVING_UP
        damage.append((blocked_at, resume - blocked_at))
        blocked_at, pos = None, resume
    record_starts = np.concatenate(found_starts) if found_starts else np.empty(0, np.int64)
    record_lengths = np.concatenate(found_lengths) if found_lengths else np.empty(0, np.int64)
    return FrameScan(
        record_starts + HEADER, record_lengths, pos, merge_spans(damage), blocked_at, waiting_length,
        gave_up=gave_up,
    )  # fmt: skip


def valid_headers(data: bytes | memoryview, start: int = 0) -> Iterator[tuple[int, int]]:
    """(offset, claimed length) of every header at or after ``start`` whose length CRC checks, in order.

    The record need not fit in ``data``: the caller decides how to check a record that goes past it.
    """
    n = len(data)
    u64 = strided_view(data, "<u8")
    u32 = strided_view(data, "<u4")
    for window in range(start, n - HEADER + 1, RESYNC_WINDOW):
        pos = np.arange(window, min(window + RESYNC_WINDOW, n - HEADER + 1), dtype=np.int64)
        lengths = u64[pos]
        plausible = lengths < MAX_RECORD
        pos, lengths = pos[plausible], lengths[plausible].astype(np.int64)
        if pos.size:
            yield from zip(*(a.tolist() for a in filter_length_crc(u32, pos, lengths)))


def record_crc_ok(record: bytes | memoryview) -> bool:
    """True when ``record`` (one whole record, header to payload CRC) has a valid payload CRC."""
    length = len(record) - OVERHEAD
    buf = np.frombuffer(record, dtype=np.uint8)
    stored = int.from_bytes(record[HEADER + length :], "little")
    return int(masked_crc32c_rows(buf, np.array([HEADER]), np.array([length]))[0]) == stored


def merge_spans(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Join touching or overlapping (offset, length) spans: one damage, one report."""
    merged: list[tuple[int, int]] = []
    for start, length in sorted(spans):
        if merged and start <= merged[-1][0] + merged[-1][1]:
            first, first_length = merged[-1]
            merged[-1] = (first, max(first_length, start + length - first))
        else:
            merged.append((start, length))
    return merged


_SMALL_LENGTHS = 4096
_small_length_crcs: np.ndarray | None = None


def length_crcs(lengths: np.ndarray) -> np.ndarray:
    """Masked CRC32C of each length's 8 little-endian bytes (computed once per distinct value)."""
    global _small_length_crcs
    if _small_length_crcs is None:
        # Scalar records are tens of bytes long: a table of the first 4096 lengths covers
        # nearly every record without sorting the whole column to find distinct values.
        _small_length_crcs = _crc_of_lengths(np.arange(_SMALL_LENGTHS, dtype=np.int64))
    if lengths.size and int(lengths.max()) < _SMALL_LENGTHS:
        return _small_length_crcs[lengths]  # lengths are never negative here
    small = lengths < _SMALL_LENGTHS
    out = _small_length_crcs[np.where(small, lengths, 0)]
    if not small.all():
        large = np.flatnonzero(~small)
        unique, inverse = np.unique(lengths[large], return_inverse=True)
        out[large] = _crc_of_lengths(unique)[inverse]
    return out


def _crc_of_lengths(values: np.ndarray) -> np.ndarray:
    raw = np.ascontiguousarray(values.astype("<u8")).view(np.uint8)
    count = values.size
    return masked_crc32c_rows(raw, np.arange(count, dtype=np.int64) * 8, np.full(count, 8))


def filter_length_crc(u32: np.ndarray, starts: np.ndarray, lengths: np.ndarray):
    """Keep the (start, length) pairs whose stored length CRC matches."""
    ok = length_crcs(lengths) == u32[starts + 8]
    return starts[ok], lengths[ok]


def _length_crc_ok(data: bytes, pos: int, length: int, stored: int) -> bool:
    return int(length_crcs(np.array([length], dtype=np.int64))[0]) == stored


def _next_valid_record(data, buf, u64, u32, start: int, starts: np.ndarray) -> int | None:
    """The first position >= start holding a whole record whose two CRCs check, or None."""
    # Most damage sits between ordinary scalar records: the first candidate whose payload CRC
    # checks bounds the search, then the general scan looks for any record shape before it.
    later = starts[np.searchsorted(starts, start) :]
    for first in range(0, later.size, _RESYNC_BATCH):
        batch = later[first : first + _RESYNC_BATCH]
        lengths = u64[batch].astype(np.int64)
        good = masked_crc32c_rows(buf, batch + HEADER, lengths) == u32[batch + HEADER + lengths]
        hits = np.flatnonzero(good)
        if hits.size:
            candidate = int(batch[hits[0]])
            general = _general_resync(data, u64, u32, buf, start, candidate)
            return candidate if general is None else general
    return _general_resync(data, u64, u32, buf, start, len(data))


_RESYNC_BATCH = 64
RESYNC_WINDOW = 1 << 22


def _general_resync(data, u64, u32, buf, start: int, stop: int) -> int | None:
    """Any record start in [start, stop) (any payload shape) with both CRCs valid."""
    n = len(data)
    last = min(stop, n - OVERHEAD)
    for window in range(start, last, RESYNC_WINDOW):
        end = min(window + RESYNC_WINDOW, last)
        low, high, stored = u32[window:end], u32[window + 4 : end + 4], u32[window + 8 : end + 8]
        # On slices of the strided views (no gather): a length below MAX_RECORD has a zero high
        # half, and a header's 12 bytes are never all zero (the length CRC of a zero length is
        # not zero), so a zero-filled stretch (a preallocated or sparse file) costs a few passes
        # of comparisons instead of a CRC per byte.
        maybe = np.flatnonzero((high == 0) & (low < MAX_RECORD) & ((low | stored) != 0))
        if maybe.size == 0:
            continue
        pos = maybe + window
        lengths = low[maybe].astype(np.int64)
        fits = pos + OVERHEAD + lengths <= n
        pos, lengths = pos[fits], lengths[fits]
        pos, lengths = filter_length_crc(u32, pos, lengths)
        for p, length in zip(pos.tolist(), lengths.tolist()):
            crc = masked_crc32c_rows(buf, np.array([p + HEADER]), np.array([length]))[0]
            if int(crc) == int(u32[p + HEADER + length]):
                return p
    return None
