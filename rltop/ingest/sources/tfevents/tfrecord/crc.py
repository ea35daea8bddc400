"""CRC32C (Castagnoli) as TFRecord uses it, masked, for one buffer or many records at once.

No extra dependency. A byte table drives three ways of computing it:

* `crc32c`: a plain loop, for one small buffer (writers, tests);
* `masked_crc32c_rows`: numpy advancing the CRC register of many records one byte position at a
  time, all records in lock step; records longer than 64 KB are cut into 4 KB chunks whose
  registers are computed in lock step too and then joined with a "feed c zero bytes" operator;
* `masked_crc32c_templated`: for records that share one layout and differ only in a few known
  words (scalar events: wall time, step, value). A CRC is affine over GF(2), so
  ``crc(row) = crc(template) ^ L(row) ^ L(template)`` where ``L`` sums one table lookup
  (``_shift_table``) per byte of those words; a byte that is the same in every row cancels and
  is skipped. About ten lookups per record instead of a 60-step loop: this is what lets rltop
  verify every payload of a bulk load.
"""

from __future__ import annotations

import numpy as np

_POLY = 0x82F63B78
_MASK_DELTA = 0xA282EAD8
_INIT = 0xFFFFFFFF
_LONG_ROW = 1 << 16  # rows longer than this are chunked
_CHUNK = 4096
_FEW_ROWS = 24  # up to this many rows, a Python loop per row beats numpy's per-pass overhead


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
    return _register_loop(bytes(data), _INIT) ^ _INIT


def mask(crc: int) -> int:
    """TFRecord's masking of a CRC: rotate right by 15 bits and add a constant."""
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def _register_loop(data: bytes, state: int) -> int:
    table = _TABLE
    for byte in data:
        state = table[(state ^ byte) & 0xFF] ^ (state >> 8)
    return state


def masked_crc32c(data: bytes | memoryview) -> int:
    """The masked CRC32C TFRecord stores after the length and after the payload."""
    return mask(crc32c(data))


def _mask_np(crc: np.ndarray) -> np.ndarray:
    return ((crc >> 15) | (crc << 17)) + np.uint32(_MASK_DELTA)


def _registers(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray, init: int) -> np.ndarray:
    """CRC registers after feeding each row from ``init`` (no final xor), all rows in lock step.

    Rows are processed longest first so that each byte position only touches the rows still
    active: the work is the sum of the lengths, not rows x longest.
    """
    count = int(starts.shape[0])
    crc = np.full(count, init, dtype=np.uint32)
    if count == 0 or int(lengths.max()) == 0:
        return crc
    if count <= _FEW_ROWS:
        # A numpy pass costs microseconds whatever its size: for a handful of rows (a live-tail
        # read, the templates of a batch) the plain byte loop is several times faster.
        for row, (start, length) in enumerate(zip(starts.tolist(), lengths.tolist())):
            crc[row] = _register_loop(buf[start : start + length].tobytes(), init)
        return crc
    order = np.argsort(-lengths, kind="stable")
    pos = starts[order].astype(np.int64)
    lens = lengths[order]
    state = crc.copy()
    longest = int(lens[0])
    # active_counts[j] = number of rows longer than j (lens is sorted descending).
    active_counts = count - np.searchsorted(lens[::-1], np.arange(longest), side="right")
    for j in range(longest):
        active = int(active_counts[j])
        if active < _FEW_ROWS:
            # A few long rows left (a text summary among scalars): one numpy pass per byte would
            # cost microseconds for a handful of rows, so they finish in the plain loop.
            for row in range(active):
                start = int(pos[row]) + j
                rest = buf[start : int(pos[row]) + int(lens[row])].tobytes()
                state[row] = _register_loop(rest, int(state[row]))
            break
        part = state[:active]
        byte = buf[pos[:active] + j].astype(np.uint32)
        state[:active] = _TABLE_NP[(part ^ byte) & 0xFF] ^ (part >> 8)
    crc[order] = state
    return crc


