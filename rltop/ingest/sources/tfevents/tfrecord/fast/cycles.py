"""Records that repeat one cycle of layouts: parse one cycle, decode the rest from its fields alone.

A writer that logs the same tags at every step writes them in the same order each time, so the
records of a window repeat one cycle: record j is laid out like record j - P, byte for byte, but
for its wall time, its step and its value. Over such a run of records the general parse
(`tfrecord.fast.onevalue.parse_one_value`: varint, tag dictionary, layout groups) is done
once, on a sample, and every other record costs only the gathers of those three fields and its
CRC, computed from the record of its phase in the run's first cycle
(`tfrecord.crc.masked_crc32c_templated`).

The CRC is what proves the layout: a record that differs from its phase's first record anywhere
outside the three fields (another tag of the same length, say) fails it, and the general parse
decodes it again, which then tells a corrupt record from a different one. The step's word also
holds the bytes after the varint; those are compared with the template's, since the CRC cannot.

Goal served: the 6M-scalar load in at most 1.5 CPU-s. Without it that load takes 0.34-0.40 CPU-s
more (28-34 %: 1.52 instead of 1.18), the 900k and tensor loads 0.04-0.06 more
(``docs/internals/performance.md``). Reference-equality test: ``tests/e2e/test_reader_tiers.py`` (and
``tests/unit/test_reader_cycles.py`` for flipped bits and records unlike their phase).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rltop.ingest.sources.tfevents.tfrecord.fast.onevalue import (
    FastRows,
    Parsed,
    decode_one_value,
    no_rows,
    parse_one_value,
    value_offsets,
    varint_words,
    verify,
)
from rltop.ingest.sources.tfevents.tfrecord.fast.period import shortest_period
from rltop.ingest.sources.tfevents.tfrecord.fast.tags import TagCache
from rltop.ingest.sources.tfevents.tfrecord.frames import HEADER, OVERHEAD, strided_view

MAX_PERIOD = 4096  # tags per step that can be recognised as one cycle
MIN_RUN = 256  # records: a shorter window is left to the general parse
_SAMPLE = 1024  # records parsed to find the cycle (four times more, up to MAX_PERIOD * 3, if needed)
_MIN_CYCLES = 3


def decode_cycles(
    data: bytes,
    buf: np.ndarray,
    starts: np.ndarray,
    lengths: np.ndarray,
    plugins: dict[str, str],
    tensors: bool = True,
    tags: TagCache | None = None,
) -> FastRows:
    """`decode_one_value`, with runs of records that repeat a cycle decoded from their fields."""
    count = starts.size
    tags = TagCache() if tags is None else tags
    pieces: list[tuple[int, FastRows]] = []  # (first record, what was decoded from there on)
    done = 0
    while count - done >= MIN_RUN:
        run = _find_run(data, buf, starts, lengths, done, plugins, tensors, tags)
        if run is None:
            break
        begin, end, sample_start, parsed, templates = run
        if parsed is None:
            begin = end  # (a short run: decoded with what comes before it)
        if begin > done:
            pieces.append(
                (
                    done,
                    decode_one_value(
                        data, buf, starts[done:begin], lengths[done:begin], plugins, tensors, tags
                    ),
                )
            )
        if parsed is not None:
            pieces.append(
                (
                    begin,
                    _decode_run(
                        data,
                        buf,
                        starts,
                        lengths,
                        begin,
                        end,
                        sample_start,
                        parsed,
                        templates,
                        plugins,
                        tensors,
                        tags,
                    ),
                )
            )
        done = end
    if not pieces:
        return decode_one_value(data, buf, starts, lengths, plugins, tensors, tags)
    if done < count:
        pieces.append(
            (done, decode_one_value(data, buf, starts[done:], lengths[done:], plugins, tensors, tags))
        )
    return _joined(pieces, count, tags.names)


def _find_run(data, buf, starts, lengths, first: int, plugins, tensors, tags):
    """(begin, end, sample start, sample parse, template rows in it) of the first run of records
    at or after ``first`` that repeats a cycle, found in a sample; None when there is none. A run
    too short to be worth it comes back without its parse and templates."""
    count = starts.size
    size = min(count - first, max(_SAMPLE, 3 * tags.cycle), 3 * MAX_PERIOD)
    while True:
        sample = slice(first, first + size)
        parsed = parse_one_value(data, buf, starts[sample], lengths[sample], plugins, tensors, tags)
        if parsed is None:
            return None
        key = -1 - np.arange(size, dtype=np.int64)  # a record not parsed repeats nothing
        key[parsed.rows] = parsed.group
        period = shortest_period(key, MAX_PERIOD, key.size // 16)  # (a few damaged records)
        if period is not None:
            break
        # A longer sample can only help when this one holds mostly distinct layouts (a cycle of
        # thousands of tags); a short cycle that does not repeat here is not there to be found.
        longer = np.count_nonzero(np.bincount(parsed.group)) * 2 > size  # (groups are dense ids)
        if not longer or size == count - first or size >= 3 * MAX_PERIOD:
            return None
        size = min(count - first, size * 4, 3 * MAX_PERIOD)
    # The run starts with the first whole cycle of the sample whose records the next cycle repeats
    # (after an irregular start, a damaged record...); past it, equal lengths continue the run.
    breaks = np.flatnonzero(key[period:] != key[:-period])
    edges = np.concatenate([[-1], breaks, [size - period]])
    clean = np.flatnonzero(np.diff(edges) - 1 >= period)
    if clean.size == 0:
        return None
    begin = first + int(edges[clean[0]]) + 1
    # Past the sample, equal lengths continue the run; the CRCs check the rest.
    rest = lengths[begin + period :] != lengths[begin : count - period]
    stop = np.flatnonzero(rest)
    end = begin + period + (int(stop[0]) if stop.size else rest.size)
    # ... as long as each record starts where the one before it ends (no damage skipped between).
    follows = starts[begin : end - 1] + lengths[begin : end - 1] + OVERHEAD
    gaps = np.flatnonzero(starts[begin + 1 : end] != follows)
    if gaps.size:
        end = begin + int(gaps[0]) + 1
    if end - begin < _MIN_CYCLES * period or end - begin < MIN_RUN:
        return begin, end, first, None, None  # too short to pay: the general parse takes it
    tags.cycle = period
    where = np.full(size, -1, dtype=np.int64)
    where[parsed.rows] = np.arange(parsed.rows.size)
    templates = where[begin - first : begin - first + period]
    return begin, end, first, parsed, templates


def _decode_run(
    data, buf, starts, lengths, begin, end, sample_start, parsed: Parsed, templates, plugins, tensors, tags
) -> FastRows:
    """Decode records ``begin:end``, record ``begin + i`` laid out like ``begin + i % period``."""
    period = templates.size
    count = end - begin
    run_starts, run_lengths = starts[begin:end], lengths[begin:end]
    phase = np.arange(count, dtype=np.int64) % period
    u64 = strided_view(data, "<u8")
    step_words = u64[run_starts + 9]
    step, size = varint_words(step_words >> np.uint64(8))
    t_size = parsed.size[templates]
    template_starts = starts[sample_start + parsed.rows[templates]]
    t_value = value_offsets(parsed)[templates] - template_starts
    layout = _layout(run_lengths[:period], t_size, t_value)
    like = (size == t_size[phase]) & ~_unlike(buf, run_starts, layout)
    run = Parsed(
        np.arange(count, dtype=np.int64),
        run_starts + run_lengths,
        step,
        size,
        np.empty(0, np.int64),
        parsed.tag_ids[templates][phase],
        parsed.kind[templates][phase],
        parsed.meta_len[templates][phase],
        phase,
        step_words,
        parsed.names,
    )
    rows = verify(data, buf, run_starts, run_lengths, run, phase, run_starts + t_value[phase])
    if not like.all():
        rows = _without(rows, ~like)
    failed = np.flatnonzero(~rows.ok)
    if failed.size == 0:
        return rows
    # Not like its template (or corrupt): the general parse decides.
    again = decode_one_value(data, buf, run_starts[failed], run_lengths[failed], plugins, tensors, tags)
    return _with(rows, failed, again)


@dataclass
class _Layout:
    """Where the fields of each phase's record are within one cycle of a run."""

    lengths: np.ndarray  # payload length per phase
    sizes: np.ndarray  # step varint bytes per phase
    values: np.ndarray  # value offset in the payload per phase
    at: np.ndarray  # where each phase's record starts within a cycle
    cycle: int  # bytes of one cycle
    mask: np.ndarray  # per byte of a cycle: 0xFF outside the fields (those must repeat), else 0


