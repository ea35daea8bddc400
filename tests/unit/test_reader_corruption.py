"""Damage in the middle of a file: no exception, points around it kept, one warning with the offset."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from helpers.paths import trl_event_file

from rltop.ingest.sources.tfevents.tfrecord.reader import EventFileReader

SOURCE = "grpo_healthy"


def _records(data: bytes) -> list[tuple[int, int]]:
    out, pos = [], 0
    while pos < len(data):
        size = 16 + struct.unpack_from("<Q", data, pos)[0]
        out.append((pos, size))
        pos += size
    return out


def _read_all(path: Path) -> tuple[dict[str, list[int]], list[str]]:
    reader = EventFileReader(str(path))
    steps: dict[str, list[int]] = {}
    problems: list[str] = []
    while True:
        result = reader.read()
        problems.extend(result.problems)
        for tag, points in result.decoded.scalars.items():
            steps.setdefault(tag, []).extend(points.steps.tolist())
        if not result.more:
            return steps, problems


def _count(steps: dict[str, list[int]]) -> int:
    return sum(len(v) for v in steps.values())


@pytest.fixture
def original() -> bytes:
    return trl_event_file(SOURCE).read_bytes()


def _damaged(tmp_path: Path, data: bytes) -> Path:
    target = tmp_path / "events.out.tfevents.1.host.1.0"
    target.write_bytes(data)
    return target


def _check(tmp_path: Path, original: bytes, damaged: bytes, where: int, max_lost: int) -> None:
    clean, _ = _read_all(_damaged(tmp_path, original))
    steps, problems = _read_all(_damaged(tmp_path, damaged))
    assert len(problems) == 1, problems
    assert "events.out.tfevents.1.host.1.0" in problems[0]
    reported = int(problems[0].split("at byte ")[1].split()[0])
    assert abs(reported - where) < 200, (reported, where)
    lost = _count(clean) - _count(steps)
    assert 0 < lost <= max_lost
    # Everything kept is genuine, and the points on both sides of the damage survive.
    for tag, values in steps.items():
        assert set(values) <= set(clean[tag])
    assert steps["train/loss"][0] == 1 and steps["train/loss"][-1] == 200


def test_bit_flip_in_a_length_field(tmp_path: Path, original: bytes) -> None:
    records = _records(original)
    pos, _ = records[len(records) // 2]
    damaged = bytearray(original)
    damaged[pos + 1] ^= 0x40
    _check(tmp_path, original, bytes(damaged), pos, max_lost=1)


def test_bit_flip_in_a_payload(tmp_path: Path, original: bytes) -> None:
    records = _records(original)
    pos, size = records[len(records) // 3]
    damaged = bytearray(original)
    damaged[pos + 14] ^= 0x01  # inside the wall_time double: only the payload CRC can tell
    _check(tmp_path, original, bytes(damaged), pos, max_lost=1)


def test_zero_filled_span(tmp_path: Path, original: bytes) -> None:
    records = _records(original)
    pos, _ = records[len(records) // 2]
    damaged = original[: pos + 5] + bytes(300) + original[pos + 305 :]
    _check(tmp_path, original, damaged, pos, max_lost=12)


def test_bytes_cut_out_of_the_middle(tmp_path: Path, original: bytes) -> None:
    records = _records(original)
    pos, size = records[len(records) // 2]
    damaged = original[: pos + 20] + original[pos + 20 + 500 :]
    _check(tmp_path, original, damaged, pos, max_lost=15)


def test_garbage_tail_is_not_an_error_until_data_follows(tmp_path: Path, original: bytes) -> None:
    # A zero-filled tail (NFS shows the size before the data) is "not written yet", not damage.
    target = _damaged(tmp_path, original + bytes(64))
    reader = EventFileReader(str(target))
    first = reader.read()
    assert first.problems == []
    assert reader.pending_bytes == 64


def test_not_an_event_file(tmp_path: Path) -> None:
    target = _damaged(tmp_path, b"this is a text file, not a TFRecord stream\n" * 3)
    result = EventFileReader(str(target)).read()
    assert len(result.problems) == 1 and "not an event file" in result.problems[0]
    assert result.decoded.scalars == {}