def masked_crc32c_rows(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Masked CRC32C of ``buf[starts[i] : starts[i] + lengths[i]]`` for every i, vectorised."""
    starts = np.asarray(starts, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    long_rows = lengths > _LONG_ROW
    crc = np.empty(starts.shape[0], dtype=np.uint32)
    short = np.flatnonzero(~long_rows)
    crc[short] = _registers(buf, starts[short], lengths[short], _INIT)
    for row in np.flatnonzero(long_rows).tolist():
        crc[row] = _long_register(buf, int(starts[row]), int(lengths[row]))
    return _mask_np(crc ^ np.uint32(_INIT))


def _long_register(buf: np.ndarray, start: int, length: int) -> int:
    """The register after one long row: chunks in lock step, joined by the zero-feed operator."""
    head = length % _CHUNK or _CHUNK
    rest = (length - head) // _CHUNK
    state = int(_registers(buf, np.array([start]), np.array([head]), _INIT)[0])
    chunk_starts = start + head + _CHUNK * np.arange(rest, dtype=np.int64)
    parts = _registers(buf, chunk_starts, np.full(rest, _CHUNK, dtype=np.int64), 0).tolist()
    z0, z1, z2, z3 = _zero_feed_tables(_CHUNK)
    for part in parts:
        # register(A || B) = feed_zeros(register(A), |B|) ^ L(B)
        state = z0[state & 0xFF] ^ z1[(state >> 8) & 0xFF] ^ z2[(state >> 16) & 0xFF] ^ z3[state >> 24]
        state ^= part
    return state


_zero_feed_cache: dict[int, tuple[list[int], list[int], list[int], list[int]]] = {}


def _zero_feed_tables(count: int):
    """Byte tables of the linear map "feed ``count`` zero bytes" applied to a register."""
    tables = _zero_feed_cache.get(count)
    if tables is None:
        values = np.arange(256, dtype=np.uint32)[None, :] << (8 * np.arange(4, dtype=np.uint32))[:, None]
        state = values.reshape(-1)
        for _ in range(count):
            state = _TABLE_NP[state & 0xFF] ^ (state >> 8)
        rows = state.reshape(4, 256)
        tables = _zero_feed_cache[count] = tuple(row.tolist() for row in rows)
    return tables


_shift_cache: list[np.ndarray] = []


def _shift_table(longest: int) -> np.ndarray:
    """Flat table: entry ``k * 256 + b`` is L(byte b followed by k zero bytes), k < longest."""
    if _shift_cache and _shift_cache[0].size >= longest * 256:
        return _shift_cache[0]
    size = max(longest, 256)
    table = np.empty((size, 256), dtype=np.uint32)
    table[0] = _TABLE_NP  # one byte b from a zero register: T[b]
    for k in range(1, size):
        previous = table[k - 1]
        table[k] = _TABLE_NP[previous & 0xFF] ^ (previous >> 8)
    _shift_cache[:] = [table.reshape(-1)]
    return _shift_cache[0]


def masked_crc32c_templated(
    buf: np.ndarray,
    starts: np.ndarray,
    lengths: np.ndarray,
    template: np.ndarray,
    fields: list[tuple[np.ndarray, np.ndarray | int]],
    relative: tuple[int, ...] = (),
) -> np.ndarray:
    """Masked CRC32C of rows that equal their template row except inside the ``fields`` words.

    ``template[i]`` is the index of row i's template (a row of the same length and layout, itself
    its own template). Each field is ``(words, offset)``: ``words[i]`` (uint32 or uint64) holds
    the bytes of row i at ``offset`` from its start (an int for all rows, or an array per row);
    fields must not overlap, and every byte of a row outside them must equal its template's. Only
    templates are fed byte by byte; every other row costs one lookup per byte that varies.
    The fields numbered in ``relative`` are taken as their difference to the template's words:
    bytes that differ between layouts but never within one (those after a step's varint) then
    cost nothing.
    """
    templates = np.flatnonzero(template == np.arange(template.size))
    table = _shift_table(int(lengths.max()) if lengths.size else 1)
    last_byte_row = (lengths - 1) * 256  # table row of a last byte (no zeros after it)
    own = np.zeros(starts.shape[0], dtype=np.uint32)  # L(row) over the bytes that vary
    own_relative = np.zeros(starts.shape[0], dtype=np.uint32)  # L(row ^ template) likewise
    for number, (words, offset) in enumerate(fields):
        if words.size == 0:
            continue
        target = own
        if number in relative:
            words, target = words ^ words[template], own_relative
        _add_lookups(target, table, last_byte_row, words, offset, int(np.bitwise_or.reduce(words ^ words[0])))
    constant = np.zeros(starts.shape[0], dtype=np.uint32)
    constant[templates] = _registers(buf, starts[templates], lengths[templates], _INIT) ^ own[templates]
    return _mask_np(constant[template] ^ own ^ own_relative ^ np.uint32(_INIT))


def _add_lookups(
    target: np.ndarray,
    table: np.ndarray,
    last_byte_row: np.ndarray,
    words: np.ndarray,
    offset: np.ndarray | int,
    varying: int,
) -> None:
    """XOR into ``target`` the register contribution of each row's ``words`` at ``offset``, for the
    bytes set in ``varying`` (a byte equal in every row cancels out of every comparison)."""
    width = words.dtype.itemsize
    columns = words.view(np.uint8).reshape(-1, width)
    base = last_byte_row - offset * 256
    for k in range(width):
        if (varying >> (8 * k)) & 0xFF:
            target ^= table[base - 256 * k + columns[:, k]]
