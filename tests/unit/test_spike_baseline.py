"""The spike rules' baseline (point by point, or by speculation over a long history) gives the
numbers of its plain form, bit for bit, whether a history comes at once or in live batches."""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import deque

import numpy as np
import pytest

from rltop.health.numerics import spike_baseline
from rltop.health.rules.spikes import SpikeRule, SpikeState
from rltop.health.settings import RuleParams


def plain_references(values, start, memo, window, warmup, need, floor, limit, skip_zeros=False):
    """The baseline as first written: every point in order, the window kept in a sorted list
    (``skip_zeros``: a value of exactly 0 never enters it)."""
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
        if not spike and not (skip_zeros and value == 0):
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
    elif shape == "alternating":  # a spike every other point: the worst case of speculation
        values[::2] *= 30
    elif shape == "dense":  # one point in ten a spike
        hits = rng.random(count) < 0.1
        values[hits] *= 50
    elif shape == "zeros":  # few distinct values, signed zeros among them: ties in the window
        values = rng.integers(-1, 3, count) * 0.5
        values[rng.random(count) < 0.3] = -0.0
    elif shape == "sparse":  # a sparse reward's grad norm: mostly steps without an update
        values[rng.random(count) < rng.uniform(0.5, 0.95)] = 0.0
    elif shape == "negative":
        values = rng.normal(0.0, 1.0, count)
    elif shape == "crossing":  # a noisy walk through zero: the baseline sits at its floor for long
        values = _crossing_walk(rng, count)
    return values.astype(np.float32)


SHAPES = ["plain", "spikes", "episodes", "alternating", "dense", "zeros", "sparse", "negative", "crossing"]


def _crossing_walk(rng: np.random.Generator, count: int) -> np.ndarray:
    """The benchmark logs' values (`benchmarks/make_logs.py`): a damped random walk plus a slow
    wave, through zero and back."""
    level, levels = 1.0, np.empty(count)
    for step, noise in enumerate(rng.normal(0.0, 0.05, count).tolist()):
        level = level * 0.999 + noise
        levels[step] = level
    return levels + np.sin(np.arange(1, count + 1) / 500)


@pytest.mark.parametrize("shape", SHAPES)
def test_the_baseline_matches_its_plain_form_bit_for_bit(shape: str, monkeypatch) -> None:
    speculated = []
    real = spike_baseline._speculate
    monkeypatch.setattr(spike_baseline, "_speculate", lambda *args: speculated.append(1) or real(*args))
    rng = np.random.default_rng(sum(map(ord, shape)))
    for trial in range(40):
        # Short histories (one by one) and long ones (speculation, SPECULATE_FROM points and up).
        values = series(rng, int(rng.integers(0, 3000 if trial % 2 else 40_000)), shape)
        window = int(rng.choice([1, 5, 49, 50, 51]))
        warmup = int(rng.choice([0, 20, 700]))
        need = int(rng.choice([0, 1, 10, window + 3]))
        floor = float(rng.choice([1e-8, 0.7, 0.0, -0.0, -1.0]))
        warn = None if trial % 7 == 6 else float(rng.choice([2.0, 5.0, 10.0]))
        params = RuleParams(
            "grad_norm_spike",
            {
                "window": window,
                "warmup": warmup,
                "baseline_points": need,
                "min_baseline": floor,
                "warn": warn,
                "critical": None if warn else 20.0,
            },
            {},
        )
        skip_zeros = bool(trial % 3)
        params.values["skip_zeros"] = skip_zeros
        limit = warn if warn is not None else 20.0
        # One whole history, then live batches, as the engine calls it.
        cuts = sorted({0, int(rng.integers(0, len(values) + 1)), max(len(values) - 3, 0), len(values)})
        if trial % 5 == 0:
            cuts = [0, len(values)]  # the whole history in one call
        mine = SpikeState()
        theirs: dict = {}
        for begin, end in zip(cuts, cuts[1:]):
            got = SpikeRule._references(values[:end], begin, mine, params)
            want = plain_references(
                values[:end], begin, theirs, window, warmup, need, floor, limit, skip_zeros
            )
            assert got.tobytes() == want.tobytes(), (shape, trial, begin, end)
            assert [x.hex() for x in mine.window.recent] == [x.hex() for x in theirs["recent"]]
            assert [x.hex() for x in mine.window.ordered] == [x.hex() for x in theirs["ordered"]]
    assert speculated or shape == "sparse", "no long history took the speculative path"


def test_a_baseline_held_at_its_floor_is_guessed_right(monkeypatch) -> None:
    # A value loss below zero (the benchmark logs' random walk) holds the baseline at its floor, and
    # then every positive point is a spike: half the points, in runs broken by single normal ones.
    # The guess that the baseline holds still gets them right: fewer medians are computed than
    # there are points (each normal point's window once, and little thrown away), and almost
    # nothing is left to the slow point-by-point loop. (Guessing "no spike" computed 2.3 medians a
    # point here.)
    one_by_one, medians = [], []
    real_one_by_one, real_medians = spike_baseline._one_by_one, spike_baseline.window_medians

    def counted(new, offset, *args, **kw):
        stop = real_one_by_one(new, offset, *args, **kw)
        one_by_one.append(stop - offset)
        return stop

    monkeypatch.setattr(spike_baseline, "_one_by_one", counted)
    monkeypatch.setattr(
        spike_baseline, "window_medians", lambda rows: medians.append(len(rows)) or real_medians(rows)
    )
    values = _crossing_walk(np.random.default_rng(7), 40_000).astype(np.float32)
    window = spike_baseline.SpikeWindow()
    references = spike_baseline.spike_references(values, 0, window, 50, 20, 10, 1e-8, 5.0)
    assert 0.3 < (values >= 5.0 * references).mean() < 0.7
    assert sum(medians) < 0.8 * len(values), sum(medians)
    assert sum(one_by_one) < 0.02 * len(values), one_by_one
    want = plain_references(values, 0, {}, 50, 20, 10, 1e-8, 5.0)
    assert references.tobytes() == want.tobytes()
