"""An independent TFRecord reader, damage generators and the check that rltop's reader loses nothing.

The reference shares no code with `rltop.ingest`: framing is a plain loop, CRC32C is a plain-Python
table of its own, and events are decoded by TensorBoard's protobuf classes (``event_pb2``). It reads
the *original* fixture, whose records are all valid; a damaged copy is made by byte edits in the
original's coordinates, so the records no edit touched are known, and each is confirmed byte for byte
at its shifted place in the damaged file. Those records are "intact": rltop must read every one of
them, and may read nothing that is not a record of the original (no invented point).

Used by ``tests/e2e/test_reader_fuzz.py`` (every kind of damage, window and way of reading) and
``benchmarks/fuzz_reader.py`` (random cases, as many as you like).
"""

from __future__ import annotations

import bisect
import math
import random
import struct
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from tensorboard.compat.proto import event_pb2

_POLY = 0x82F63B78


def _table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ _POLY if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE = _table()


def crc32c_masked(data: bytes) -> int:
    """TFRecord's masked CRC32C, computed byte by byte (no numpy, nothing from rltop)."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    crc ^= 0xFFFFFFFF
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


Point = tuple[str, int, float, object]  # tag, step, wall time, value ("nan" for NaN)


def point_key(tag: str, step: int, wall: float, value: float) -> Point:
    """A hashable point (NaN made comparable)."""
    return (tag, int(step), float(wall), "nan" if math.isnan(value) else float(value))


@dataclass
class Record:
    """One record of the original file, decoded by the reference."""

    start: int
    end: int
    points: list[Point] = field(default_factory=list)
    texts: list[tuple[str, int, str]] = field(default_factory=list)


@dataclass
class Reference:
    """The reference reading of one valid event file."""

    data: bytes
    records: list[Record]

    def points(self, records: list[Record] | None = None) -> list[Point]:
        """Points of ``records`` (default: all), in file order."""
        return [p for r in (self.records if records is None else records) for p in r.points]

    @cached_property
    def starts(self) -> list[int]:
        """Record starts, in order."""
        return [r.start for r in self.records]

    @cached_property
    def ends(self) -> list[int]:
        """Record ends, in order."""
        return [r.end for r in self.records]

    @cached_property
    def counted(self) -> Counter:
        """Every point, counted."""
        return Counter(self.points())

    @cached_property
    def by_tag(self) -> dict[str, list[Point]]:
        """Every point, per tag, in file order."""
        return _by_tag(self.points())


def read_reference(path: Path, max_bytes: int | None = None) -> Reference:
    """Frame, check and decode every record of ``path``; AssertionError if any is not valid.

    ``max_bytes``: keep only the records that end within the first ``max_bytes`` bytes.
    """
    data = path.read_bytes()
    records: list[Record] = []
    pos = 0
    while pos < len(data):
        if max_bytes is not None and pos + 16 + struct.unpack_from("<Q", data, pos)[0] > max_bytes:
            data = data[:pos]
            break
        (length,) = struct.unpack_from("<Q", data, pos)
        (length_crc,) = struct.unpack_from("<I", data, pos + 8)
        assert crc32c_masked(data[pos : pos + 8]) == length_crc, f"{path}: bad length CRC at {pos}"
        payload = data[pos + 12 : pos + 12 + length]
        (payload_crc,) = struct.unpack_from("<I", data, pos + 12 + length)
        assert crc32c_masked(payload) == payload_crc, f"{path}: bad payload CRC at {pos}"
        record = Record(pos, pos + 16 + length)
        event = event_pb2.Event.FromString(payload)
        for value in event.summary.value:
            kind = value.WhichOneof("value")
            if kind == "simple_value":
                record.points.append(point_key(value.tag, event.step, event.wall_time, value.simple_value))
            elif kind == "tensor" and value.metadata.plugin_data.plugin_name == "text":
                text = value.tensor.string_val[0].decode("utf-8")
                record.texts.append((value.tag, event.step, text))
        records.append(record)
        pos = record.end
    return Reference(data, records)


# -- damage ---------------------------------------------------------------------------------------

WINDOWS = (1024, 4096, 65536, 65536, 4 << 20, 4 << 20, 4 << 20)  # read windows, one drawn per case
Edit = tuple[int, int, bytes]  # replace original[a:b] by these bytes (a == b: an insertion)
KINDS = ("torn", "delete", "insert", "wrong_length", "huge_length", "zero_fill", "bit_flip", "two_edits")


def header(length: int) -> bytes:
    """A record header claiming ``length`` bytes, with a valid length CRC."""
    raw = struct.pack("<Q", length)
    return raw + struct.pack("<I", crc32c_masked(raw))


def make_edit(kind: str, ref: Reference, rng: random.Random) -> list[Edit]:
    """One damage of the given kind, as edits in the original's coordinates."""
    data, records = ref.data, ref.records
    texts = [r for r in records if r.texts]
    # Text summaries (transformers' args, several KB) are rare records with many records after them.
    record = rng.choice(texts) if texts and rng.random() < 0.1 else records[rng.randrange(1, len(records))]
    length = record.end - record.start - 16
    if kind == "torn":  # header and part of the payload written, then the writer went on
        cut = record.start + 12 + rng.randrange(0, length + 4)
        return [(cut, record.end, b"")]
    if kind == "delete":
        at = rng.randrange(0, len(data))
        size = rng.choice((1, 3, 8, 12, 40, 200, 400, 5000))
        return [(at, min(len(data), at + rng.randrange(1, size + 1)), b"")]
    if kind == "insert":
        at = record.start if rng.random() < 0.3 else rng.randrange(0, len(data) + 1)
        return [(at, at, rng.randbytes(rng.randrange(1, 301)))]
    if kind == "wrong_length":
        delta = rng.choice([d for d in range(-20, 301) if d and length + d >= 0])
        return [(record.start, record.start + 12, header(length + delta))]
    if kind == "huge_length":
        claimed = rng.choice((rng.randrange(1 << 20, 1 << 31), rng.randrange(length + 1, length + (1 << 16))))
        return [(record.start, record.start + 12, header(claimed))]
    if kind == "zero_fill":
        at = rng.randrange(0, len(data))
        end = min(len(data), at + rng.randrange(1, 601))
        return [(at, end, bytes(end - at))]
    if kind == "bit_flip":
        at = rng.randrange(0, len(data))
        return [(at, at + 1, bytes([data[at] ^ (1 << rng.randrange(8))]))]
    first = make_edit(rng.choice(KINDS[:-1]), ref, rng)
    second = make_edit(rng.choice(KINDS[:-1]), ref, rng)
    edits = sorted(first + second)
    for (a1, b1, _), (a2, _, _) in zip(edits, edits[1:]):
        if a2 < max(b1, a1 + 1):
            return first  # overlapping edits: keep one
    return edits


