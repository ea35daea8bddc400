"""CRC32C (Castagnoli) as TFRecord uses it, masked, for one buffer or many records at once.

No extra dependency: a byte table drives both a plain loop (one buffer) and a numpy version that
advances the CRC of many records one byte position at a time (all records in lock step), which is
how the reader checks thousands of length fields or payloads per call.
"""

from __future__ import annotations

import numpy as np

_POLY = 0x82F63B78
_MASK_DELTA = 0xA282EAD8


def _make_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ _POLY if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE = _make_table()
_TABLE_NP = np.array(_TABLE, dtype=np.uint32)


def crc32c(data: bytes | memoryview) -> int:
    """The unmasked CRC32C of ``data``."""
    crc = 0xFFFFFFFF
    table = _TABLE
    for byte in bytes(data):
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def mask(crc: int) -> int:
    """TFRecord's masking of a CRC: rotate right by 15 bits and add a constant."""
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def masked_crc32c(data: bytes | memoryview) -> int:
    """The masked CRC32C TFRecord stores after the length and after the payload."""
    return mask(crc32c(data))


def masked_crc32c_rows(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Masked CRC32C of ``buf[starts[i] : starts[i] + lengths[i]]`` for every i, vectorised.

    Rows are processed longest first so that each byte position only touches the rows still
    active: the work is the sum of the lengths, not rows x longest.
    """
    count = int(starts.shape[0])
    if count == 0:
        return np.empty(0, dtype=np.uint32)
    order = np.argsort(-lengths, kind="stable")
    pos = starts[order].astype(np.int64)
    lens = lengths[order]
    crc = np.full(count, 0xFFFFFFFF, dtype=np.uint32)
    # active[j] = number of rows longer than j (lens is sorted descending).
    longest = int(lens[0])
    active_counts = count - np.searchsorted(lens[::-1], np.arange(longest), side="right")
    for j in range(longest):
        active = int(active_counts[j])
        part = crc[:active]
        byte = buf[pos[:active] + j].astype(np.uint32)
        crc[:active] = _TABLE_NP[(part ^ byte) & 0xFF] ^ (part >> 8)
    crc ^= np.uint32(0xFFFFFFFF)
    masked = ((crc >> 15) | (crc << 17)) + np.uint32(_MASK_DELTA)
    out = np.empty(count, dtype=np.uint32)
    out[order] = masked
    return out
