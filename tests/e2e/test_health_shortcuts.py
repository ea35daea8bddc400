"""The health engine's shortcuts (`rltop.health.engine.SHORTCUTS`) give what the plain path gives.

Every fixture run is replayed batch by batch into two live copies, one judged with the shortcuts
and one without; after every batch both verdicts (findings, tag levels, bands, marks) and the time
the stall verdict can next change must be equal. Synthetic runs add what the fixtures lack on the
tags no rule judges: NaN, ±Inf, a non-finite stretch that comes back, a restart, the non-finite
rule switched off.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers.health import FIXTURES

from rltop.health import engine as engine_module
from rltop.health.engine import HealthEngine, RunHealth
from rltop.health.settings import load_rules
from rltop.ingest.follow.loader import load
from rltop.live.judged import JudgedStore
from rltop.model.run import Run, Store

FIXTURE_ROOTS = ["trl", "trl2", "trl3", "trl4", "verl", "seeds"]


def _bits(value: object) -> object:
    """A float by its bits (two NaN objects are never equal), anything else as it is."""
    return np.float64(value).tobytes() if isinstance(value, float) else value


def _verdict(health: RunHealth) -> tuple:
    findings = [
        (f.level, f.rule, f.tag, f.step, _bits(f.value), f.first_step, f.last_step, f.active, f.message)
        + (f.advice,)
        for f in health.findings
    ]
    return findings, health.tag_levels, health.bands, health.marks, health.empty, health.kind


def _live_copy(run: Run) -> Run:
    live = Run(run.name, run.directory)
    live.source_config = run.source_config
    for tag, entries in run.texts.items():
        for entry in entries:
            live.add_text(tag, entry.step, entry.wall_time, entry.text)
    return live


def _replay_both_ways(run: Run, cuts: list[int], monkeypatch, rules=None) -> int:
    """Feed ``run`` in step ranges ending at ``cuts`` to an engine with and one without shortcuts;
    compare after every batch. Returns the number of batches compared."""
    lives = {flag: _live_copy(run) for flag in (True, False)}
    engines = {flag: HealthEngine(rules) for flag in (True, False)}
    now = (run.last_point_wall_time or 0.0) + 1.0
    low, compared = None, 0
    for high in cuts:
        results = {}
        for flag, live in lives.items():
            for tag, series in run.series.items():
                steps = series.steps
                keep = (steps < high) if low is None else (steps >= low) & (steps < high)
                if keep.any():
                    live.add_points(tag, steps[keep], series.wall_times[keep], series.values[keep])
            monkeypatch.setattr(engine_module, "SHORTCUTS", flag)
            health, due = engines[flag].assess_with_stall_due(live, now)
            results[flag] = (_verdict(health), due, _verdict(engines[flag].assess(live)))
        assert results[True] == results[False], (run.name, high)
        low, compared = high, compared + 1
    return compared


@pytest.fixture(scope="module")
def fixture_store() -> Store:
    """Every fixture run, loaded once for both seeds (the replays only read it: they feed copies)."""
    return load([str(FIXTURES / root) for root in FIXTURE_ROOTS]).store


@pytest.mark.parametrize("seed", [0, 1])
def test_shortcuts_equal_the_plain_engine_on_every_fixture(
    monkeypatch, seed: int, fixture_store: Store
) -> None:
    store = fixture_store
    assert len(store.runs) >= 15
    rng = np.random.default_rng(seed)
    compared = 0
    for run in store.runs.values():
        last = run.last_step or 0
        cuts = sorted(set(rng.integers(1, last + 1, size=20).tolist()) | {last + 1}) if last else [1]
        compared += _replay_both_ways(run, cuts, monkeypatch)
    assert compared > 200


def _synthetic(restart: bool) -> Run:
    """Judged tags and unjudged ones with non-finite stretches (one tag restarts when asked)."""
    run = Run("synthetic", "/synthetic")
    rng = np.random.default_rng(7)
    steps = np.arange(1, 201)
    walls = 1.8e9 + 2.0 * steps
    run.add_points("train/reward", steps, walls, 0.5 + 0.01 * rng.standard_normal(200))
    run.add_points("train/kl", steps, walls, np.abs(0.02 + 0.01 * rng.standard_normal(200)))
    for index, bad in enumerate([np.nan, np.inf, -np.inf]):
        values = rng.standard_normal(200)
        values[50 + index : 60 + index] = bad  # a stretch ...
        values[120 + index] = bad  # ... that comes back once
        values[199 - index] = bad  # and at the very end
        run.add_points(f"train/metric_{index}", steps, walls, values)
    run.add_points("train/steady", steps, walls, np.ones(200))
    if restart:  # resumed from step 100: the tag's points from there on are replaced
        again = np.arange(100, 151)
        run.add_points("train/metric_0", again, 1.8e9 + 500 + 2.0 * again, np.full(51, np.nan))
    return run


@pytest.mark.parametrize("restart", [False, True])
@pytest.mark.parametrize("non_finite_on", [True, False])
def test_shortcuts_equal_the_plain_engine_on_non_finite_points(
    monkeypatch, tmp_path, restart: bool, non_finite_on: bool
) -> None:
    rules = None
    if not non_finite_on:
        path = tmp_path / "rules.toml"
        path.write_text("[non_finite]\nenabled = false\n")
        rules = load_rules(str(path))
    run = _synthetic(restart)
    for cuts in ([201], list(range(2, 202)), [50, 51, 60, 61, 120, 121, 122, 197, 198, 199, 200, 201]):
        _replay_both_ways(run, cuts, monkeypatch, rules)


def test_judged_store_gives_the_plain_verdicts_and_stall_times(monkeypatch) -> None:
    """The live consumer's path (`JudgedStore.judge`) both ways, batch after batch."""
    source = load([str(FIXTURES / "trl")]).store
    judged = {}
    for flag in (True, False):
        monkeypatch.setattr(engine_module, "SHORTCUTS", flag)
        store = Store()
        judged[flag] = JudgedStore(store, clock=lambda: 2.0e9)
        for name, run in source.runs.items():
            store.runs[name] = _live_copy(run)
    for high in range(0, 400, 37):
        for flag, consumer in judged.items():
            monkeypatch.setattr(engine_module, "SHORTCUTS", flag)
            for name, run in source.runs.items():
                live = consumer.store.runs[name]
                for tag, series in run.series.items():
                    keep = (series.steps >= high) & (series.steps < high + 37)
                    if keep.any():
                        live.add_points(tag, series.steps[keep], series.wall_times[keep], series.values[keep])
            consumer.judge(set(source.runs))
        on, off = ({n: _verdict(h) for n, h in judged[flag].health.items()} for flag in (True, False))
        assert on == off
        assert judged[True].stale_runs() == judged[False].stale_runs()
