"""Engine mechanics: incremental re-judging, restarts, config changes, latching, stall, empty runs."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers.health import GAP_S, TRL, WALL_START, load_run, write_run

from rltop.health.engine import HealthEngine, assess_store
from rltop.health.findings import Level
from rltop.health.rules import levels as level_rules
from rltop.ingest.follow.loader import load
from rltop.model.run import Run


@pytest.fixture(scope="module")
def fixture_store():
    return load([str(TRL)]).store


def _key(health):
    return [
        (f.level, f.rule, f.tag, f.step, f.value, f.first_step, f.last_step, f.active, f.message)
        for f in health.findings
    ]


def _replay(run: Run, cuts: list[int]) -> tuple[Run, list[tuple[int, int]]]:
    """A copy of ``run`` that receives its points in step ranges ending at ``cuts`` (live tail)."""
    live = Run(run.name, run.directory)
    for tag, entries in run.texts.items():
        for entry in entries:
            live.add_text(tag, entry.step, entry.wall_time, entry.text)
    ranges, low = [], 0
    for high in cuts:
        ranges.append((low, high))
        low = high
    return live, ranges


@pytest.mark.parametrize("seed", [0, 1])
def test_incremental_equals_bulk_on_every_fixture(fixture_store, seed: int) -> None:
    bulk = assess_store(fixture_store)
    rng = np.random.default_rng(seed)
    for name, run in fixture_store.runs.items():
        last = run.last_step or 0
        cuts = sorted(set(rng.integers(1, last + 1, size=25).tolist()) | {last + 1}) if last else [1]
        live, ranges = _replay(run, cuts)
        engine = HealthEngine()
        for low, high in ranges:
            for tag, series in run.series.items():
                keep = (series.steps >= low) & (series.steps < high)
                if keep.any():
                    live.add_points(tag, series.steps[keep], series.wall_times[keep], series.values[keep])
            health = engine.assess(live)
        assert _key(health) == _key(bulk[name]), name
        assert health.tag_levels == bulk[name].tag_levels


def test_only_changed_tags_are_rejudged(fixture_store, monkeypatch) -> None:
    run = fixture_store.runs[next(name for name in fixture_store.runs if name.startswith("ppo_unstable"))]
    engine = HealthEngine()
    first = engine.assess(run)
    calls: list[int] = []
    original = level_rules.LevelRule.flags

    def counting(self, values, start, *args):
        calls.append(len(values) - start)
        return original(self, values, start, *args)

    monkeypatch.setattr(level_rules.LevelRule, "flags", counting)
    assert _key(engine.assess(run)) == _key(first) and calls == []  # nothing new, nothing judged
    run.add_points("train/policy/clipfrac_avg", np.array([151]), np.array([2e9]), np.array([0.0]))
    engine.assess(run)
    assert calls == [1]  # one rule on one tag, one new point


def test_restart_purges_and_rejudges(tmp_path) -> None:
    values = np.ones(40)
    values[30] = np.nan
    write_run(tmp_path, "run", {"train/loss": values})
    run = load_run(tmp_path, "run")
    engine = HealthEngine()
    assert engine.assess(run).level == Level.CRITICAL
    # The trainer resumed from step 25: TensorBoard-style purge drops steps >= 25, NaN included.
    run.add_points("train/loss", np.arange(25, 41), WALL_START + 1000 + np.arange(16), np.ones(16))
    health = engine.assess(run)
    assert health.findings == [] and health.level == Level.OK


def test_new_config_recalibrates(tmp_path) -> None:
    steps = np.arange(1, 41)
    clipped = {"train/clip_ratio/region_mean": np.where(steps % 2 == 0, 0.3, 0.0)}
    write_run(tmp_path, "run", clipped, {"num_iterations": 2, "logging_steps": 1})
    run = load_run(tmp_path, "run")
    engine = HealthEngine()
    assert engine.assess(run).level == Level.CRITICAL
    run.add_text("args/text_summary", 0, WALL_START + 500, json.dumps({"num_iterations": 1}))
    assert engine.assess(run).findings == []  # always on-policy now: clip ratios are not judged


def test_replaced_run_object_starts_over(tmp_path) -> None:
    write_run(tmp_path, "run", {"train/loss": [1.0, float("nan"), 1.0]})
    engine = HealthEngine()
    assert engine.assess(load_run(tmp_path, "run")).level == Level.CRITICAL
    fresh = Run("run", str(tmp_path / "run"))
    fresh.add_points("train/loss", np.array([1]), np.array([WALL_START]), np.array([1.0]))
    assert engine.assess(fresh).findings == []


def test_latched_critical_and_acknowledge(fixture_store) -> None:
    name = next(name for name in fixture_store.runs if name.startswith("ppo_unstable"))
    engine = HealthEngine()
    health = engine.assess(fixture_store.runs[name])
    assert health.tag_levels["train/objective/kl"] == Level.CRITICAL  # blow-up over by step 13: latched
    engine.acknowledge(name, "train/objective/kl")
    health = engine.assess(fixture_store.runs[name])
    assert health.tag_levels["train/objective/kl"] == Level.OK
    assert health.tag_levels["train/policy/entropy_avg"] == Level.CRITICAL  # still collapsed: active
    kl = [f for f in health.findings if f.tag == "train/objective/kl"]
    assert kl and not any(f.active for f in kl)  # the history stays readable


def test_stall_uses_now_and_the_usual_gap(tmp_path) -> None:
    write_run(tmp_path, "run", {"train/loss": np.ones(30)})
    run = load_run(tmp_path, "run")
    newest = WALL_START + GAP_S * 30
    assert run.last_point_wall_time == newest
    engine = HealthEngine()
    assert not [f for f in engine.assess(run, now=newest + 60).findings if f.rule == "stall"]
    assert engine.assess(run).level == Level.OK  # now=None: staleness is not judged (archived logs)
    (warn,) = [f for f in engine.assess(run, now=newest + 300).findings if f.rule == "stall"]
    assert warn.level == Level.WARN and warn.tag == "" and warn.step == 30
    assert "no new point for 5 min" in warn.message and "usual gap 2 s" in warn.message
    (critical,) = [f for f in engine.assess(run, now=newest + 3600).findings if f.rule == "stall"]
    assert critical.level == Level.CRITICAL and engine.assess(run, now=newest + 3600).level == Level.CRITICAL
    # A trainer clock ahead of ours: fall back to the local time of the last file change.
    run.last_change_time = newest - 7200
    (skewed,) = [f for f in engine.assess(run, now=newest - 3600).findings if f.rule == "stall"]
    assert skewed.level == Level.CRITICAL and "files last changed 1 h ago" in skewed.message


def test_finished_runs_never_stall(fixture_store, tmp_path) -> None:
    verdicts = assess_store(fixture_store, now=4e9)  # decades after the fixtures were written
    for name, health in verdicts.items():
        # GRPO runs logged train_runtime; PPO runs reached num_total_batches (150) from their args.
        assert not [f for f in health.findings if f.rule == "stall"], name
    # The same PPO run cut short at step 100 (it crashed) is stalled.
    config = {"num_total_batches": 150, "logging_steps": 1}
    write_run(tmp_path, "ppo", {"train/val/ratio": np.ones(100)}, config)
    run = load_run(tmp_path, "ppo")
    (stall,) = [f for f in HealthEngine().assess(run, now=4e9).findings if f.rule == "stall"]
    assert stall.level == Level.CRITICAL and "last at step 100" in stall.message
    # Logging every 8 steps, the last point of a 150-step run is at step 144: finished.
    write_run(
        tmp_path,
        "sparse",
        {"train/val/ratio": {step: 1.0 for step in range(8, 150, 8)}},
        {"num_total_batches": 150, "logging_steps": 8},
    )
    assert HealthEngine().assess(load_run(tmp_path, "sparse"), now=4e9).findings == []


def test_empty_and_all_nan_runs() -> None:
    engine = HealthEngine()
    empty = Run("empty", "/nowhere")
    empty.add_text("args/text_summary", 0, WALL_START, json.dumps({"num_ppo_epochs": 4}))
    health = engine.assess(empty, now=WALL_START + 1e6)
    assert health.empty and health.level == Level.OK and health.findings == [] and health.kind == "PPO"
    nan = Run("nan", "/nowhere")
    nan.add_points("train/val/ratio", np.arange(1, 6), WALL_START + np.arange(5), np.full(5, np.nan))
    health = engine.assess(nan)
    (finding,) = health.findings
    assert finding.rule == "non_finite" and finding.active
    assert "NaN from step 1 (5 non-finite points, the last at step 5" in finding.message


def test_band_of_relative_rule_follows_the_median(fixture_store) -> None:
    name = next(name for name in fixture_store.runs if name.startswith("ppo_healthy"))
    health = HealthEngine().assess(fixture_store.runs[name])
    _, warn_high, _, crit_high = health.band("train/loss/value_avg")
    assert warn_high is not None and crit_high == pytest.approx(4 * warn_high)  # 20x vs 5x the median
    low, high, crit_low, crit_high = health.band("train/objective/kl")
    assert (low, crit_low, crit_high) == (0.0, -1.0, 20.0) and high <= 12.0
