"""Random damage never raises, and reading in tiny windows gives exactly the one-shot result."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from helpers.paths import trl_event_file
from helpers.reader import read_file_points


def _read(path: Path, window: int) -> tuple[dict[str, list[tuple[int, float]]], list[str]]:
    return read_file_points(path, window)


@pytest.mark.parametrize("window", [17, 1000, 4096, 65_536])
def test_small_windows_read_the_same(tmp_path: Path, window: int) -> None:
    path = trl_event_file("ppo_unstable")
    whole, _ = _read(path, 1 << 22)
    pieces, problems = _read(path, window)
    assert problems == []
    assert pieces == whole


def test_random_damage_never_raises(tmp_path: Path) -> None:
    source = trl_event_file("grpo_unstable").read_bytes()
    clean, _ = _read(trl_event_file("grpo_unstable"), 1 << 22)
    total = sum(len(v) for v in clean.values())
    rng = random.Random(1234)
    target = tmp_path / "events.out.tfevents.1.h.1.0"
    for trial in range(40):
        data = bytearray(source)
        kind = trial % 4
        at = rng.randrange(200, len(data) - 200)
        if kind == 0:
            data[at] ^= 1 << rng.randrange(8)
        elif kind == 1:
            data[at : at + rng.randrange(1, 400)] = bytes(rng.randrange(1, 400))
        elif kind == 2:
            del data[at : at + rng.randrange(1, 400)]
        else:
            data[at:at] = rng.randbytes(rng.randrange(1, 100))
        target.write_bytes(bytes(data))
        points, problems = _read(target, rng.choice((512, 1 << 22)))
        kept = sum(len(v) for v in points.values())
        assert kept >= total - 40, (trial, kind, kept, total)
        assert len(problems) <= 3, problems
        for tag, values in points.items():  # nothing invented: every kept point is genuine
            assert set(values) <= set(clean.get(tag, [])), (trial, kind, tag)


def test_payload_flip_in_a_large_read_is_caught(tmp_path: Path) -> None:
    # Several MB read in one window (a first load): every payload CRC is still checked, so a
    # flipped bit in a value or a step is reported, never turned into a wrong point.
    source = trl_event_file("grpo_healthy").read_bytes() * 6
    clean, _ = _read_bytes(tmp_path, source)
    for offset in (len(source) // 2 + 40, len(source) // 3 + 17):
        damaged = bytearray(source)
        damaged[offset] ^= 0x10
        points, problems = _read_bytes(tmp_path, bytes(damaged))
        assert len(problems) == 1 and "corrupt data at byte" in problems[0]
        for tag, values in points.items():
            assert set(values) <= set(clean[tag])
        assert sum(map(len, clean.values())) - sum(map(len, points.values())) <= 1


def _read_bytes(tmp_path: Path, data: bytes):
    target = tmp_path / "events.out.tfevents.2.h.1.0"
    target.write_bytes(data)
    return _read(target, 1 << 22)
