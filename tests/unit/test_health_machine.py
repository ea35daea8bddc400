"""The persistence / hysteresis machine: chunked feeding gives exactly the bulk result."""

from __future__ import annotations

import numpy as np
import pytest

from rltop.health.persistence import EpisodeTracker, Flags
from rltop.health.rules.base import threshold_flags


def _flags(values: np.ndarray) -> Flags:
    on_w, ok_w, on_c, ok_c = threshold_flags(values, 0.5, 0.9, 0.8, "above")
    return Flags(on_w, ok_w, on_c, ok_c, values, values, np.full(len(values), np.nan))


def _run(values: np.ndarray, cuts: list[int], warn=(3, 5), crit=(4, 5), clear=(3, 4)):
    tracker = EpisodeTracker(warn, crit, clear[0], clear[1])
    steps = np.arange(1, len(values) + 1)
    levels, low = [], 0
    for high in [*cuts, len(values)]:
        if high > low:
            levels.append(tracker.feed(steps[low:high], values[low:high], _flags(values[low:high])))
        low = high
    episodes = [
        (e.first_step, e.raised_step, e.end_step, int(e.level), e.worst.step)
        for e in (tracker.past_worst, tracker.last_closed, tracker.current)
        if e is not None
    ]
    # Every closed episode's level, first and last step, and the worst point of all.
    peak = tracker.peak
    return (
        np.concatenate(levels),
        episodes,
        tracker.past_count,
        tracker.critical_closed,
        tracker.closed,
        peak and (peak.step, peak.value, peak.stat, peak.severity),
    )


@pytest.mark.parametrize("seed", range(8))
def test_chunked_feeding_matches_bulk(seed: int) -> None:
    rng = np.random.default_rng(seed)
    # Bursty values: long calm stretches, warn-level and critical-level bursts.
    values = np.clip(
        rng.choice([0.1, 0.6, 0.95], size=300, p=[0.6, 0.25, 0.15]) + rng.normal(0, 0.05, 300), 0, 1
    )
    bulk = _run(values, [])
    # One point at a time (the scalar path), random small chunks, and chunks of 50 (the numpy path).
    random_cuts = sorted(set(rng.integers(1, 300, 40).tolist()))
    for cuts in (list(range(1, 300)), random_cuts, list(range(50, 300, 50))):
        chunked = _run(values, cuts)
        assert np.array_equal(chunked[0], bulk[0])
        assert chunked[1:] == bulk[1:]


def test_levels_follow_m_of_n_and_hysteresis() -> None:
    values = np.array(
        [
            0.6,
            0.1,
            0.1,
            0.1,
            0.6,
            0.1,
            0.1,
            0.6,  # never 3 of 5 beyond 0.5: quiet
            0.6,  # 3 of the last 5 (points 5, 8, 9): warn from point 9
            0.6,
            0.45,
            0.45,
            0.45,  # under 0.5 but not under 0.8 * 0.5: still warn
            0.1,
            0.1,
            0.1,  # three good points in a row: cleared at point 16
            0.1,
        ]
    )
    levels, episodes, count, *_ = _run(values, [])
    assert levels.tolist() == [0] * 8 + [1] * 7 + [0] * 2
    # first beyond-threshold point of the raising window, raised at, last warn point
    assert episodes[0][:3] == (5, 9, 15) and count == 1
