"""The column-wise CSV export prints exactly what the line-by-line export prints: the shortest
text that reads back to the stored float32 (or float64), on every kind of value."""

from __future__ import annotations

import numpy as np
import pytest

from rltop.model.decimal_columns import shortest_fixed
from rltop.model.run import Store
from rltop.model.values import format_steps, format_values
from rltop.report.csv_bytes import series_csv
from rltop.report.export import export_csv_chunks, export_lines

RNG = np.random.default_rng(17)
N = 20_000


def _special(dtype) -> np.ndarray:
    """Zeros, non-finite values, limits, powers of two and the edges of the positional range."""
    info = np.finfo(dtype)
    values = [
        0.0,
        -0.0,
        np.nan,
        np.inf,
        -np.inf,
        1.0,
        -1.0,
        0.5,
        2.0,
        1e-4,
        1.0001e-4,
        9.9e-5,
        999999.9,
        1e6,
        0.1,
        0.2,
        0.3,
        1 / 3,
        2 / 3,
        123456.789,
        -0.0001234,
        float(info.max),
        float(info.tiny),
        float(info.eps),
        1.5,
        3.0,
        8388607.5,
        1.79e9,
        2.0**52 + 1,
        2.0**53 - 1,
    ]
    powers = [2.0**k for k in range(-20, 30)]
    return np.array(values + powers + [-p for p in powers], dtype=dtype)


def _float32_cases() -> np.ndarray:
    bits = RNG.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32).view(np.float32)
    normal = RNG.standard_normal(N) * 10.0 ** RNG.integers(-5, 7, N)
    decimals = RNG.integers(0, 8, N)
    rounded = (np.round(RNG.standard_normal(N) * 10.0**decimals) / 10.0**decimals).astype(np.float32)
    # Neighbours of round decimals: the hardest cases for "fewest digits that read back".
    near = np.nextafter(rounded, np.float32(np.inf))
    with np.errstate(invalid="ignore", over="ignore"):  # NaN payloads and huge values narrowed
        return np.concatenate([bits, normal, rounded, near, _special(np.float32)]).astype(np.float32)


def _float64_cases() -> np.ndarray:
    walls = 1.79e9 + np.cumsum(RNG.random(N) * 0.01)
    decimals = RNG.integers(0, 7, N)
    round_walls = np.round((1.79e9 + RNG.random(N) * 1e4) * 10.0**decimals) / 10.0**decimals
    bits = RNG.integers(0, 2**63, N).view(np.float64)
    near = np.nextafter(round_walls, np.inf)
    return np.concatenate([walls, round_walls, bits, near, RNG.random(N) * 1e6, _special(np.float64)])


@pytest.mark.parametrize("single", [True, False])
def test_column_text_is_numpys_shortest_text(single: bool) -> None:
    values = _float32_cases() if single else _float64_cases()
    done, integer, fraction, digits = shortest_fixed(values)
    assert done.mean() > 0.3  # the fast path takes the usual values
    expected = format_values(values.astype(np.float64), single_precision=single)
    for i in np.flatnonzero(done).tolist():
        sign = "-" if np.signbit(values[i]) else ""
        text = f"{sign}{integer[i]}.{str(fraction[i]).zfill(max(digits[i], 1))}"
        assert text == expected[i], (values[i], text, expected[i])
        assert values.dtype.type(text) == values[i]  # reads back to the stored number


@pytest.mark.parametrize("single", [True, False])
def test_series_bytes_equal_the_lines(single: bool) -> None:
    values = (_float32_cases() if single else _float64_cases()).astype(np.float64)
    count = values.size
    steps = np.concatenate([RNG.integers(0, 10**12, count - 3), [0, -5, 2**62]]).astype(np.int64)
    walls = _float64_cases()[:count] if count <= _float64_cases().size else np.resize(_float64_cases(), count)
    block = series_csv(b"r,t,", steps, walls, values, single, b",s")
    lines = [
        f"r,t,{s},{w},{v},s\n"
        for s, w, v in zip(format_steps(steps), format_values(walls, False), format_values(values, single))
    ]
    assert block.decode() == "".join(lines)


def test_export_chunks_equal_export_lines() -> None:
    store = Store()
    run = store.run("run,\x1b[31m", "dir")
    steps = np.arange(1, 5001, dtype=np.int64)
    run.add_points("train/loss", steps, 1.7e9 + steps * 0.25, np.sin(steps).astype(np.float32), True)
    run.add_points('eval/"q"', steps, 1.7e9 + steps * 0.5, np.cos(steps) * 1e-6, False)
    for raw in (False, True):
        chunks = b"".join(export_csv_chunks(store, raw=raw)).decode()
        assert chunks == "".join(line + "\n" for line in export_lines(store, "csv", raw=raw))
