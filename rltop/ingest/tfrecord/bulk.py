"""Decode many Event records at once: numpy for the common one-scalar layout, Python for the rest.

Almost every record a SummaryWriter writes for ``add_scalar`` has the same byte layout::

    09 <f64 wall_time> 10 <varint step> 2a <len> 0a <len> 0a <taglen> <tag> 15 <f32 value>

Those records are decoded column-wise: gathers through stride-1 views of the buffer (element i is
the value stored at byte i), a branch-free varint for the step, and an exact tag dictionary (a
hash of the tag bytes groups records, then every record's tag bytes are compared with its group's
first record, so a hash collision can never merge two tags). Everything else (file_version, text
summaries, tensor scalars, step 0, several values per event, unknown fields) goes through the
general wire decoder, and both streams are merged back in file order per tag.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rltop.ingest.reading import Decoded
from rltop.ingest.tfrecord.crc import masked_crc32c_affine, masked_crc32c_rows
from rltop.ingest.tfrecord.frames import strided_view
from rltop.ingest.tfrecord.wire import WireError, decode_event
from rltop.model.series import Points

_MAX_FAST_TAG = 120  # tags up to this length take the vectorised path
_MIN_FAST_RECORD = 22
_FEW_RECORDS = 16  # reads with at most this many records skip the vectorised path
_HASH_PRIME = np.uint64(0x100000001B3)
# _TAIL_MASKS[r + _MASK_OFFSET] keeps the low r bytes of a little-endian word: all 8 for r >= 8,
# none for r <= 0 (a word past the tag's end), so no per-word clipping is needed.
_MASK_OFFSET = 8 * ((_MAX_FAST_TAG + 7) // 8)
_TAIL_MASKS = np.array(
    [(1 << (8 * min(max(i - _MASK_OFFSET, 0), 8))) - 1 for i in range(_MASK_OFFSET + _MAX_FAST_TAG + 1)],
    dtype=np.uint64,
)


@dataclass
class DecodedBatch(Decoded):
    """Everything decoded from one buffer of records (scalars per tag in file order), plus damage."""

    bad_records: list[int] = field(default_factory=list)  # payload offsets that did not decode
    bad_crc: list[int] = field(default_factory=list)  # payload offsets whose CRC did not match


def decode_records(
    data: bytes, starts: np.ndarray, lengths: np.ndarray, plugins: dict[str, str]
) -> DecodedBatch:
    """Decode the records whose payloads are ``data[starts[i] : starts[i] + lengths[i]]``."""
    batch = DecodedBatch()
    if starts.size == 0:
        return batch
    buf = np.frombuffer(data, dtype=np.uint8)
    if starts.size > _FEW_RECORDS:
        fast, corrupt, tag_ids, tag_names, steps, walls, values = _decode_fast(data, buf, starts, lengths)
    else:
        # A live-tail read of a few records: the per-record path costs less than the fixed
        # overhead of some fifty numpy calls.
        fast, corrupt = np.zeros(starts.size, dtype=bool), np.zeros(starts.size, dtype=bool)
        tag_ids, tag_names = np.empty(0, np.int64), []
        steps, walls, values = tag_ids, np.empty(0), np.empty(0)
    slow = np.flatnonzero(~fast & ~corrupt)
    # Every payload's CRC is checked: a flipped bit must never become a wrong point (or, through
    # a wrong step, purge a series). Fast rows were checked in _decode_fast.
    stored = strided_view(data, "<u4")[starts[slow] + lengths[slow]]
    slow_ok = masked_crc32c_rows(buf, starts[slow], lengths[slow]) == stored
    corrupt[slow[~slow_ok]] = True
    batch.bad_crc = starts[np.flatnonzero(corrupt)].tolist()
    # tag id -> list of (record index, step, wall, value, single) from the slow path
    slow_points: dict[str, list[tuple[int, int, float, float, bool]]] = {}
    for index in slow[slow_ok].tolist():
        start = int(starts[index])
        payload = data[start : start + int(lengths[index])]
        try:
            event = decode_event(payload, plugins)
        except (WireError, ValueError, OverflowError, UnicodeError):
            # Well-framed bytes that are not a usable Event: report them, never raise.
            batch.bad_records.append(start)
            continue
        if event.file_version is not None:
            batch.file_version = event.file_version
        for tag, value, single in event.scalars:
            slow_points.setdefault(tag, []).append((index, event.step, event.wall_time, value, single))
        for tag, text in event.texts:
            batch.texts.append((tag, event.step, event.wall_time, text))
    fast_index = np.flatnonzero(fast)
    if tag_ids.size:
        # Stable radix sort on small integers: O(n), and file order is kept within each tag.
        small = tag_ids.astype(np.uint16) if len(tag_names) < 1 << 16 else tag_ids
        order = np.argsort(small, kind="stable")
        bounds = np.flatnonzero(np.diff(tag_ids[order])) + 1
        for group in np.split(order, bounds):
            name = tag_names[int(tag_ids[group[0]])]
            batch.scalars[name] = Points(steps[group], walls[group], values[group])
    for name, points in slow_points.items():
        _merge_slow(batch, name, points, fast_index, tag_ids, tag_names)
    return batch


def _merge_slow(batch, name, points, fast_index, tag_ids, tag_names) -> None:
    """Add slow-path points of one tag, merged in file order with its fast-path points."""
    idx = np.array([p[0] for p in points], dtype=np.int64)
    steps = np.array([p[1] for p in points], dtype=np.int64)
    walls = np.array([p[2] for p in points], dtype=np.float64)
    values = np.array([p[3] for p in points], dtype=np.float64)
    single = all(p[4] for p in points)
    existing = batch.scalars.get(name)
    if existing is None:
        batch.scalars[name] = Points(steps, walls, values, single)
        return
    tag_id = tag_names.index(name)
    fast_rows = fast_index[tag_ids == tag_id]
    rows = np.concatenate([fast_rows, idx])
    order = np.argsort(rows, kind="stable")
    batch.scalars[name] = Points(
        np.concatenate([existing.steps, steps])[order],
        np.concatenate([existing.wall_times, walls])[order],
        np.concatenate([existing.values, values])[order],
        existing.single_precision and single,
    )


def _decode_fast(data: bytes, buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray):
    """Vectorised decode of one-scalar records.

    Returns (fast mask over all records, tag id per fast record, tag names, steps, walls, values).
    """
    top = buf.size - 1
    ok = np.zeros(starts.size, dtype=bool)
    corrupt = np.zeros(starts.size, dtype=bool)
    # The smallest one-scalar record is 22 bytes; every index read below stays inside the record
    # or its 4-byte payload CRC, so no bounds clipping is needed until the tag length is known.
    rows = np.flatnonzero(lengths >= _MIN_FAST_RECORD)
    s = starts[rows]
    good = (buf[s] == 0x09) & (buf[s + 9] == 0x10)
    step, size = _varints(buf, s + 10)
    q = s + 10 + size
    tag_len = buf[q + 5].astype(np.int64)
    good &= (size > 0) & (buf[q] == 0x2A) & (buf[q + 2] == 0x0A) & (buf[q + 4] == 0x0A)
    good &= (tag_len <= _MAX_FAST_TAG) & (buf[q + 3] == tag_len + 7) & (buf[q + 1] == tag_len + 9)
    good &= q + 11 + tag_len == s + lengths[rows]
    good &= buf[np.minimum(q + 6 + tag_len, top)] == 0x15
    keep = np.flatnonzero(good)
    rows, q, tag_len, step, size = rows[keep], q[keep], tag_len[keep], step[keep], size[keep]
    empty = np.empty(0, np.int64)
    if rows.size == 0:
        return ok, corrupt, empty, [], empty, np.empty(0), np.empty(0)
    tag_start = q + 6
    tag_ids, names, exact = _tag_ids(data, buf, tag_start, tag_len)
    if not exact.all():
        rows, q, tag_len, tag_ids, step, size = (a[exact] for a in (rows, q, tag_len, tag_ids, step, size))
    good = _payload_crc_ok(data, buf, starts[rows], lengths[rows], tag_ids, size, q + 7 + tag_len)
    if not good.all():
        corrupt[rows[~good]] = True
        rows, q, tag_len, tag_ids, step = (a[good] for a in (rows, q, tag_len, tag_ids, step))
    ok[rows] = True
    walls = strided_view(data, "<f8")[starts[rows] + 1]
    values = strided_view(data, "<f4")[q + 7 + tag_len].astype(np.float64)
    return ok, corrupt, tag_ids, names, step, walls, values


def _payload_crc_ok(data, buf, starts, lengths, tag_ids, step_size, value_at) -> np.ndarray:
    """Check the payload CRC of one-scalar records with the affine shortcut.

    Records of one tag and one step-varint size have the same length and the same bytes except
    the wall time (offsets 1-8), the step (10..) and the value (4 bytes): the first record of each
    such group is the template, and only those offsets are looked up for the others.
    """
    group = tag_ids * 11 + step_size
    template = _first_of_key(group, int(group.max()) + 1)
    value_offset = value_at - starts
    variable: list[np.ndarray | int] = list(range(1, 9))  # wall_time
    variable += range(10, 10 + int(step_size.max()))  # step varint (fixed bytes past it: delta 0)
    variable += [value_offset + k for k in range(4)]  # the float32 value
    crcs = masked_crc32c_affine(buf, starts, lengths, template, variable)
    return crcs == strided_view(data, "<u4")[starts + lengths]


def _varints(buf: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Decode the varint starting at each offset: (values as int64, sizes; size 0 = malformed).

    Branch-free and unmasked: byte k contributes only while every earlier byte had its
    continuation bit set, so all records advance in lock step until the longest varint ends.
    """
    value = np.zeros(at.size, dtype=np.uint64)
    size = np.zeros(at.size, dtype=np.int64)
    going = np.ones(at.size, dtype=bool)
    for k in range(10):
        byte = buf[at + k]
        value |= (byte & 0x7F).astype(np.uint64) * going << np.uint64(7 * k)
        size += going
        going &= byte >= 0x80
        if not going.any():
            return value.view(np.int64), size
    size[going] = 0  # more than 10 bytes: not a varint
    return value.view(np.int64), size