def _layout(lengths: np.ndarray, sizes: np.ndarray, values: np.ndarray) -> _Layout:
    """The fields of one cycle: wall time, step varint, value and payload CRC of every record."""
    frames = lengths + OVERHEAD
    cycle = int(frames.sum())
    at = np.concatenate([[0], np.cumsum(frames)[:-1]])
    payload = at + HEADER
    mask = np.full(cycle, 0xFF, dtype=np.uint8)
    mask[(payload[:, None] + 1 + np.arange(8)).ravel()] = 0  # wall time
    varint = payload[:, None] + 10 + np.arange(7)
    mask[varint[np.arange(7) < sizes[:, None]]] = 0  # the step's varint
    mask[(payload[:, None] + values[:, None] + np.arange(4)).ravel()] = 0  # value
    mask[(payload[:, None] + lengths[:, None] + np.arange(4)).ravel()] = 0  # payload CRC
    return _Layout(lengths, sizes, values, at, cycle, mask)


def _unlike(buf: np.ndarray, run_starts: np.ndarray, layout: _Layout) -> np.ndarray:
    """Per record of a run: whether any byte of it other than its wall time, step varint, value and
    payload CRC differs from the same byte of its phase's template (in the run's first cycle).

    The records follow one another, so the run is whole cycles of one byte length (and a part of
    one): each cycle is compared with the first as a row of bytes, the fields masked off.
    """
    period, count, cycle = layout.lengths.size, run_starts.size, layout.cycle
    mask, at = layout.mask, layout.at
    first = int(run_starts[0]) - HEADER
    whole = count // period
    rows = buf[first : first + whole * cycle].reshape(whole, cycle)
    if _all_alike(buf, rows, first, cycle, mask):
        unlike = np.zeros(whole * period, dtype=bool)
    else:  # which records differ, byte by byte
        diff = rows ^ rows[0]
        diff &= mask
        unlike = np.bitwise_or.reduceat(diff, at, axis=1).ravel() != 0
    rest = count - whole * period
    if rest:
        begin = first + whole * cycle
        part = int(at[rest - 1] + layout.lengths[rest - 1] + OVERHEAD)
        tail = (buf[begin : begin + part] ^ rows[0, :part]) & mask[:part]
        unlike = np.concatenate([unlike, np.bitwise_or.reduceat(tail, at[:rest]) != 0])
    return unlike


