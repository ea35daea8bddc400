"""The spike rules' baseline loop gives the numbers of its plain form, bit for bit, whether a history
comes at once or in live batches."""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import deque

import numpy as np
import pytest

from rltop.health.relative_rules import SpikeRule
from rltop.health.rules import RuleParams


def plain_references(values, start, memo, window, warmup, need, floor, limit):
    """The baseline as first written: every point in order, the window kept in a sorted list."""
    need = max(need, 1)
    recent = memo.setdefault("recent", deque())
    ordered = memo.setdefault("ordered", [])
    out = np.full(len(values) - start, np.nan)
    for offset, value in enumerate(values[start:].tolist()):
        if start + offset < warmup:
            continue
        spike = False
        size = len(ordered)
        if size >= need:
            middle = size // 2
            median = ordered[middle] if size % 2 else 0.5 * (ordered[middle - 1] + ordered[middle])
            reference = max(median, floor)
            out[offset] = reference
            spike = limit is not None and value >= limit * reference
        if not spike:
            insort(ordered, value)
            recent.append(value)
            if len(recent) > window:
                del ordered[bisect_left(ordered, recent.popleft())]
    return out


def series(rng: np.random.Generator, count: int, shape: str) -> np.ndarray:
    """Noisy values with spikes of the given kind (float32, as series store them)."""
    values = rng.lognormal(0.0, rng.uniform(0.05, 0.8), count)
    if shape == "spikes":
        hits = rng.random(count) < rng.uniform(0.0005, 0.05)
        values[hits] *= rng.uniform(3, 60, hits.sum())
    elif shape == "episodes":  # long stretches far above the median: every point a spike
        for begin in rng.integers(0, count, 4):
            values[begin : begin + rng.integers(1, 500)] *= 40
    elif shape == "zeros":  # few distinct values, signed zeros among them: ties in the window
        values = rng.integers(-1, 3, count) * 0.5
        values[rng.random(count) < 0.3] = -0.0
    elif shape == "negative":
        values = rng.normal(0.0, 1.0, count)
    return values.astype(np.float32)


@pytest.mark.parametrize("shape", ["plain", "spikes", "episodes", "zeros", "negative"])
def test_the_baseline_matches_its_plain_form_bit_for_bit(shape: str) -> None:
    rng = np.random.default_rng(sum(map(ord, shape)))
    for trial in range(40):
        values = series(rng, int(rng.integers(0, 3000)), shape)
        window = int(rng.choice([1, 5, 49, 50]))
        warmup = int(rng.choice([0, 20, 700]))
        need = int(rng.choice([0, 1, 10, window + 3]))
        floor = float(rng.choice([1e-8, 0.7, 0.0, -0.0, -1.0]))
        warn = None if trial % 7 == 6 else float(rng.choice([2.0, 5.0, 10.0]))
        params = RuleParams("grad_norm_spike", {
            "window": window, "warmup": warmup, "baseline_points": need, "min_baseline": floor,
            "warn": warn, "critical": None if warn else 20.0,
        }, {})
        limit = warn if warn is not None else 20.0
        # One whole history, then live batches, as the engine calls it.
        cuts = sorted({0, int(rng.integers(0, len(values) + 1)), max(len(values) - 3, 0), len(values)})
        mine: dict = {}
        theirs: dict = {}
        for begin, end in zip(cuts, cuts[1:]):
            got = SpikeRule._references(values[:end], begin, mine, params)
            want = plain_references(values[:end], begin, theirs, window, warmup, need, floor, limit)
            assert got.tobytes() == want.tobytes(), (shape, trial, begin, end)
            assert [x.hex() for x in mine["recent"]] == [x.hex() for x in theirs["recent"]]
            assert [x.hex() for x in mine["ordered"]] == [x.hex() for x in theirs["ordered"]]
