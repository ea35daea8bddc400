"""A small protobuf wire decoder for TensorBoard's ``Event`` messages (no protobuf import).

It understands the fields rltop needs (wall_time, step, file_version, summary values with
``simple_value``, scalar ``tensor`` values, text tensors and plugin metadata) and skips everything
else (graphs, histograms, images, audio, session logs) by wire type, so unknown or future fields
never break it. Field numbers are those of tensorboard/compat/proto/{event,summary,tensor}.proto.
The bulk reader (`tfrecord.records`) handles the common one-scalar layout with numpy; this module
is the general path every other event takes.

Fields are sliced from a memoryview of the payload: a 500 MB text summary is never copied level by
level (Event, Summary.Value, TensorProto, string); a text keeps its first `MAX_TEXT` bytes.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

_DOUBLE = struct.Struct("<d")
_FLOAT = struct.Struct("<f")

# TensorFlow DataType enum values (types.proto) for the scalar dtypes rltop accepts.
DT_FLOAT, DT_DOUBLE, DT_INT32, DT_UINT8, DT_INT16, DT_INT8, DT_STRING = 1, 2, 3, 4, 5, 6, 7
DT_INT64, DT_BOOL, DT_BFLOAT16, DT_UINT16, DT_HALF, DT_UINT32, DT_UINT64 = 9, 10, 14, 17, 19, 22, 23

_CONTENT_DTYPES: dict[int, str] = {
    DT_FLOAT: "<f4",
    DT_DOUBLE: "<f8",
    DT_INT32: "<i4",
    DT_UINT8: "u1",
    DT_INT16: "<i2",
    DT_INT8: "i1",
    DT_INT64: "<i8",
    DT_BOOL: "?",
    DT_UINT16: "<u2",
    DT_HALF: "<f2",
    DT_UINT32: "<u4",
    DT_UINT64: "<u8",
}


_U64_MASK = (1 << 64) - 1
MAX_TEXT = 1 << 20
"""Bytes of a text summary kept (transformers' ``args`` summary is a few KB): a longer text is cut,
and says so, so that a runaway text record costs its read, not a string of its size in memory."""


class WireError(ValueError):
    """The bytes are not a well-formed protobuf message."""


@dataclass
class DecodedEvent:
    """What rltop keeps of one Event."""

    wall_time: float = 0.0
    step: int = 0
    file_version: str | None = None
    # (tag, value, single_precision)
    scalars: list[tuple[str, float, bool]] = field(default_factory=list)
    texts: list[tuple[str, str]] = field(default_factory=list)


def read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    """Decode a varint at ``pos``; return (value, position after it)."""
    result = 0
    shift = 0
    while True:
        if pos >= len(buf):
            raise WireError("truncated varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result & _U64_MASK, pos  # protobuf drops bits past 64, so do we
        shift += 7
        if shift >= 70:
            raise WireError("varint too long")


def iter_fields(buf: bytes, start: int = 0, end: int | None = None):
    """Yield (field_number, wire_type, value) over a message; length-delimited values are bytes."""
    pos = start
    end = len(buf) if end is None else end
    while pos < end:
        key, pos = read_varint(buf, pos)
        number, wire_type = key >> 3, key & 7
        if wire_type == 0:
            value, pos = read_varint(buf, pos)
        elif wire_type == 1:
            if pos + 8 > end:
                raise WireError("truncated fixed64")
            value = buf[pos : pos + 8]
            pos += 8
        elif wire_type == 2:
            length, pos = read_varint(buf, pos)
            if pos + length > end:
                raise WireError("truncated length-delimited field")
            value = buf[pos : pos + length]
            pos += length
        elif wire_type == 5:
            if pos + 4 > end:
                raise WireError("truncated fixed32")
            value = buf[pos : pos + 4]
            pos += 4
        else:
            raise WireError(f"unsupported wire type {wire_type}")
        yield number, wire_type, value
    if pos != end:
        raise WireError("message overruns its length")


def _signed64(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def decode_event(payload: bytes, plugins: dict[str, str]) -> DecodedEvent:
    """Decode one Event payload.

    ``plugins`` maps tag -> plugin name and is updated in place: TF2 writers send a value's
    metadata only with the first event of a tag, so later tensor values are classified by it.
    """
    event = DecodedEvent()
    for number, wire_type, value in iter_fields(memoryview(payload)):
        if number == 1 and wire_type == 1:
            event.wall_time = _DOUBLE.unpack(value)[0]
        elif number == 2 and wire_type == 0:
            event.step = _signed64(value)
        elif number == 3 and wire_type == 2:
            event.file_version = _text(value)
        elif number == 5 and wire_type == 2:
            for vnum, vtype, raw in iter_fields(value):
                if vnum == 1 and vtype == 2:
                    _decode_value(raw, plugins, event)
    return event


def _decode_value(raw: bytes, plugins: dict[str, str], event: DecodedEvent) -> None:
    tag = ""
    simple: float | None = None
    tensor: bytes | None = None
    plugin: str | None = None
    for number, wire_type, value in iter_fields(raw):
        if number == 1 and wire_type == 2:
            tag = _text(value)
        elif number == 2 and wire_type == 5:
            simple = _FLOAT.unpack(value)[0]
        elif number == 8 and wire_type == 2:
            tensor = value
        elif number == 9 and wire_type == 2:
            plugin = plugin_name(value)
    if plugin is not None:
        plugins[tag] = plugin
    else:
        plugin = plugins.get(tag)
    if simple is not None:
        event.scalars.append((tag, simple, True))
    elif tensor is not None:
        _decode_tensor(tag, tensor, plugin, event)


def plugin_name(metadata: bytes) -> str | None:
    """The plugin name in a serialised ``SummaryMetadata`` (None when it names none)."""
    for number, wire_type, value in iter_fields(metadata):
        if number == 1 and wire_type == 2:
            for pnum, ptype, pvalue in iter_fields(value):
                if pnum == 1 and ptype == 2:
                    return _text(pvalue)
    return None


def _decode_tensor(tag: str, raw: bytes, plugin: str | None, event: DecodedEvent) -> None:
    dtype = 0
    dims: list[int] = []
    content = b""
    numbers: list[float] = []
    strings: list[bytes] = []
    for number, wire_type, value in iter_fields(raw):
        if number == 1 and wire_type == 0:
            dtype = value
        elif number == 2 and wire_type == 2:
            dims = _shape(value)
        elif number == 4 and wire_type == 2:
            content = value
        elif number == 8 and wire_type == 2:
            strings.append(value)
        elif number == 13:  # half_val: raw 16-bit patterns of half / bfloat16 values
            halves = _repeated_numbers(13, wire_type, value)
            numbers.extend(_half_bits_to_float(int(bits), dtype) for bits in halves)
        elif number in (5, 6, 7, 10, 11, 16, 17):
            numbers.extend(_repeated_numbers(number, wire_type, value))
    if dtype == DT_STRING:
        if plugin in (None, "text") and strings:
            event.texts.append((tag, _joined_text(strings)))
        return
    if plugin not in (None, "scalars") or any(d != 1 for d in dims):
        return  # histograms, images, pr curves... stored as tensors: not scalars
    value = _tensor_scalar(dtype, content, numbers)
    if value is not None:
        event.scalars.append((tag, value, dtype == DT_FLOAT))


def _text(raw: bytes | memoryview) -> str:
    """UTF-8 field bytes as text (undecodable bytes replaced, never an error)."""
    return str(raw, "utf-8", "replace")


def _joined_text(strings: list[memoryview]) -> str:
    """A text tensor's strings joined by newlines, cut after `MAX_TEXT` bytes (and saying so)."""
    total = sum(len(part) for part in strings) + len(strings) - 1
    if total <= MAX_TEXT:
        return _text(b"\n".join(strings))
    parts, room = [], MAX_TEXT
    for part in strings:
        if room <= 0:
            break
        parts.append(part[:room])
        room -= len(part) + 1
    kept = _text(b"\n".join(parts)[:MAX_TEXT])
    return f"{kept} … [cut: {total} bytes in all]"


def _shape(raw: bytes) -> list[int]:
    dims = []
    for number, wire_type, value in iter_fields(raw):
        if number == 2 and wire_type == 2:
            size = 0
            for dnum, dtype, dvalue in iter_fields(value):
                if dnum == 1 and dtype == 0:
                    size = _signed64(dvalue)
            dims.append(size)
    return dims


def _repeated_numbers(number: int, wire_type: int, value) -> list[float]:
    """Values of a (packed or unpacked) repeated numeric field of TensorProto."""
    if number == 5:  # float_val
        if wire_type == 5:
            return [_FLOAT.unpack(value)[0]]
        if wire_type != 2 or len(value) % 4:
            return []
        return list(np.frombuffer(value, "<f4").astype(np.float64))
    if number == 6:  # double_val
        if wire_type == 1:
            return [_DOUBLE.unpack(value)[0]]
        if wire_type != 2 or len(value) % 8:
            return []
        return list(np.frombuffer(value, "<f8"))
    if wire_type == 0:
        ints = [value]
    elif wire_type == 2:
        ints = []
        pos = 0
        while pos < len(value):
            item, pos = read_varint(value, pos)
            ints.append(item)
    else:
        return []
    if number in (7, 10):  # int_val / int64_val are signed, sign-extended to 64 bits
        return [float(_signed64(x)) for x in ints]
    return [float(x) for x in ints]


def _half_bits_to_float(bits: int, dtype: int) -> float:
    bits &= 0xFFFF
    if dtype == DT_BFLOAT16:
        return float(np.array([bits << 16], dtype=np.uint32).view(np.float32)[0])
    return float(np.array([bits], dtype=np.uint16).view(np.float16)[0])


def _tensor_scalar(dtype: int, content: bytes, numbers: list[float]) -> float | None:
    if content:
        if dtype == DT_BFLOAT16:
            if len(content) != 2:
                return None
            return _half_bits_to_float(int.from_bytes(content, "little"), dtype)
        code = _CONTENT_DTYPES.get(dtype)
        if code is None or len(content) % np.dtype(code).itemsize:
            return None
        array = np.frombuffer(content, code)
        return float(array[0]) if array.size == 1 else None
    if len(numbers) != 1:
        return None
    return float(numbers[0]) if dtype in _CONTENT_DTYPES or dtype == DT_BFLOAT16 else None