def apply_edits(data: bytes, edits: list[Edit]) -> bytes:
    """The damaged file."""
    out, pos = [], 0
    for a, b, replacement in sorted(edits):
        out.append(data[pos:a])
        out.append(replacement)
        pos = b
    out.append(data[pos:])
    return b"".join(out)


def intact_records(ref: Reference, edits: list[Edit], damaged: bytes) -> list[Record]:
    """Records no edit touched, each confirmed byte for byte at its new place in ``damaged``."""
    intact: list[Record] = []
    edits = sorted(edits)
    starts = ref.starts
    shift = 0
    lo = 0  # records before the first edit, then between edits, then after the last one
    for a, b, replacement in [*edits, (len(ref.data), len(ref.data), b"")]:
        # Records wholly before this edit (an insertion touches the record it falls strictly inside).
        hi = bisect.bisect_left(ref.ends, a + 1) if a < b else bisect.bisect_right(ref.ends, a)
        segment = ref.records[lo:hi]
        if segment:
            first, last = segment[0].start, segment[-1].end
            if damaged[first + shift : last + shift] == ref.data[first:last]:
                intact.extend(segment)
            else:
                data = ref.data
                intact.extend(
                    r for r in segment if damaged[r.start + shift : r.end + shift] == data[r.start : r.end]
                )
        shift += len(replacement) - (b - a)
        lo = max(hi, bisect.bisect_left(starts, b))
    return intact


# -- reading with rltop and checking ---------------------------------------------------------------


@dataclass
class Outcome:
    """What rltop's reader returned for one damaged file."""

    points: list[Point]
    texts: list[tuple[str, int, str]]
    problems: list[str]


def read_with_rltop(
    path: Path, window: int, chunks: list[int] | None = None, damaged: bytes = b""
) -> Outcome:
    """Read ``path`` with `EventFileReader` to the end (growing it by ``chunks`` of ``damaged`` first)."""
    from rltop.ingest.sources.tfevents.tfrecord.reader import EventFileReader

    reader = EventFileReader(str(path), window=window)
    outcome = Outcome([], [], [])

    def drain() -> None:
        for _ in range(100_000):
            result = reader.read()
            outcome.problems.extend(result.problems)
            decoded = result.decoded
            # Points of one read come grouped by tag; file order holds within a tag.
            for tag, chunk in decoded.scalars.items():
                outcome.points.extend(
                    point_key(tag, s, w, v)
                    for s, w, v in zip(chunk.steps.tolist(), chunk.wall_times.tolist(), chunk.values.tolist())
                )
            outcome.texts.extend((tag, step, text) for tag, step, _, text in decoded.texts)
            if not result.more:
                return
        raise AssertionError("the reader never finished")

    if chunks:
        written = 0
        path.write_bytes(b"")
        for size in chunks:
            with open(path, "ab") as handle:
                handle.write(damaged[written : written + size])
            written += size
            drain()
    drain()
    tail = reader.unfinished()
    if tail is not None:
        outcome.problems.append(tail)
    return outcome


