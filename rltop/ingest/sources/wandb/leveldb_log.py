"""The LevelDB log format, as the wandb SDK writes its ``.wandb`` run files: framing only.

The file is a sequence of 32 KiB blocks. Each block holds chunks: a 7-byte header (checksum, 4
bytes little endian; length, 2 bytes little endian; type, 1 byte) and ``length`` payload bytes. A
record is one FULL chunk, or a FIRST chunk, MIDDLE chunks and a LAST chunk, each in the next block.
Chunks never cross a block's end; a block's last 1-6 bytes, too few for a header, are zero padding.
The wandb SDK checksums with the plain CRC32 of ``type byte + payload`` (zlib's, "CRCAlgoIEEE" in
wandb's ``core/pkg/leveldb``; not LevelDB's masked CRC32C) and puts its 7-byte file header
(`FILE_HEADER`) at the start of the first block, so block offsets count from the file's first byte.

`scan` walks a window of the file from a record start and returns the complete records in it,
where the next read must start (the first record not complete yet), and the damaged spans. A
chunk that is not whole on disk yet is pending, never damage. After damage (a checksum that fails
with data after it, a length past its block, a chunk out of sequence) the scan resynchronises on
the next chunk in the same block that checks (searched byte by byte: a length that lies is no
obstacle; numpy finds the few positions worth a checksum), else at the next block, as LevelDB's
own reader does; so every record before the damage, and every whole record after it, is read.
Damage with nothing valid after it in the last block of the file waits (``retry``): the writer's
bytes may not have landed yet.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

import numpy as np

BLOCK = 32 * 1024
CHUNK_HEADER = 7
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4
FILE_HEADER = struct.pack("<4sHB", b":W&B", 0xBEE1, 0)  # ident, magic, version (wandb's datastore)
_HEADER = struct.Struct("<IHB")


@dataclass
class LogScan:
    """What one `scan` found (positions are file offsets)."""

    records: list[tuple[int, bytes]] = field(default_factory=list)  # (first chunk's offset, payload)
    consumed: int = 0  # where the next scan starts: after the last complete record (or damage)
    damage: list[tuple[int, int]] = field(default_factory=list)  # (offset, bytes skipped)
    retry: bool = False  # the chunk at ``consumed`` fails its checksum with nothing after it (yet)


def chunk_ok(data: bytes | memoryview, at: int) -> tuple[int, int] | None:
    """(type, payload length) of the chunk at ``data[at:]`` when it is whole and checks, else None."""
    if at + CHUNK_HEADER > len(data):
        return None
    checksum, length, kind = _HEADER.unpack_from(data, at)
    end = at + CHUNK_HEADER + length
    if not FULL <= kind <= LAST or end > len(data):
        return None
    if zlib.crc32(data[at + CHUNK_HEADER - 1 : end]) != checksum:
        return None
    return kind, length


def scan(data: bytes, base: int, at_eof: bool) -> LogScan:
    """The records of ``data`` (read at file offset ``base``, a record start or a block start).

    ``at_eof``: ``data`` reaches the end of the file, so a chunk cut short is the writer's next one.
    """
    result = LogScan(consumed=base)
    view = memoryview(data)
    size = len(data)
    pos = 0  # position in data
    record_start: int | None = None  # where the record being assembled began (its FIRST chunk)
    parts: list[bytes] = []
    while True:
        room = BLOCK - (base + pos) % BLOCK
        if room < CHUNK_HEADER:  # the block's zero trailer
            if pos + room > size:
                break
            pos += room
            if record_start is None:
                result.consumed = base + pos
            continue
        if pos + CHUNK_HEADER > size:
            break  # a header not whole yet
        checksum, length, kind = _HEADER.unpack_from(view, pos)
        end = pos + CHUNK_HEADER + length
        fits = FULL <= kind <= LAST and length <= room - CHUNK_HEADER
        if fits and end > size:
            break  # a chunk the writer has not finished
        if not fits or zlib.crc32(view[pos + CHUNK_HEADER - 1 : end]) != checksum:
            # Damage, or zeros where the writer's bytes have not landed yet (a network file
            # system shows a file's size first): only a valid chunk after it tells which.
            origin = pos if record_start is None else record_start
            found = _next_chunk(view, pos + 1, min(pos + room, size))
            if found is None and pos + room > size:
                result.retry = at_eof
                break  # nothing valid after it in this block yet: read again from its record
            resume = pos + room if found is None else found
            result.damage.append((base + origin, resume - origin))
            record_start, parts = None, []
            pos = resume
            result.consumed = base + pos
            continue
        if kind in (FULL, FIRST):
            if record_start is not None:  # a FIRST that never got its LAST
                result.damage.append((base + record_start, pos - record_start))
            record_start, parts = pos, [bytes(view[pos + CHUNK_HEADER : end])]
        elif record_start is None:  # MIDDLE or LAST of a record whose start was lost
            result.damage.append((base + pos, end - pos))
        else:
            parts.append(bytes(view[pos + CHUNK_HEADER : end]))
        pos = end
        if kind == FULL or (kind == LAST and record_start is not None):
            result.records.append((base + record_start, b"".join(parts)))
            record_start, parts = None, []
        if record_start is None:
            result.consumed = base + pos
    return result


def _next_chunk(view: memoryview, start: int, stop: int) -> int | None:
    """The first position in ``view[start:stop]`` where a FULL or FIRST chunk starts that checks.

    Only positions whose type byte says FULL or FIRST and whose length fits are checksummed, and
    numpy finds them: a block of zeros or garbage costs microseconds, not a Python step per byte
    (a 100 MB garbage file took 15 s to resynchronise through).
    """
    if stop - start < CHUNK_HEADER:
        return None
    window = np.frombuffer(view, dtype=np.uint8, count=stop - start, offset=start)
    kinds = window[CHUNK_HEADER - 1 :]  # the type byte of a chunk starting at each position
    at = np.flatnonzero((kinds == FULL) | (kinds == FIRST))
    if at.size == 0:
        return None
    lengths = window[at + 4].astype(np.int64) | window[at + 5].astype(np.int64) << 8
    at = at[at + CHUNK_HEADER + lengths <= stop - start]
    for candidate in (start + at).tolist():
        if chunk_ok(view, candidate) is not None:
            return candidate
    return None
