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

from rltop.ingest.frames import strided_view
from rltop.ingest.wire import WireError, decode_event

_MAX_FAST_TAG = 120  # tags up to this length take the vectorised path
_HASH_PRIME = np.uint64(0x100000001B3)


@dataclass
class TagPoints:
    """Points of one tag decoded from one buffer, in file order."""

    steps: np.ndarray
    wall_times: np.ndarray
    values: np.ndarray
    single_precision: bool = True


@dataclass
class DecodedBatch:
    """Everything decoded from one buffer of records."""

    scalars: dict[str, TagPoints] = field(default_factory=dict)
    texts: list[tuple[str, int, float, str]] = field(default_factory=list)  # tag, step, wall, text
    file_version: str | None = None
    bad_records: list[int] = field(default_factory=list)  # payload offsets that did not decode


def decode_records(
    data: bytes, starts: np.ndarray, lengths: np.ndarray, plugins: dict[str, str]
) -> DecodedBatch:
    """Decode the records whose payloads are ``data[starts[i] : starts[i] + lengths[i]]``."""
    batch = DecodedBatch()
    if starts.size == 0:
        return batch
    buf = np.frombuffer(data, dtype=np.uint8)
    fast, tag_ids, tag_names, steps, walls, values = _decode_fast(data, buf, starts, lengths)
    # tag id -> list of (record index, step, wall, value, single) from the slow path
    slow_points: dict[str, list[tuple[int, int, float, float, bool]]] = {}
    for index in np.flatnonzero(~fast).tolist():
        start = int(starts[index])
        payload = data[start : start + int(lengths[index])]
        try:
            event = decode_event(payload, plugins)
        except WireError:
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
        order = np.argsort(tag_ids, kind="stable")
        bounds = np.flatnonzero(np.diff(tag_ids[order])) + 1
        for group in np.split(order, bounds):
            name = tag_names[int(tag_ids[group[0]])]
            batch.scalars[name] = TagPoints(steps[group], walls[group], values[group])
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
        batch.scalars[name] = TagPoints(steps, walls, values, single)
        return
    tag_id = tag_names.index(name)
    fast_rows = fast_index[tag_ids == tag_id]
    rows = np.concatenate([fast_rows, idx])
    order = np.argsort(rows, kind="stable")
    batch.scalars[name] = TagPoints(
        np.concatenate([existing.steps, steps])[order],
        np.concatenate([existing.wall_times, walls])[order],
        np.concatenate([existing.values, values])[order],
        existing.single_precision and single,
    )


def _decode_fast(data: bytes, buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray):
    """Vectorised decode of one-scalar records.

    Returns (fast mask over all records, tag id per fast record, tag names, steps, walls, values).
    """
    n = buf.size
    top = n - 1
    ends = starts + lengths
    ok = (lengths >= 16) & (buf[starts] == 0x09) & (buf[np.minimum(starts + 9, top)] == 0x10)
    # Branch-free varint: up to 10 bytes, all records in lock step.
    step = np.zeros(starts.size, dtype=np.uint64)
    size = np.zeros(starts.size, dtype=np.int64)
    pending = ok.copy()
    for k in range(10):
        if not pending.any():
            break
        byte = buf[np.minimum(starts + 10 + k, top)]
        step[pending] |= (byte[pending] & np.uint8(0x7F)).astype(np.uint64) << np.uint64(7 * k)
        ended = pending & (byte < 0x80)
        size[ended] = k + 1
        pending &= ~ended
    ok &= (size > 0) & ~pending
    q = np.minimum(starts + 10 + size, top)
    tag_len = buf[np.minimum(q + 5, top)].astype(np.int64)
    value_len = buf[np.minimum(q + 3, top)].astype(np.int64)
    summary_len = buf[np.minimum(q + 1, top)].astype(np.int64)
    ok &= (buf[q] == 0x2A) & (buf[np.minimum(q + 2, top)] == 0x0A) & (buf[np.minimum(q + 4, top)] == 0x0A)
    ok &= (tag_len <= _MAX_FAST_TAG) & (value_len == tag_len + 7) & (summary_len == tag_len + 9)
    ok &= q + 11 + tag_len == ends
    ok &= buf[np.minimum(q + 6 + tag_len, top)] == 0x15
    rows = np.flatnonzero(ok)
    empty = np.empty(0, np.int64)
    if rows.size == 0:
        return ok, empty, [], empty, np.empty(0), np.empty(0)
    q, tag_len = q[rows], tag_len[rows]
    tag_start = q + 6
    tag_ids, names, exact = _tag_ids(data, buf, tag_start, tag_len)
    if not exact.all():
        ok[rows[~exact]] = False
        rows, q, tag_len, tag_ids = rows[exact], q[exact], tag_len[exact], tag_ids[exact]
    walls = strided_view(data, "<f8")[starts[rows] + 1]
    values = strided_view(data, "<f4")[q + 7 + tag_len].astype(np.float64)
    steps = step[rows].view(np.int64)
    return ok, tag_ids, names, steps, walls, values


def _tag_ids(data: bytes, buf: np.ndarray, tag_start: np.ndarray, tag_len: np.ndarray):
    """Group records by exact tag bytes: (id per record, names by id, exact-match mask)."""
    padded = data + bytes(8)  # lets the last word of a tag at the very end be gathered
    words_view = strided_view(padded, "<u8")
    word_count = (int(tag_len.max()) + 7) // 8 if tag_len.size else 0
    words = []
    digest = tag_len.astype(np.uint64)
    for k in range(word_count):
        remaining = np.clip(tag_len - 8 * k, 0, 8)
        word = words_view[np.minimum(tag_start + 8 * k, words_view.size - 1)]
        mask = np.where(
            remaining >= 8,
            np.uint64(0xFFFFFFFFFFFFFFFF),
            (np.uint64(1) << (remaining.astype(np.uint64) * np.uint64(8))) - np.uint64(1),
        )
        word = word & mask
        words.append(word)
        digest = digest * _HASH_PRIME ^ word
    unique, first, inverse = np.unique(digest, return_index=True, return_inverse=True)
    exact = tag_len == tag_len[first][inverse]
    for word in words:
        exact &= word == word[first][inverse]
    names = [
        data[int(tag_start[i]) : int(tag_start[i] + tag_len[i])].decode("utf-8", "replace")
        for i in first.tolist()
    ]
    # Two different digests could still decode to the same name (invalid UTF-8 replaced):
    # merge such ids so one tag never becomes two series.
    canonical = {}
    remap = np.array([canonical.setdefault(name, i) for i, name in enumerate(names)], dtype=np.int64)
    return remap[inverse], names, exact