def _tag_ids(data: bytes, buf: np.ndarray, tag_start: np.ndarray, tag_len: np.ndarray):
    """Group records by exact tag bytes: (id per record, names by id, exact-match mask)."""
    words_view = strided_view(data, "<u8")
    last_word = words_view.size - 1
    word_count = (int(tag_len.max()) + 7) // 8 if tag_len.size else 0
    words = []
    digest = tag_len.astype(np.uint64)
    mask_base = tag_len + _MASK_OFFSET
    for k in range(word_count):
        at = tag_start + 8 * k
        # A word starting inside its tag is always readable (the value and CRC follow the tag);
        # only the last records of the buffer can point past its end, and only with masked words.
        tail = int(np.searchsorted(at, last_word, side="right"))
        if tail < at.size:
            at[tail:] = np.minimum(at[tail:], last_word)
        word = words_view[at] & _TAIL_MASKS[mask_base - 8 * k]
        words.append(word)
        digest = digest * _HASH_PRIME ^ word
    first, inverse = _group_digests(digest)
    representative = first[inverse]
    exact = tag_len == tag_len[representative]
    for word in words:
        exact &= word == word[representative]
    names = [
        data[int(tag_start[i]) : int(tag_start[i] + tag_len[i])].decode("utf-8", "replace")
        for i in first.tolist()
    ]
    # Two different digests could still decode to the same name (invalid UTF-8 replaced):
    # merge such ids so one tag never becomes two series.
    canonical = {}
    remap = np.array([canonical.setdefault(name, i) for i, name in enumerate(names)], dtype=np.int64)
    return remap[inverse], names, exact