def _by_tag(points: list[Point]) -> dict[str, list[Point]]:
    grouped: dict[str, list[Point]] = {}
    for point in points:
        grouped.setdefault(point[0], []).append(point)
    return grouped


def is_subsequence(part: list, whole: list) -> bool:
    """Every item of ``part`` appears in ``whole``, in the same order."""
    at = 0
    for item in part:
        while at < len(whole) and whole[at] != item:
            at += 1
        if at == len(whole):
            return False
        at += 1
    return True


def check(ref: Reference, intact: list[Record], outcome: Outcome, cut_end: list[Record]) -> list[str]:
    """What is wrong with ``outcome`` (empty when nothing was lost and nothing invented).

    ``cut_end``: records damaged by an edit that reaches the end of the file. A file that ends
    inside a record is what a writer in the middle of a record leaves: losing those silently is right.
    """
    errors = []
    got = Counter(outcome.points)
    kept = {id(r) for r in intact}
    lost = ref.counted - got
    missing = lost - Counter(ref.points([r for r in ref.records if id(r) not in kept]))
    if missing:
        errors.append(f"lost {sum(missing.values())} intact points, e.g. {next(iter(missing))}")
    for tag, points in _by_tag(outcome.points).items():
        if not is_subsequence(points, ref.by_tag.get(tag, [])):
            errors.append(f"tag {tag}: points invented or out of order")
    expected_texts = Counter(t for r in intact for t in r.texts)
    if expected_texts - Counter(outcome.texts):
        errors.append("lost an intact text summary")
    if Counter(outcome.texts) - Counter(t for r in ref.records for t in r.texts):
        errors.append("invented a text summary")
    if not outcome.problems and lost - Counter(ref.points(cut_end)):
        errors.append("points were lost without a problem reported")
    if any("\n" in problem for problem in outcome.problems):
        errors.append("a problem spans several lines")
    return errors


@dataclass
class Case:
    """One fuzz case: a fixture, its damage and how it is read."""

    fixture: str
    kind: str
    edits: list[Edit]
    window: int
    chunks: list[int] | None


def make_case(
    fixtures: dict[str, Reference],
    rng: random.Random,
    name: str | None = None,
    kind: str | None = None,
    window: int | None = None,
    growing: bool | None = None,
) -> Case:
    """A random case: a fixture, a kind of damage, a read window, one-shot or growing (each drawn
    unless given; the damage itself is always drawn)."""
    name = rng.choice(sorted(fixtures)) if name is None else name
    kind = KINDS[rng.randrange(len(KINDS))] if kind is None else kind
    edits = make_edit(kind, fixtures[name], rng)
    window = rng.choice(WINDOWS) if window is None else window
    if growing is None:
        growing = rng.random() < 0.25  # the damaged file grows while it is read, in writer-sized pieces
    chunks = None
    if growing:
        total = len(apply_edits(fixtures[name].data, edits))
        chunks = []
        while sum(chunks) < total:
            chunks.append(rng.choice((12, 48, 700, 4096, 30_000)))
    return Case(name, kind, edits, window, chunks)


def covering_cases(
    fixtures: dict[str, Reference],
    rng: random.Random,
    windows: tuple[int, ...],
    rounds: int,
    growing: tuple[bool, ...] = (False, True),
) -> list[Case]:
    """Every kind of damage x read window x whole/growing, ``rounds`` times, the fixtures taken in
    turn; where the damage falls is drawn. When the numbers of combinations and of fixtures are
    coprime (64 and 7), ``rounds`` = the number of fixtures puts each combination on each fixture once."""
    combinations = [(k, w, g) for k in KINDS for w in windows for g in growing]
    names = sorted(fixtures)
    cases = []
    for number in range(rounds * len(combinations)):
        kind, window, growing = combinations[number % len(combinations)]
        cases.append(make_case(fixtures, rng, names[number % len(names)], kind, window, growing))
    return cases


def run_case(case: Case, fixtures: dict[str, Reference], path: Path) -> tuple[list[str], int, int]:
    """Damage, read and check one case: (errors, intact points, points read)."""
    ref = fixtures[case.fixture]
    damaged = apply_edits(ref.data, case.edits)
    intact = intact_records(ref, case.edits, damaged)
    kept = {id(record) for record in intact}
    last_edit = max(case.edits)
    # Damage with no intact record after it looks like a writer in the middle of a record.
    at_tail = not any(r.start >= last_edit[1] for r in intact)
    cut_end = [r for r in ref.records if at_tail and id(r) not in kept and r.end > last_edit[0]]
    if case.chunks is None:
        path.write_bytes(damaged)
    outcome = read_with_rltop(path, case.window, case.chunks, damaged)
    return check(ref, intact, outcome, cut_end), len(ref.points(intact)), len(outcome.points)
