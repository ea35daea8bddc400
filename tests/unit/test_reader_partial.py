"""A file that grows record by record, or stops mid-record, is read exactly once and completely."""

from __future__ import annotations

import random
import struct
from pathlib import Path

from helpers.paths import trl_event_file

from rltop.ingest.sources.tfevents.tfrecord.reader import EventFileReader


def _collect(reader: EventFileReader, into: list[tuple[str, int, float]], texts: list[str]) -> None:
    result = reader.read()
    assert result.problems == []
    for tag, points in result.decoded.scalars.items():
        into.extend(zip([tag] * len(points.steps), points.steps.tolist(), points.values.tolist()))
    texts.extend(tag for tag, *_ in result.decoded.texts)


def _full(path: Path) -> tuple[list, list]:
    points: list = []
    texts: list = []
    _collect(EventFileReader(str(path)), points, texts)
    return points, texts


def _record_starts(data: bytes) -> list[int]:
    starts, pos = [], 0
    while pos < len(data):
        starts.append(pos)
        pos += 16 + struct.unpack_from("<Q", data, pos)[0]
    return starts


def _canonical(points: list) -> list:
    # Order within one read is per tag; across reads it is by time. Compare per tag, in order.
    by_tag: dict[str, list] = {}
    for tag, step, value in points:
        by_tag.setdefault(tag, []).append((step, repr(value)))
    return sorted(by_tag.items())


def test_cut_last_record_at_every_byte(tmp_path: Path) -> None:
    source = trl_event_file("ppo_healthy").read_bytes()
    expected, expected_texts = _full(trl_event_file("ppo_healthy"))
    last = _record_starts(source)[-1]
    target = tmp_path / "events.out.tfevents.1.host.1.0"
    for cut in range(last, len(source) + 1):
        target.write_bytes(source[:cut])
        reader = EventFileReader(str(target))
        points: list = []
        texts: list = []
        _collect(reader, points, texts)
        assert len(points) == len(expected) - (1 if cut < len(source) else 0)
        with open(target, "ab") as handle:
            handle.write(source[cut:])
        _collect(reader, points, texts)
        assert _canonical(points) == _canonical(expected), cut
        assert texts == expected_texts
        assert reader.pending_bytes == 0


def test_random_appends_in_small_pieces(tmp_path: Path) -> None:
    source = trl_event_file("grpo_with_eval").read_bytes()
    expected, _ = _full(trl_event_file("grpo_with_eval"))
    target = tmp_path / "events.out.tfevents.1.host.1.0"
    target.write_bytes(b"")
    reader = EventFileReader(str(target))
    rng = random.Random(7)
    points: list = []
    texts: list = []
    pos = 0
    while pos < len(source):
        step = rng.choice((1, 3, 12, 13, 40, 700, 4096))
        with open(target, "ab") as handle:
            handle.write(source[pos : pos + step])
        pos += step
        _collect(reader, points, texts)
    assert _canonical(points) == _canonical(expected)
    assert len(points) == len(expected)


def test_shrunk_file_is_read_again(tmp_path: Path) -> None:
    source = trl_event_file("grpo_truncated").read_bytes()
    target = tmp_path / "events.out.tfevents.1.host.1.0"
    target.write_bytes(source)
    reader = EventFileReader(str(target))
    first = reader.read()
    assert first.decoded.scalars
    target.write_bytes(source[:5000])
    again = reader.read()
    assert again.restarted
    assert any("shrank" in p for p in again.problems)
    assert again.decoded.file_version == "brain.Event:2"


def test_rewritten_in_place_past_the_old_size_is_read_again(tmp_path: Path) -> None:
    # Same inode, larger size, other first bytes: truncated and rewritten between two reads.
    small = trl_event_file("grpo_liger_cpu_crash").read_bytes()
    large = trl_event_file("grpo_truncated").read_bytes()
    target = tmp_path / "events.out.tfevents.1.host.1.0"
    target.write_bytes(small)
    reader = EventFileReader(str(target))
    assert reader.read().decoded.scalars == {}
    with open(target, "r+b") as handle:  # in place: the inode stays
        handle.write(large)
    points: list = []
    again = reader.read()
    assert again.restarted and any("rewritten" in p for p in again.problems)
    for tag, chunk in again.decoded.scalars.items():
        points.extend(zip([tag] * len(chunk.steps), chunk.steps.tolist(), chunk.values.tolist()))
    expected, _ = _full(trl_event_file("grpo_truncated"))
    assert _canonical(points) == _canonical(expected)