_BUCKETS = 1 << 16


def _group_digests(digest: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(index of the first record of each distinct digest, group number of every record).

    A 65536-bucket table finds the first record of each bucket in O(n) (np.unique would sort the
    whole column); records whose digest differs from their bucket's first record (a bucket
    collision, rare with the few hundred tags of a run) are grouped by np.unique on their own.
    """
    count = digest.size
    bucket = ((digest ^ (digest >> np.uint64(29))) & np.uint64(_BUCKETS - 1)).astype(np.int64)
    rep = _first_of_key(bucket, _BUCKETS)
    collided = digest != digest[rep]
    if collided.any():
        rows = np.flatnonzero(collided)
        _, first_rows, inverse_rows = np.unique(digest[rows], return_index=True, return_inverse=True)
        rep[rows] = rows[first_rows][inverse_rows]
    first = np.flatnonzero(rep == np.arange(count))
    group_of_first = np.empty(count, dtype=np.int64)
    group_of_first[first] = np.arange(first.size)
    return first, group_of_first[rep]


def _first_of_key(keys: np.ndarray, size: int) -> np.ndarray:
    """For each row, the index of the first row with the same key (keys in ``[0, size)``), in O(n)."""
    first = np.full(size, -1, dtype=np.int64)
    first[keys[::-1]] = np.arange(keys.size - 1, -1, -1, dtype=np.int64)  # the last write wins
    return first[keys]
