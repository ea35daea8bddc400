"""The bulk path for tensor scalars (torch ``new_style=True``, TF2) reads what the general decoder
reads, and a flipped bit anywhere in a payload of any layout is caught, never a wrong point."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from helpers.reader import assert_every_flip_caught, general_points, read_file_points

from rltop.ingest.sources.tfevents.tfrecord.fast.onevalue import decode_one_value
from rltop.ingest.sources.tfevents.tfrecord.frames import scan_frames
from rltop.ingest.sources.tfevents.tfrecord.writer import (
    _field_bytes,
    encode_event,
    frame_record,
    scalar_value,
)

_SCALARS_METADATA = _field_bytes(9, _field_bytes(1, _field_bytes(1, b"scalars")))


def torch_tensor_value(tag: str, value: float) -> bytes:
    """What torch's ``add_scalar(new_style=True)`` writes: float_val, plugin metadata each time."""
    tensor = b"\x08\x01" + _field_bytes(5, struct.pack("<f", value))
    return _field_bytes(1, tag.encode()) + _field_bytes(8, tensor) + _SCALARS_METADATA


def tf2_tensor_value(tag: str, value: float, first: bool) -> bytes:
    """What TF2's ``tf.summary.scalar`` writes: tensor_content; metadata with the first value only."""
    tensor = b"\x08\x01\x12\x00" + _field_bytes(4, struct.pack("<f", value))
    return _field_bytes(1, tag.encode()) + _field_bytes(8, tensor) + (_SCALARS_METADATA if first else b"")


def _payloads() -> list[bytes]:
    payloads = [encode_event(1.7e9, 0, file_version="brain.Event:2")]
    for step in range(1, 121):
        wall = 1.7e9 + step * 0.37
        value = float(np.float32(np.sin(step) * 3))
        payloads.append(encode_event(wall, step, scalar_value("simple/loss", value)))
        payloads.append(encode_event(wall, step, torch_tensor_value("torch/kl", value / 7)))
        payloads.append(encode_event(wall, step, tf2_tensor_value("tf2/reward", value * 5, step == 1)))
    return payloads


def test_bulk_layouts_read_what_the_general_decoder_reads(tmp_path: Path) -> None:
    payloads = _payloads()
    path = tmp_path / "events.out.tfevents.1.h.1.0"
    data = b"".join(frame_record(p) for p in payloads)
    path.write_bytes(data)
    scan = scan_frames(data)
    buf = np.frombuffer(data, np.uint8)
    fast = decode_one_value(data, buf, scan.payload_starts, scan.payload_lengths, {})
    assert int(fast.ok.sum()) == 360  # every scalar record took the bulk path, tensors included
    points, problems = read_file_points(path)
    assert problems == []
    assert points == general_points(payloads)
    counts = {tag: len(v) for tag, v in points.items()}
    assert counts == {"simple/loss": 120, "torch/kl": 120, "tf2/reward": 120}


# Records: a simple value, a torch tensor, a bare TF2 tensor, TF2's first tensor (with metadata).
@pytest.mark.parametrize("which", [1 + 3 * 50, 2 + 3 * 50, 3 + 3 * 50, 3])
def test_a_flipped_bit_anywhere_in_a_payload_is_caught(tmp_path: Path, which: int) -> None:
    payloads = _payloads()
    records = [frame_record(p) for p in payloads]
    path = tmp_path / "events.out.tfevents.1.h.1.0"
    assert_every_flip_caught(path, records, which, general_points(payloads))
