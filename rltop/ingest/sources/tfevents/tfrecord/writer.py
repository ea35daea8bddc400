"""A small TensorBoard event file writer: scalars and text summaries, no protobuf or torch needed.

It writes exactly what ``torch.utils.tensorboard.SummaryWriter`` (what transformers uses) writes for
``add_scalar`` and ``add_text``: a ``brain.Event:2`` file-version record first, then one Event per
value, each framed as a TFRecord (little-endian u64 length, masked CRC32C of the length, payload,
masked CRC32C of the payload). `flush` pushes the bytes to the file so a tailing reader sees whole
records, as a trainer's ``flush()`` after every log does.

Used by ``rltop demo`` and by the tests to craft records byte by byte; tensorboardX is the tests'
independent second writer.
"""

from __future__ import annotations

import os
import socket
import struct
import time

from rltop.ingest.sources.tfevents.tfrecord.crc import masked_crc32c

_U64 = struct.Struct("<Q")
_U32 = struct.Struct("<I")
_DOUBLE = struct.Struct("<d")
_FLOAT = struct.Struct("<f")
_DT_STRING = 7
_TEXT_PLUGIN_CONTENT = b""  # TextPluginData(version=0) serialises to nothing


def _varint(value: int) -> bytes:
    """Protobuf base-128 varint (negative int64 as its two's complement, like protobuf)."""
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field_bytes(number: int, payload: bytes) -> bytes:
    """A length-delimited field (wire type 2)."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _field_varint(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def encode_event(
    wall_time: float, step: int, summary_value: bytes | None = None, file_version: str | None = None
) -> bytes:
    """One serialised ``Event`` with at most one summary value."""
    out = bytes([1 << 3 | 1]) + _DOUBLE.pack(wall_time)
    if step:
        out += _field_varint(2, step)
    if file_version is not None:
        out += _field_bytes(3, file_version.encode())
    if summary_value is not None:
        out += _field_bytes(5, _field_bytes(1, summary_value))
    return out


def scalar_value(tag: str, value: float) -> bytes:
    """A ``Summary.Value`` holding a ``simple_value`` (float32, as SummaryWriter writes it)."""
    return _field_bytes(1, tag.encode()) + bytes([2 << 3 | 5]) + _FLOAT.pack(value)


def text_value(tag: str, text: str) -> bytes:
    """A ``Summary.Value`` holding a text-plugin string tensor of shape [1]."""
    plugin = _field_bytes(1, b"text") + _field_bytes(2, _TEXT_PLUGIN_CONTENT)
    metadata = _field_bytes(1, plugin)
    shape = _field_bytes(2, _field_varint(1, 1))
    tensor = _field_varint(1, _DT_STRING) + _field_bytes(2, shape) + _field_bytes(8, text.encode())
    return _field_bytes(1, tag.encode()) + _field_bytes(9, metadata) + _field_bytes(8, tensor)


def frame_record(payload: bytes) -> bytes:
    """TFRecord framing of one payload."""
    header = _U64.pack(len(payload))
    return header + _U32.pack(masked_crc32c(header)) + payload + _U32.pack(masked_crc32c(payload))


def event_file_name(start: float | None = None) -> str:
    """``events.out.tfevents.<time>.<host>.<pid>.0``, the name TensorBoard writers give a file."""
    stamp = int(time.time() if start is None else start)
    return f"events.out.tfevents.{stamp}.{socket.gethostname()}.{os.getpid()}.0"


class EventWriter:
    """Appends events to one event file in ``directory`` (created if needed)."""

    def __init__(self, directory: str | os.PathLike[str], start: float | None = None) -> None:
        os.makedirs(directory, exist_ok=True)
        self.path = os.path.join(os.fspath(directory), event_file_name(start))
        self._file = open(self.path, "ab")  # noqa: SIM115 - the writer owns the handle until close()
        self._write(encode_event(time.time() if start is None else start, 0, file_version="brain.Event:2"))

    def _write(self, payload: bytes) -> None:
        self._file.write(frame_record(payload))

    def add_scalar(self, tag: str, value: float, step: int, wall_time: float | None = None) -> None:
        """Write one scalar point."""
        self._write(
            encode_event(time.time() if wall_time is None else wall_time, step, scalar_value(tag, value))
        )

    def add_text(self, tag: str, text: str, step: int = 0, wall_time: float | None = None) -> None:
        """Write one text summary under exactly ``tag`` (no ``/text_summary`` suffix is added)."""
        self._write(
            encode_event(time.time() if wall_time is None else wall_time, step, text_value(tag, text))
        )

    def flush(self) -> None:
        """Make everything written so far visible to readers."""
        self._file.flush()

    def close(self) -> None:
        """Flush and close the file."""
        if not self._file.closed:
            self._file.flush()
            self._file.close()

    def __enter__(self) -> EventWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
