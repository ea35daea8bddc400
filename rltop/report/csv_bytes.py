"""The CSV lines of one series built as one block of bytes, with numpy, instead of line by line.

Each field of every line is a slot in a byte matrix (one row a point): the constant run and tag
prefix, the step's digits, the wall time's and the value's shortest decimals
(`rltop.model.decimal_columns`), the constant session suffix. Bytes a row does not use are masked,
and the masked matrix read row by row is the text. Values the column formatter does not handle
(non-finite, far from 1, powers of two) take numpy's text (`rltop.model.values.format_values`),
placed in the same slots, so the output is byte for byte what the line-by-line export prints.
"""

from __future__ import annotations

import numpy as np

from rltop.model.decimal_columns import digit_count, digit_matrix, shortest_fixed
from rltop.model.values import format_steps, format_values

_MINUS, _DOT, _ZERO = ord("-"), ord("."), ord("0")


def series_csv(prefix: bytes, steps: np.ndarray, walls: np.ndarray, values: np.ndarray,
               single: bool, suffix: bytes) -> bytes:
    """``prefix + step,wall,value + suffix + "\\n"`` for every point, as one bytes object."""
    count = int(steps.size)
    if count == 0:
        return b""
    slots = [
        _constant(prefix, count),
        _steps(steps),
        _constant(b",", count),
        _decimals(np.asarray(walls, dtype=np.float64), single_precision=False),
        _constant(b",", count),
        _decimals(np.asarray(values, dtype=np.float32 if single else np.float64), single_precision=single),
        _constant(suffix + b"\n", count),
    ]
    # Slots are built one row per byte position (digit loops write contiguous rows); the matrix
    # is turned to one row per point once, and the used bytes read in that order are the text.
    matrix = np.concatenate([slot.T for slot, _ in slots]).T
    mask = np.concatenate([used.T for _, used in slots]).T
    return np.ascontiguousarray(matrix)[np.ascontiguousarray(mask)].tobytes()


def _constant(text: bytes, count: int) -> tuple[np.ndarray, np.ndarray]:
    row = np.frombuffer(text, dtype=np.uint8)
    return np.broadcast_to(row, (count, row.size)), np.ones((count, row.size), dtype=bool)


def _steps(steps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    steps = np.asarray(steps, dtype=np.int64)
    negative = steps < 0
    magnitude = np.where(negative, 0, steps)
    counts = digit_count(magnitude)
    width = int(counts.max())
    matrix = digit_matrix(magnitude, width)
    used = np.arange(width) >= (width - counts)[:, None]
    if negative.any():  # (a negative step is rare: numpy's text)
        _place_texts(matrix, used, np.flatnonzero(negative), format_steps(steps[negative]))
    return matrix, used


def _decimals(values: np.ndarray, single_precision: bool) -> tuple[np.ndarray, np.ndarray]:
    """The slot of a float column: sign, integer digits, point, fraction digits."""
    done, integer, fraction, digits = shortest_fixed(values)
    digits = np.maximum(digits, 1)  # 3.0, not 3.
    integer = np.where(done, integer, 0)
    fraction = np.where(done, fraction, 0)
    int_counts = digit_count(integer)
    int_width, frac_width = int(int_counts.max()), int(np.where(done, digits, 1).max())
    count = values.size
    sign = np.full((count, 1), _MINUS, dtype=np.uint8)
    sign_used = (np.signbit(values) & done)[:, None]
    point = np.full((count, 1), _DOT, dtype=np.uint8)
    int_matrix = digit_matrix(integer, int_width)
    int_used = np.arange(int_width) >= (int_width - int_counts)[:, None]
    frac_matrix = digit_matrix(fraction, frac_width)
    frac_used = np.arange(frac_width) >= (frac_width - digits)[:, None]
    matrix = np.hstack([sign, int_matrix, point, frac_matrix])
    used = np.hstack([sign_used, int_used, np.ones((count, 1), dtype=bool), frac_used])
    rest = np.flatnonzero(~done)
    if rest.size:
        texts = format_values(values[rest].astype(np.float64), single_precision)
        longest = max(len(text) for text in texts)
        if longest > matrix.shape[1]:
            pad = longest - matrix.shape[1]
            matrix = np.hstack([np.full((count, pad), _ZERO, dtype=np.uint8), matrix])
            used = np.hstack([np.zeros((count, pad), dtype=bool), used])
        _place_texts(matrix, used, rest, texts)
    return matrix, used


def _place_texts(matrix: np.ndarray, used: np.ndarray, rows: np.ndarray, texts: list[str]) -> None:
    """Put ``texts`` (ASCII) right-aligned into the slot's ``rows``."""
    width = matrix.shape[1]
    used[rows] = False
    for row, text in zip(rows.tolist(), texts):
        data = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
        matrix[row, width - data.size :] = data
        used[row, width - data.size :] = True
