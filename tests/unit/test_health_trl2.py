"""Verdicts on the second set of real TRL runs (tests/fixtures/trl2, see its README): runs rltop was
never tuned on must get no false critical, and their faults the right level at the right steps."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.health import TRL, rule_findings
from helpers.paths import FIXTURES

from rltop.health.engine import HealthEngine, RunHealth
from rltop.health.findings import Level, Stage
from rltop.ingest.follow.loader import load

TRL2 = FIXTURES / "trl2"
# One hour after the newest point of any fixture: every run that did not finish has stalled.
LATER = 3600.0
HEALTHY = ("grpo_long_healthy", "rloo_healthy", "grpo_resumed", "grpo_resumed_model_only")
# Detectors that may speak on a healthy run, and only as notes: the 2000-step run has finished
# learning (flat at its best since step ~900, its groups solved).
EXPLAINED_NOTES = {
    ("grpo_long_healthy", "reward_plateau"),
    ("grpo_long_healthy", "zero_std_groups"),
}
# Warnings a healthy run may carry, with the reason.
EXPLAINED_WARNS = {
    # A random policy truncates most 16-token completions early on (as in ../trl's healthy runs).
    ("grpo_long_healthy", "truncation"),
    ("rloo_healthy", "truncation"),
    ("grpo_resumed", "truncation"),
    ("grpo_resumed_model_only", "truncation"),
    # kl climbs to 2.2 per token (beta 0.04) while the reward goes 0.15 -> 1.9: far from the
    # reference, and learning. A warning, never critical.
    ("grpo_long_healthy", "kl_blowup_token"),
}


def _judge(name: str, now_offset: float | None = None) -> RunHealth:
    (run,) = load([str(TRL2 / name)]).store.runs.values()
    now = None if now_offset is None else (run.last_point_wall_time or 0.0) + now_offset
    return HealthEngine().assess(run, now=now)


@pytest.fixture(scope="module")
def verdicts() -> dict[str, RunHealth]:
    return {name: _judge(name) for name in (p.name for p in TRL2.iterdir() if p.is_dir())}


@pytest.mark.parametrize("name", HEALTHY)
def test_healthy_runs_have_no_critical(verdicts, name: str) -> None:
    health = verdicts[name]
    assert health.level < Level.CRITICAL, [f.message for f in health.findings]
    for finding in health.findings:
        key = (name, finding.rule)
        assert key in (EXPLAINED_NOTES if finding.is_note else EXPLAINED_WARNS), finding.message


def test_healthy_runs_of_the_first_set_stay_quiet_too() -> None:
    """No detector raises anything on ../trl's healthy runs (notes included)."""
    store = load([str(TRL / name) for name in ("grpo_healthy", "ppo_healthy", "grpo_with_eval")]).store
    engine = HealthEngine()
    for run in store.runs.values():
        health = engine.assess(run)
        assert not [f for f in health.findings if f.is_note or f.rule.startswith("reward_")], health.findings
        assert health.level < Level.CRITICAL


def test_slowly_rising_kl_with_rising_reward_is_a_warning(verdicts) -> None:
    (kl,) = rule_findings(verdicts["grpo_long_healthy"], "kl_blowup_token")
    assert kl.level == Level.WARN and kl.value == pytest.approx(2.185, abs=1e-3) and kl.step == 1919
    assert "not critical" in kl.message and "the reward rose" in kl.message


def test_saturated_groups_are_a_note_and_the_plateau_says_since_when(verdicts) -> None:
    health = verdicts["grpo_long_healthy"]
    (groups,) = rule_findings(health, "zero_std_groups")
    assert groups.is_note and "saturated" in groups.message
    (plateau,) = rule_findings(health, "reward_plateau")
    assert plateau.is_note and "finished learning" in plateau.message
    assert 700 <= plateau.first_step <= 1200  # flat from about step 900 on (see the README)
    assert health.level == Level.WARN  # the KL warning; notes never raise the level


