"""Verdicts on real TRL runs the rules were not tuned on (tests/fixtures/trl3, see its README).

Each run is replayed as a live dashboard sees it, one logged step at a time: the level must reach the
right metric at the right step, with the reason a person needs; every healthy run stays without a
critical.
"""

from __future__ import annotations

import pytest
from helpers.health import first_step_at, replay_fixture, rule_findings
from helpers.paths import FIXTURES

from rltop.health.findings import Level

TRL3 = FIXTURES / "trl3"


@pytest.fixture(scope="module")
def slow_collapse():
    return replay_fixture(TRL3 / "grpo_slow_collapse")


def test_a_slow_collapse_is_critical_once_the_completions_converge(slow_collapse) -> None:
    # Entropy flat at 4.58 to step ~150, then 3.2 at 191 (-30 %), 2.25 at 199 (-51 %), 1.64 at 209: the
    # policy converges on 'xxxxxxxxxxxxxxxx' while its reward (x_prefix_reward) keeps rising. The
    # completions say it first: their distinct bigrams fall from 0.99 to 0.40 by step 204.
    changes, health = slow_collapse
    assert first_step_at(changes, "entropy_collapse", "train/entropy", Level.WARN) == 201  # below half
    assert first_step_at(changes, "entropy_collapse", "train/entropy", Level.CRITICAL) == 204  # was 253
    (collapse,) = rule_findings(health, "entropy_collapse")
    assert collapse.level == Level.CRITICAL and collapse.active


def test_the_critical_says_what_the_collapse_did() -> None:
    # Judged when it turned critical (the run cut at step 204): the reason is the completions.
    from rltop.health.engine import HealthEngine
    from rltop.ingest.follow.loader import load

    (run,) = load([str(TRL3 / "grpo_slow_collapse")]).store.runs.values()
    health = HealthEngine().assess(_cut(run, 204))
    (collapse,) = rule_findings(health, "entropy_collapse")
    assert collapse.level == Level.CRITICAL
    assert "critical because of the completions converging by step" in collapse.message
    assert "distinct bigrams 0.99 →" in collapse.message


def test_groups_without_signal_are_not_called_solved_for_a_policy_that_writes_one_string(
    slow_collapse,
) -> None:
    _, health = slow_collapse
    (groups,) = rule_findings(health, "zero_std_groups")
    assert "saturated" not in groups.message and "not solved: the completions converging" in groups.message


def test_a_sparse_rewards_grad_norm_is_not_a_spike_against_its_steps_without_update(slow_collapse) -> None:
    # x_prefix_reward pays nothing for most of the early groups: grad_norm is exactly 0 at 39 of the
    # first 50 steps and 0.2-0.5 at the others. Those zeros are steps that updated nothing, not the
    # gradient's usual size: against their median (the 1e-06 floor) every real gradient was "8.6e+05x".
    changes, _ = slow_collapse
    assert first_step_at(changes, "grad_norm_spike", "train/grad_norm", Level.WARN) is None


def _cut(run, step: int):
    """A copy of ``run`` with only the points up to ``step`` (and its completions index)."""
    from rltop.model.run import Run

    cut = Run(name=run.name, directory=run.directory, texts=run.texts)
    cut.completions = run.completions
    for tag, series in run.series.items():
        points = series.points()
        keep = points.steps <= step
        cut.add_points(tag, points.steps[keep], points.wall_times[keep], points.values[keep])
    return cut


@pytest.fixture(scope="module")
def kl_runaway():
    return replay_fixture(TRL3 / "grpo_kl_runaway_warm")


def test_a_kl_runaway_from_a_warm_start_is_critical(kl_runaway) -> None:
    # A policy that learned to stop (grpo_warm_short) then trained on x_fraction_reward with beta 0.04:
    # kl past 1 (2 of 3 points) at step 87 while the entropy is down to half its early level, past 5 at
    # step 105 (5.61) and 34.9 at its peak (step 177); the entropy falls to 0.7 % of its early level.
    changes, health = kl_runaway
    assert first_step_at(changes, "kl_blowup_token", "train/kl", Level.WARN) == 28  # an isolated 4.57
    assert first_step_at(changes, "kl_blowup_token", "train/kl", Level.CRITICAL) == 87
    assert first_step_at(changes, "entropy_collapse", "train/entropy", Level.CRITICAL) == 105
    (kl,) = rule_findings(health, "kl_blowup_token")
    # The headline is the peak of the climb, not the point that stood out most against its median.
    assert kl.level == Level.CRITICAL and (kl.step, kl.value) == (177, pytest.approx(34.9, abs=0.01))
    assert kl.message.startswith("train/kl reached 34.9 at step 177")
    assert "critical on its own: 34.9 at step 177 is past 5" in kl.message
    (entropy,) = rule_findings(health, "entropy_collapse")
    assert entropy.level == Level.CRITICAL


