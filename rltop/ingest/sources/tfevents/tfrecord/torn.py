"""The records hidden in the claimed span of a record whose payload CRC fails.

A torn write (a full disk, a crash and a restart that appends) leaves a header whose length CRC is
valid and a payload cut short, with the writer's next records right after the cut. The framing
trusts the claimed length, so it skips the whole span; a length that is wrong although its CRC
checks does the same. `recover` searches each such span again, from the damaged record's start + 1
up to the next record known to be good, for the records in it (recursively: a span may hold
another torn record), so every intact record is read and the damage reported is the torn part only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from rltop.ingest.sources.tfevents.tfrecord.crc import masked_crc32c_rows
from rltop.ingest.sources.tfevents.tfrecord.frames import (
    HEADER,
    FrameScan,
    merge_spans,
    scan_frames,
    strided_view,
)

MAX_DEPTH = 32  # torn records nested deeper than this are skipped whole (only crafted files do it)
BUDGET_FACTOR = 4  # bytes re-scanned per buffer at most, as a multiple of its size (plus 1 MB)


@dataclass
class _Tail:
    """How a scanned stretch ends (positions in the whole buffer)."""

    consumed: int
    blocked_at: int | None = None
    waiting_length: int | None = None
    retry: bool = False


@dataclass
class _Level:
    """The records of one scanned stretch, its damage and its end."""

    starts: np.ndarray  # record starts (headers), sorted
    lengths: np.ndarray  # payload lengths
    bad: np.ndarray  # payload CRC mismatch, per record
    damage: list[tuple[int, int]]
    tail: _Tail


def recover(
    data: bytes | memoryview, scan: FrameScan, bad_payloads: Iterable[int], at_eof: bool
) -> FrameScan:
    """``scan`` with the records whose payload starts are in ``bad_payloads`` replaced by what they hid.

    ``at_eof``: the buffer ends where the file ends. A bad record with nothing valid after it is
    then left pending (``retry``): a network file system may show the size before the bytes.
    """
    buf = np.frombuffer(data, dtype=np.uint8)
    u32 = strided_view(data, "<u4")
    starts = scan.payload_starts - HEADER
    bad = np.isin(scan.payload_starts, np.fromiter(bad_payloads, dtype=np.int64))
    level = _Level(starts, scan.payload_lengths, bad, list(scan.damage),
                   _Tail(scan.consumed, scan.blocked_at, scan.waiting_length))  # fmt: skip
    budget = [BUDGET_FACTOR * len(data) + (1 << 20)]
    starts, lengths, damage, tail = _resolve(data, buf, u32, level, len(data), True, at_eof, 0, budget)
    return FrameScan(
        starts + HEADER, lengths, tail.consumed, merge_spans(damage), tail.blocked_at, tail.waiting_length,
        tail.retry, gave_up=scan.gave_up and tail.consumed == scan.consumed,
    )  # fmt: skip


def _resolve(data, buf, u32, level: _Level, stop: int, open_end: bool, at_eof: bool, depth: int, budget):
    """Good records, damage and end of a stretch ending at ``stop``, its bad records searched again.

    ``open_end``: ``stop`` is the end of the buffer (the stretch's end is the buffer's end state);
    otherwise ``stop`` is the start of a record known to be good.
    """
    starts, lengths, bad = level.starts, level.lengths, level.bad
    if not bad.any():
        return starts, lengths, level.damage, level.tail
    good_index = np.flatnonzero(~bad)
    found_starts, found_lengths = [starts[good_index]], [lengths[good_index]]
    damage, tail = level.damage, level.tail
    bad_index = np.flatnonzero(bad)
    # A run of bad records with no good one between them is one span to search.
    for first in bad_index[np.r_[True, np.diff(bad_index) > 1]].tolist():
        begin = int(starts[first])
        after = int(np.searchsorted(good_index, first))
        last_run = after == good_index.size
        region_stop = stop if last_run else int(starts[good_index[after]])
        region_open = last_run and open_end
        damage = [span for span in damage if not begin <= span[0] < region_stop]
        if depth >= MAX_DEPTH or budget[0] <= 0:
            end = tail.consumed if last_run else region_stop
            damage.append((begin, max(end - begin, 1)))
            continue
        budget[0] -= region_stop - begin
        sub = _scan_region(data, buf, u32, begin + 1, region_stop)
        sub.damage.append((begin, 1))
        sub_starts, sub_lengths, sub_damage, sub_tail = _resolve(
            data, buf, u32, sub, region_stop, region_open, at_eof, depth + 1, budget
        )
        if region_open and sub_starts.size == 0 and (at_eof or begin > 0):
            # Nothing valid after the bad record: its bytes may still land (or the writer goes
            # on later, and the search is made again then). Read it again from its start.
            tail = _Tail(begin, retry=True)
            continue
        found_starts.append(sub_starts)
        found_lengths.append(sub_lengths)
        damage = damage + sub_damage
        if last_run:
            tail = sub_tail
        elif sub_tail.consumed < region_stop:
            damage.append((sub_tail.consumed, region_stop - sub_tail.consumed))
    all_starts = np.concatenate(found_starts)
    all_lengths = np.concatenate(found_lengths)
    order = np.argsort(all_starts, kind="stable")
    return all_starts[order], all_lengths[order], damage, tail


def _scan_region(data, buf: np.ndarray, u32: np.ndarray, begin: int, stop: int) -> _Level:
    """A fresh scan of ``data[begin:stop]`` (not assumed to start on a record), payload CRCs checked."""
    scan = scan_frames(memoryview(data)[begin:stop])
    payloads = scan.payload_starts + begin
    lengths = scan.payload_lengths
    bad = masked_crc32c_rows(buf, payloads, lengths) != u32[payloads + lengths]
    tail = _Tail(
        scan.consumed + begin,
        None if scan.blocked_at is None else scan.blocked_at + begin,
        scan.waiting_length,
    )
    damage = [(where + begin, size) for where, size in scan.damage]
    return _Level(payloads - HEADER, lengths, bad, damage, tail)