def test_rloo_is_its_own_kind_and_its_k1_kl_may_dip(verdicts) -> None:
    health = verdicts["rloo_healthy"]
    assert health.kind == "RLOO"
    assert rule_findings(health, "negative_kl") == []
    run = load([str(TRL2 / "rloo_healthy")]).store.runs
    (series,) = [r.series["train/kl"] for r in run.values()]
    assert series.values.min() < -0.01  # the dips are there; they are normal for k1


def test_value_loss_spikes_after_a_high_warm_up_are_critical(verdicts) -> None:
    health = verdicts["ppo_value_spike"]
    (spike,) = rule_findings(health, "value_loss_spike", "train/loss/value_avg")
    assert spike.level == Level.CRITICAL and spike.episodes == 4
    assert spike.step == 32 and spike.value == pytest.approx(3.302, abs=1e-3)  # the peak: 58x usual
    assert [low for low, _ in spike.spans] == [32, 78, 83, 99]  # 83-84: 6.5× and 5×, a warn
    assert "58.08×" in spike.message and "earlier spikes left out" in spike.message
    assert health.marks["train/loss/value_avg"] == Level.CRITICAL


def test_the_blow_up_then_the_nan_come_first_and_the_stall_names_it() -> None:
    health = _judge("grpo_nan_crash", LATER)
    # The KL ran away from step 2 and was still critical when grad_norm went NaN at step 14: the
    # blow-up leads, the NaN follows it and names it as its likely cause.
    blow_up, nan = health.findings[:2]
    assert (blow_up.rule, blow_up.tag) == ("kl_blowup_token", "train/kl")
    assert nan.rule == "non_finite" and nan.tag == "train/grad_norm"
    assert "NaN from step 14" in nan.message
    assert "after the KL blow-up of train/kl (from step 2" in nan.message
    (stall,) = rule_findings(health, "stall")
    assert stall.stage == Stage.CONSEQUENCE
    assert "stopped after NaN at step 14 (train/grad_norm); last step 14 of 200" in stall.message
    order = [f.rule for f in health.findings if f.level == Level.CRITICAL and f.active]
    assert order.index("non_finite") < order.index("entropy_collapse") < order.index("stall")


def test_a_killed_run_says_how_far_it_got() -> None:
    health = _judge("grpo_killed", LATER)
    (stall,) = rule_findings(health, "stall")
    assert stall.level == Level.CRITICAL and "stopped at step 135 of 400" in stall.message


def test_finished_resumed_run_is_not_stalled() -> None:
    health = _judge("grpo_resumed", LATER)
    assert rule_findings(health, "stall") == []


@pytest.mark.parametrize("name", ["grpo_long_healthy", "ppo_value_spike", "rloo_healthy", "grpo_nan_crash"])
def test_live_batches_give_the_one_shot_verdict(name: str) -> None:
    """Fed in 30 live batches, the engine ends with exactly the verdict of a one-shot load."""
    from rltop.model.run import Run

    (run,) = load([str(TRL2 / name)]).store.runs.values()
    bulk = HealthEngine().assess(run)
    live, engine = Run(run.name, run.directory), HealthEngine()
    for tag, entries in run.texts.items():
        for entry in entries:
            live.add_text(tag, entry.step, entry.wall_time, entry.text)
    cuts = np.unique(np.linspace(1, (run.last_step or 1) + 1, 30).astype(int))
    for low, high in zip(cuts[:-1], cuts[1:]):
        for tag, series in run.series.items():
            keep = (series.steps >= low) & (series.steps < high)
            if keep.any():
                live.add_points(tag, series.steps[keep], series.wall_times[keep], series.values[keep])
        health = engine.assess(live)
    assert [(f.level, f.rule, f.tag, f.step, repr(f.value), f.message) for f in health.findings] == [
        (f.level, f.rule, f.tag, f.step, repr(f.value), f.message) for f in bulk.findings
    ]
    assert health.tag_levels == bulk.tag_levels and health.marks == bulk.marks