def _all_alike(buf: np.ndarray, rows: np.ndarray, first: int, cycle: int, mask: np.ndarray) -> bool:
    """Whether every cycle equals the first outside the masked bytes, compared 8 bytes at a time.

    Groups of ``group`` cycles span a multiple of 8 bytes, so the run reads as rows of aligned
    words (numpy's unaligned or oddly strided paths are several times slower): the first group's
    cycles are compared with the first byte by byte, every later group with the first group.
    """
    whole = rows.shape[0]  # (``rows``: the run's whole cycles, from buffer offset ``first``)
    group = 8 // math.gcd(cycle, 8)
    span = group * cycle
    groups = whole // group
    head = rows[: min(group, whole)]
    if ((head ^ rows[0]) & mask).any():
        return False
    if groups >= 2:
        run = buf[first : first + groups * span]
        if run.ctypes.data % 8:
            run = run.copy()  # (an aligned copy: 4 MB cost 0.3 ms, the unaligned XOR 1.5 ms)
        words = run.view(np.uint64).reshape(groups, span // 8)
        diff = words[1:] ^ words[0]
        diff &= np.tile(mask, group).view(np.uint64)
        if diff.any():
            return False
    rest = rows[groups * group :]
    return not ((rest ^ rows[0]) & mask).any()


def _without(rows: FastRows, drop: np.ndarray) -> FastRows:
    """``rows`` with the records flagged in ``drop`` (over all records) not decoded."""
    decoded = np.flatnonzero(rows.ok)
    keep = ~drop[decoded]
    ok = rows.ok & ~drop
    return FastRows(
        ok,
        rows.corrupt & ~drop,
        rows.tag_ids[keep],
        rows.names,
        rows.steps[keep],
        rows.walls[keep],
        rows.values[keep],
        rows.tensor_tags,
        rows.metadata_tags,
    )


def _with(rows: FastRows, failed: np.ndarray, again: FastRows) -> FastRows:
    """``rows`` (whose ``failed`` records were not decoded) with those records as ``again`` read them."""
    ok = rows.ok.copy()
    ok[failed] = again.ok
    corrupt = np.zeros_like(rows.corrupt)
    corrupt[failed] = again.corrupt
    at = np.concatenate([np.flatnonzero(rows.ok), failed[again.ok]])
    order = np.argsort(at, kind="stable")
    joined = [np.concatenate([a, b])[order] for a, b in (
        (rows.tag_ids, again.tag_ids), (rows.steps, again.steps), (rows.walls, again.walls),
        (rows.values, again.values))]  # fmt: skip
    return FastRows(
        ok,
        corrupt,
        joined[0],
        rows.names,
        joined[1],
        joined[2],
        joined[3],
        rows.tensor_tags | again.tensor_tags,
        rows.metadata_tags | again.metadata_tags,
    )


def _joined(pieces: list[tuple[int, FastRows]], count: int, names: list[str]) -> FastRows:
    """One `FastRows` over all records from pieces in file order (their tag ids share ``names``)."""
    if not pieces:
        return no_rows(count)
    ok = np.zeros(count, dtype=bool)
    corrupt = np.zeros(count, dtype=bool)
    for first, rows in pieces:
        ok[first : first + rows.ok.size] = rows.ok
        corrupt[first : first + rows.ok.size] = rows.corrupt
    columns = [np.concatenate([getattr(rows, name) for _, rows in pieces])
               for name in ("tag_ids", "steps", "walls", "values")]  # fmt: skip
    tensor_tags = set().union(*(rows.tensor_tags for _, rows in pieces))
    metadata_tags = set().union(*(rows.metadata_tags for _, rows in pieces))
    return FastRows(
        ok,
        corrupt,
        columns[0].astype(np.int64, copy=False),
        names,
        columns[1],
        columns[2],
        columns[3],
        tensor_tags,
        metadata_tags,
    )