HEALTHY = [
    "grpo_warm_short",
    "grpo_healthy_default",
    "grpo_healthy_rloo",
    "grpo_healthy_scale_batch",
    "grpo_healthy_dr_grpo",
    "grpo_healthy_cosine",
    "ppo_healthy_minibatch",
]


@pytest.mark.parametrize("name", HEALTHY)
def test_healthy_runs_have_no_critical(name: str) -> None:
    _, health = replay_fixture(TRL3 / name)
    assert [f for f in health.findings if f.level == Level.CRITICAL] == []


def test_a_blow_up_in_the_first_steps_is_critical_before_the_nan() -> None:
    # lr 0.5: entropy 4.58 -> 1.33 -> 0.24 at steps 2-3, clip_ratio/region_mean 0.54 at step 2, kl 3.49
    # at step 3; grad_norm NaN at step 6, then the run dies. There is no baseline to wait for: the early
    # level is the first point's, and a clip ratio of 0.54 is beyond any healthy run on its own.
    changes, health = replay_fixture(TRL3 / "grpo_early_blowup")
    assert first_step_at(changes, "grpo_clip_ratio", "train/clip_ratio/region_mean", Level.CRITICAL) == 2
    assert first_step_at(changes, "kl_blowup_token", "train/kl", Level.CRITICAL) == 3
    assert first_step_at(changes, "entropy_collapse", "train/entropy", Level.CRITICAL) == 4
    assert first_step_at(changes, "non_finite", "train/grad_norm", Level.CRITICAL) == 6
    (kl,) = rule_findings(health, "kl_blowup_token")
    assert "no other metric shows damage" not in kl.message
    (clip,) = rule_findings(health, "grpo_clip_ratio")
    assert "a single point at ≥ 0.5 is critical on its own" in clip.message
    (nan,) = rule_findings(health, "non_finite")
    assert "NaN from step 6" in nan.message and "after the " in nan.message


def test_a_sacrificed_reward_function_is_critical() -> None:
    # Weights 1 (distinct_reward) and 2 (x_fraction_reward): the total climbs 0.89 -> 2.03 while
    # distinct_reward falls from 0.87 to 0.09; below half of its early level (0.43) from step ~120.
    changes, health = replay_fixture(TRL3 / "grpo_reward_tradeoff")
    tag = "train/rewards/distinct_reward/mean"
    leader = "train/rewards/x_fraction_reward/mean"
    assert first_step_at(changes, "reward_dominance", leader, Level.WARN) == 92  # a trade begins
    assert first_step_at(changes, "reward_sacrificed", tag, Level.CRITICAL) == 126
    (sacrificed,) = rule_findings(health, "reward_sacrificed")
    assert sacrificed.tag == tag and "the policy sacrifices distinct_reward" in sacrificed.message
    assert "train/reward rose" in sacrificed.message
    assert rule_findings(health, "reward_dominance") == []  # the critical finding says it, once
    (entropy,) = rule_findings(health, "entropy_collapse")
    assert "a reward function sacrificed (distinct_reward" in entropy.message


def test_a_value_head_that_blows_up_in_its_first_steps_is_critical_before_the_nan() -> None:
    # PPO (TRL 1.12), plain SGD at lr 0.065: value loss 0.26, 0.83, 44, 3.35e5 at steps 1-4, NaN at 5,
    # five more tags NaN at 6, then the run dies. No baseline of normal points can exist that early:
    # a point 1000x the median of the points before it is critical on its own.
    changes, health = replay_fixture(TRL3 / "ppo_value_spike_nan")
    assert first_step_at(changes, "value_loss_spike", "train/loss/value_avg", Level.CRITICAL) == 4
    assert first_step_at(changes, "non_finite", "train/loss/value_avg", Level.CRITICAL) == 5
    (spike,) = rule_findings(health, "value_loss_spike")
    assert "spiked to 3.348e+05 at step 4" in spike.message
    assert "critical on its own at ≥ 1000×" in spike.message
    (nan,) = rule_findings(health, "non_finite")
    assert nan.message.startswith("train/loss/value_avg is NaN from step 5, the run's first non-finite value")
    assert "5 more tags from step 6" in nan.message
    assert "after the value-loss spike of train/loss/value_avg (from step 4" in nan.message
    order = [f.rule for f in health.findings if f.level == Level.CRITICAL]
    assert order.index("value_loss_spike") < order.index("non_finite")  # the cause before the NaN


def test_a_slow_start_of_the_value_head_is_no_spike() -> None:
    # ppo_healthy_minibatch's value loss moves 0.35 -> 0.1 in its first steps: nothing near 1000x.
    _, health = replay_fixture(TRL3 / "ppo_healthy_minibatch")
    assert rule_findings(health, "value_loss_spike") == []
