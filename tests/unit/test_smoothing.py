"""`GrowingEma` (a live chart's smoothing, extended at each new point) against `ema_debiased` over
the whole series: the same floats, bit for bit, however the series grows, shrinks or changes."""

from __future__ import annotations

import numpy as np
import pytest

from rltop.model import smoothing
from rltop.model.smoothing import GrowingEma, ema_debiased


def _same_bits(got: np.ndarray, want: np.ndarray) -> bool:
    return got.shape == want.shape and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("weight", [0.0, 0.3, 0.6, 0.9, 0.99, 0.999])
def test_a_growing_series_is_smoothed_as_a_whole_one(weight):
    """Points added one by one and in batches of every size, across block boundaries (a block is
    about 676 points at 0.6, 34,500 at 0.999), with NaN and ±inf among them."""
    rng = np.random.default_rng(int(weight * 1000))
    values = np.cumsum(rng.normal(0, 1, 9000)) * 10 ** rng.uniform(-3, 3)
    values[rng.integers(0, 9000, 40)] = np.nan
    values[rng.integers(0, 9000, 5)] = np.inf
    values[rng.integers(0, 9000, 5)] = -np.inf
    ema = GrowingEma()
    end = 0
    while end < values.shape[0]:
        end = min(values.shape[0], end + int(rng.choice([1, 1, 1, 2, 7, 50, 675, 676, 677, 2000])))
        assert _same_bits(ema.smooth(values[:end], weight), ema_debiased(values[:end], weight)), end


def test_the_series_starting_otherwise_is_smoothed_anew():
    """A purged or rewritten history (a resumed run, a point changed in place, a NaN's payload,
    -0.0 for 0.0), a shorter series, another weight, a constant start: the whole series again."""
    rng = np.random.default_rng(7)
    base = rng.normal(0, 1, 5000)
    ema = GrowingEma()
    ema.smooth(base[:3000], 0.6)
    changed = base.copy()
    changed[1500] += 1e-12
    assert _same_bits(ema.smooth(changed[:4000], 0.6), ema_debiased(changed[:4000], 0.6))
    assert _same_bits(ema.smooth(base[:2000], 0.6), ema_debiased(base[:2000], 0.6))  # shorter
    assert _same_bits(ema.smooth(base[:2500], 0.9), ema_debiased(base[:2500], 0.9))  # another weight
    zero = np.zeros(3000)
    ema.smooth(zero, 0.6)  # constant: returned as is
    signed = np.concatenate((zero, rng.normal(0, 1, 1000)))
    signed[10] = -0.0
    assert _same_bits(ema.smooth(signed, 0.6), ema_debiased(signed, 0.6))
    payload = base[:3000].copy()
    ema.smooth(payload, 0.6)
    other_nan = payload.copy()
    other_nan.view(np.int64)[5] = np.array([np.nan]).view(np.int64)[0] | 1  # another NaN payload
    grown = np.concatenate((other_nan, base[3000:3100]))
    assert _same_bits(ema.smooth(grown, 0.6), ema_debiased(grown, 0.6))


def test_the_switch_smooths_the_whole_series_every_time(monkeypatch):
    """Off: nothing is kept, every call is `ema_debiased`'s computation."""
    monkeypatch.setattr(smoothing, "EXTEND_SMOOTHING", False)
    values = np.random.default_rng(2).normal(0, 1, 3000)
    ema = GrowingEma()
    for end in (1000, 1001, 2500):
        assert _same_bits(ema.smooth(values[:end], 0.6), ema_debiased(values[:end], 0.6))
    assert ema._last is None


def test_a_series_longer_than_kept_is_smoothed_whole(monkeypatch):
    """Past `KEEP_POINTS` nothing is kept (a copy of a 6M-point series would cost 48 MB)."""
    monkeypatch.setattr(smoothing, "KEEP_POINTS", 1000)
    values = np.random.default_rng(4).normal(0, 1, 1500)
    ema = GrowingEma()
    assert _same_bits(ema.smooth(values[:900], 0.6), ema_debiased(values[:900], 0.6))
    assert ema._last is not None
    assert _same_bits(ema.smooth(values, 0.6), ema_debiased(values, 0.6))
    assert ema._last is None


def test_extending_computes_the_new_blocks_only(monkeypatch):
    """The point of it: after a long series, one more point smooths about one block, not all."""
    values = np.random.default_rng(3).normal(0, 1, 20_001)
    ema = GrowingEma()
    ema.smooth(values[:20_000], 0.6)
    sizes = []
    original = smoothing._smooth_blocks

    def counted(xs, weight, prior):
        blocks = original(xs, weight, prior)
        first = 0 if prior is None else min(prior.smoothed.shape[0] // blocks.block, len(blocks.ends))
        sizes.append(xs.shape[0] - first * blocks.block)
        return blocks

    monkeypatch.setattr(smoothing, "_smooth_blocks", counted)
    ema.smooth(values, 0.6)
    assert sizes and sizes[0] <= 700
