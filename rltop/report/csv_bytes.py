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


def series_csv(
    prefix: bytes, steps: np.ndarray, walls: np.ndarray, values: np.ndarray, single: bool, suffix: bytes
) -> bytes:
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
    # Slots hold one row per byte position (digit loops write contiguous rows); turned to one row
    # per point once at the end, the used bytes read in order are the text.
    matrix = np.ascontiguousarray(np.concatenate([slot for slot, _ in slots]).T)
    mask = np.ascontiguousarray(np.concatenate([used for _, used in slots]).T)
    return matrix[mask].tobytes()


def _constant(text: bytes, count: int) -> tuple[np.ndarray, np.ndarray]:
    column = np.frombuffer(text, dtype=np.uint8)[:, None]
    return np.broadcast_to(column, (column.size, count)), np.ones((column.size, count), dtype=bool)


def _right_aligned(width: int, lengths: np.ndarray) -> np.ndarray:
    """Mask of the last ``lengths[i]`` of ``width`` positions of each point: shape (width, n)."""
    return np.arange(width)[:, None] >= (width - lengths)[None, :]


def _steps(steps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    steps = np.asarray(steps, dtype=np.int64)
    negative = steps < 0
    magnitude = np.where(negative, 0, steps)
    counts = digit_count(magnitude)
    width = int(counts.max())
    matrix = digit_matrix(magnitude, width)
    used = _right_aligned(width, counts)
    if negative.any():  # (a negative step is rare: numpy's text)
        matrix, used = _place_texts(matrix, used, np.flatnonzero(negative), format_steps(steps[negative]))
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
    matrix = np.concatenate(
        [
            np.full((1, count), _MINUS, dtype=np.uint8),
            digit_matrix(integer, int_width),
            np.full((1, count), _DOT, dtype=np.uint8),
            digit_matrix(fraction, frac_width),
        ]
    )
    used = np.concatenate(
        [
            (np.signbit(values) & done)[None, :],
            _right_aligned(int_width, int_counts),
            np.ones((1, count), dtype=bool),
            _right_aligned(frac_width, digits),
        ]
    )
    rest = np.flatnonzero(~done)
    if rest.size:
        texts = format_values(values[rest].astype(np.float64), single_precision)
        matrix, used = _place_texts(matrix, used, rest, texts)
    return matrix, used


def _place_texts(matrix: np.ndarray, used: np.ndarray, points: np.ndarray, texts: list[str]):
    """Put ``texts`` (ASCII) right-aligned into the slot for ``points`` (widened if needed)."""
    longest = max(len(text) for text in texts)
    if longest > matrix.shape[0]:
        pad = longest - matrix.shape[0]
        matrix = np.concatenate([np.full((pad, matrix.shape[1]), _ZERO, dtype=np.uint8), matrix])
        used = np.concatenate([np.zeros((pad, used.shape[1]), dtype=bool), used])
    width = matrix.shape[0]
    used[:, points] = False
    for point, text in zip(points.tolist(), texts):
        data = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
        matrix[width - data.size :, point] = data
        used[width - data.size :, point] = True
    return matrix, used
