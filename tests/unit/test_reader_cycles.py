"""Runs of records that repeat one cycle of tags are decoded from their fields alone
(tfrecord.fast.cycles): what the general decoder reads, and every flipped bit caught."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers.reader import assert_every_flip_caught, general_points, read_file_points

from rltop.ingest.sources.tfevents.tfrecord.fast import cycles
from rltop.ingest.sources.tfevents.tfrecord.writer import encode_event, frame_record, scalar_value

# Tags of one length: the lengths repeat every record, the layouts only every 40 records.
TAGS = [f"train/metric_{i:02d}" for i in range(40)]


def _stream(first_step: int = 100, steps: int = 60) -> list[bytes]:
    payloads = [encode_event(1.7e9, 0, file_version="brain.Event:2")]
    for step in range(first_step, first_step + steps):  # crosses 128: the step's varint grows
        for i, tag in enumerate(TAGS):
            value = float(np.float32(np.sin(step * 0.1 + i)))
            payloads.append(encode_event(1.7e9 + step * 1.37 + i * 1e-3, step, scalar_value(tag, value)))
    return payloads


@pytest.fixture
def cycled(monkeypatch):
    """Counts the records decoded as part of a cycle."""
    seen = [0]
    original = cycles._decode_run

    def counting(data, buf, starts, lengths, begin, end, *rest):
        seen[0] += end - begin
        return original(data, buf, starts, lengths, begin, end, *rest)

    monkeypatch.setattr(cycles, "_decode_run", counting)
    return seen


def _read(tmp_path: Path, payloads: list[bytes]):
    path = tmp_path / "events.out.tfevents.1.h.1.0"
    path.write_bytes(b"".join(frame_record(p) for p in payloads))
    return read_file_points(path)


def test_a_cycle_of_equal_length_tags_reads_what_the_general_decoder_reads(tmp_path, cycled):
    payloads = _stream()
    points, problems = _read(tmp_path, payloads)
    assert problems == []
    assert points == general_points(payloads)
    assert cycled[0] >= 0.9 * (len(payloads) - 1)  # the cycle path took nearly every record


def test_a_record_unlike_its_phase_is_decoded_by_the_general_parse(tmp_path, cycled):
    payloads = _stream()
    # Another tag of the same length where train/metric_07 belongs; and a record whose shorter
    # step varint is made up for by a longer tag (same length, other bytes after the varint).
    at = 1 + 30 * len(TAGS) + 7
    payloads[at] = encode_event(1.7e9 + 99.0, 130, scalar_value("other/metric_07", 0.25))
    payloads[at + 1] = encode_event(1.7e9 + 99.5, 5, scalar_value("train/metric_08x", 0.5))
    assert len(payloads[at + 1]) == len(payloads[at + 2])
    points, problems = _read(tmp_path, payloads)
    assert problems == []
    assert points == general_points(payloads)
    assert cycled[0] > 0


@pytest.mark.parametrize("phase", [0, 17, 39])
def test_a_flipped_bit_anywhere_in_a_cycled_record_is_caught(tmp_path, phase, cycled):
    payloads = _stream(first_step=200, steps=20)
    records = [frame_record(p) for p in payloads]
    which = 1 + 10 * len(TAGS) + phase
    path = tmp_path / "events.out.tfevents.1.h.1.0"
    assert_every_flip_caught(path, records, which, general_points(payloads))
    assert cycled[0] >= len(payloads[which]) * 0.9 * (len(payloads) - 1)  # damage or not


def test_a_flipped_bit_around_a_window_start_is_caught(tmp_path, cycled):
    # Windows of 64 KB: each begins at another phase of the cycle, with templates of its own.
    payloads = _stream(first_step=200, steps=200)
    clean = general_points(payloads)
    path = tmp_path / "events.out.tfevents.1.h.1.0"
    records = [frame_record(p) for p in payloads]
    path.write_bytes(b"".join(records))
    points, problems = read_file_points(path, window=1 << 16)
    assert problems == [] and points == clean and cycled[0] > 0
    starts = np.cumsum([0] + [len(r) for r in records])
    second = int(np.searchsorted(starts, 1 << 16)) - 2  # records where the second window begins
    for which in range(second - 1, second + 2):
        assert_every_flip_caught(path, records, which, clean, window=1 << 16)
