"""Decode many Event records at once, the plain way or through the vectorised tier.

The plain decoder is the reference: every record goes through the general wire decoder
(`rltop.ingest.sources.tfevents.tfrecord.wire`), its payload CRC checked first. With the vectorised tier on
(`rltop.ingest.sources.tfevents.tfrecord.fast`, the default), the records of the one-value scalar layouts (a
simple value, or a float32 tensor with torch's ``new_style=True`` and TF2 writers) are decoded
column-wise there; everything else (file_version, text summaries, other tensors, several values
per event, unknown fields) still goes through the wire decoder, and both streams are merged back in
file order per tag. Both ways read the same points, bit for bit (``tests/e2e/test_reader_tiers.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rltop.ingest.columns import group_by_tag, split_by_tag
from rltop.ingest.reading import Decoded
from rltop.ingest.sources.tfevents.tfrecord import fast
from rltop.ingest.sources.tfevents.tfrecord.crc import masked_crc32c_rows
from rltop.ingest.sources.tfevents.tfrecord.fast.cycles import decode_cycles
from rltop.ingest.sources.tfevents.tfrecord.fast.onevalue import FastRows, no_rows
from rltop.ingest.sources.tfevents.tfrecord.fast.tags import TagCache
from rltop.ingest.sources.tfevents.tfrecord.frames import strided_view
from rltop.ingest.sources.tfevents.tfrecord.wire import WireError, decode_event
from rltop.model.series import Points

_FEW_RECORDS = 16  # reads with at most this many records (a live tail) take the plain path


class DecodedBatch(Decoded):
    """Everything decoded from one buffer of records, plus the damage found in it.

    When every scalar came from the vectorised tier they are one pack of ``columns``, not split
    by tag (`rltop.ingest.reading.Decoded`).
    """

    def __init__(self, **decoded: Any) -> None:
        super().__init__(**decoded)
        self.bad_records: list[int] = []  # payload offsets that did not decode
        self.bad_crc: list[int] = []  # payload offsets whose CRC did not match


def decode_records(
    data: bytes,
    starts: np.ndarray,
    lengths: np.ndarray,
    plugins: dict[str, str],
    tags: TagCache | None = None,
) -> DecodedBatch:
    """Decode the records whose payloads are ``data[starts[i] : starts[i] + lengths[i]]``.

    ``plugins`` (tag -> plugin name) is updated in place, as the general decoder does; ``tags``
    remembers the file's tags from one call to the next (`rltop.ingest.sources.tfevents.tfrecord.fast.tags`).
    """
    if starts.size == 0:
        return DecodedBatch()
    before = dict(plugins)
    batch = _decode(data, starts, lengths, plugins, True, tags)
    if batch is None:
        # A record left to the general decoder changes how this tag's tensors read (a plugin set
        # in between): decode its tensor records in file order with everything else.
        plugins.clear()
        plugins.update(before)
        batch = _decode(data, starts, lengths, plugins, False, tags)
        assert batch is not None
    return batch


class _Watched(dict):
    """The plugin map, noting which tags the general decoder set (and to what) or looked up."""

    def __init__(self, plugins: dict[str, str]) -> None:
        super().__init__(plugins)
        self.set: dict[str, set[str]] = {}
        self.looked_up: set[str] = set()

    def __setitem__(self, tag: str, plugin: str) -> None:
        self.set.setdefault(tag, set()).add(plugin)
        super().__setitem__(tag, plugin)

    def get(self, tag, default=None):  # noqa: D102 - dict.get, noted
        self.looked_up.add(tag)
        return super().get(tag, default)


def _decode(
    data, starts, lengths, plugins: dict[str, str], tensors: bool, tags: TagCache | None
) -> DecodedBatch | None:
    """One decoding pass; None when tensor records must go to the general decoder after all."""
    batch = DecodedBatch()
    buf = np.frombuffer(data, dtype=np.uint8)
    if fast.ENABLED and starts.size > _FEW_RECORDS:
        rows = decode_cycles(data, buf, starts, lengths, plugins, tensors, tags)
    else:
        # The plain reader, and a live-tail read of a few records: the per-record path costs less
        # than the fixed overhead of some fifty numpy calls.
        rows = no_rows(starts.size)
    corrupt = rows.corrupt
    slow = np.flatnonzero(~rows.ok & ~corrupt)
    # Every payload's CRC is checked: a flipped bit must never become a wrong point (or, through
    # a wrong step, purge a series). Rows of the vectorised tier were checked there.
    stored = strided_view(data, "<u4")[starts[slow] + lengths[slow]]
    slow_ok = masked_crc32c_rows(buf, starts[slow], lengths[slow]) == stored
    corrupt[slow[~slow_ok]] = True
    batch.bad_crc = starts[np.flatnonzero(corrupt)].tolist()
    watched = _Watched(plugins) if rows.tensor_tags else plugins
    # tag -> list of (record index, step, wall, value, single) from the slow path
    slow_points: dict[str, list[tuple[int, int, float, float, bool]]] = {}
    view = memoryview(data)  # payload slices without copies (a text record may be huge)
    for index in slow[slow_ok].tolist():
        start = int(starts[index])
        payload = view[start : start + int(lengths[index])]
        try:
            event = decode_event(payload, watched)
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
    if isinstance(watched, _Watched):
        if _tensor_conflict(watched, rows, plugins):
            return None
        plugins.clear()
        plugins.update(watched)
        for tag in rows.metadata_tags:
            plugins[tag] = "scalars"  # what the general decoder would have recorded
    fast_index = np.flatnonzero(rows.ok)
    tag_ids, tag_names = rows.tag_ids, rows.names
    if tag_ids.size:
        columns = group_by_tag(tag_names, tag_ids, rows.steps, rows.walls, rows.values)
        if slow_points:
            batch.scalars = split_by_tag([columns])  # merged with the slow points below, per tag
        else:
            batch.columns = columns
        batch.lowest_step = int(rows.steps.min())
    if slow_points:
        slow_lowest = min(point[1] for points in slow_points.values() for point in points)
        batch.lowest_step = slow_lowest if batch.lowest_step is None else min(batch.lowest_step, slow_lowest)
    for name, points in slow_points.items():
        _merge_slow(batch, name, points, fast_index, tag_ids, tag_names)
    return batch


def _tensor_conflict(watched: _Watched, rows: FastRows, before: dict[str, str]) -> bool:
    """Whether records of the general decoder and tensor records decoded in bulk read differently
    together than in file order: a plugin other than scalars set for a tag with bulk tensor
    records, or a bare tensor looked up while bulk records (unordered with it) set the plugin."""
    for tag in rows.tensor_tags:
        if watched.set.get(tag, set()) - {"scalars"}:
            return True
        if tag in rows.metadata_tags and tag in watched.looked_up and before.get(tag) is None:
            return True
    return False


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
