"""The health engine on the real TRL runs copied in tests/fixtures/trl (see its README)."""

from __future__ import annotations

import pytest
from helpers.health import TRL

from rltop.health.engine import RunHealth, assess_store
from rltop.health.findings import Level
from rltop.health.rules import TAG_RULES as RULES
from rltop.ingest.follow.loader import load


@pytest.fixture(scope="module")
def verdicts() -> dict[str, RunHealth]:
    """Every fixture run judged once, keyed by the fixture name (grpo_healthy, ...)."""
    result = load([str(TRL)])
    return {name.split("/")[0]: health for name, health in assess_store(result.store).items()}


def _findings(health: RunHealth, rule: str, tag: str):
    return [f for f in health.findings if f.rule == rule and f.tag == tag]


def _covers(finding, first: int, last: int) -> bool:
    """One of the finding's episodes spans at least steps first..last."""
    return any(low <= first and high >= last for low, high in finding.spans)


def test_grpo_unstable_entropy_collapse_is_critical(verdicts):
    health = verdicts["grpo_unstable"]
    (collapse,) = _findings(health, "entropy_collapse", "train/entropy")
    assert collapse.level == Level.CRITICAL and collapse.active
    assert collapse.value < 1e-3  # 4.58 -> below 1e-3 (exactly 0 at many steps)
    assert health.tag_levels["train/entropy"] == Level.CRITICAL
    assert health.kind == "GRPO" and health.level == Level.CRITICAL


def test_grpo_unstable_zero_std_groups_and_truncation_flagged(verdicts):
    health = verdicts["grpo_unstable"]
    (zero_std,) = _findings(health, "zero_std_groups", "train/frac_reward_zero_std")
    assert zero_std.level == Level.CRITICAL and zero_std.active
    assert zero_std.first_step == 9  # frac_reward_zero_std -> 1.0 from step 9
    (truncation,) = _findings(health, "truncation", "train/completions/clipped_ratio")
    assert truncation.level == Level.CRITICAL and truncation.active and truncation.value == 1.0


def test_grpo_unstable_other_symptoms(verdicts):
    """KL jumps to ~3.6 per token, clipping on steps 2-8, reward locked, gradients vanish."""
    health = verdicts["grpo_unstable"]
    (kl,) = _findings(health, "kl_blowup_token", "train/kl")
    assert kl.level == Level.CRITICAL and kl.active
    (clip,) = _findings(health, "grpo_clip_ratio", "train/clip_ratio/region_mean")
    assert clip.level == Level.CRITICAL and not clip.active  # over by step 11, still latched
    assert clip.first_step == 2 and clip.last_step <= 12
    assert health.tag_levels["train/clip_ratio/region_mean"] == Level.CRITICAL
    assert _findings(health, "reward_stuck", "train/reward")[0].active
    assert _findings(health, "dead_update", "train/grad_norm")[0].level == Level.WARN


def test_ppo_unstable_updates_too_large_during_steps_1_to_13(verdicts):
    health = verdicts["ppo_unstable"]
    for rule, tag in (
        ("ratio_drift", "train/val/ratio"),
        ("clip_fraction", "train/policy/clipfrac_avg"),
        ("approx_kl", "train/policy/approxkl_avg"),
    ):
        episodes = _findings(health, rule, tag)
        assert any(f.level >= Level.WARN and _covers(f, 1, 13) for f in episodes), (rule, episodes)
    # val/ratio up to 1.75 is drift (warn); clipfrac 0.57-0.78 and approx-KL 0.3-1.4 are far past critical.
    assert _findings(health, "ratio_drift", "train/val/ratio")[0].value == pytest.approx(1.749, abs=1e-3)
    assert _findings(health, "clip_fraction", "train/policy/clipfrac_avg")[0].level == Level.CRITICAL


def test_ppo_unstable_entropy_collapse_is_critical(verdicts):
    health = verdicts["ppo_unstable"]
    (collapse,) = _findings(health, "entropy_collapse", "train/policy/entropy_avg")
    assert collapse.level == Level.CRITICAL and collapse.active
    # 4.03 -> 2.28 at step 9 (43 % of the early level lost within 20 points: a fast fall) while the
    # updates are drastic (clip fraction and approx-KL critical): critical from then, before the
    # entropy reaches 0.024 at step 14.
    assert collapse.first_step == 9
    # The summed objective/entropy is not the collapse metric (it also tracks length): not judged.
    assert not [f for f in health.findings if f.tag == "train/objective/entropy"]


def test_ppo_unstable_kl_blowup_and_no_value_loss_spike(verdicts):
    health = verdicts["ppo_unstable"]
    (kl,) = _findings(health, "kl_blowup", "train/objective/kl")
    assert kl.level == Level.CRITICAL and kl.value == pytest.approx(33.79, abs=0.01) and kl.step == 10
    # "loss/value_avg is noisy but never spikes (max 0.36 at step 7, inside the warm-up)".
    assert not _findings(health, "value_loss_spike", "train/loss/value_avg")


def test_grpo_truncated_flagged_for_the_whole_run(verdicts):
    health = verdicts["grpo_truncated"]
    (truncation,) = _findings(health, "truncation", "train/completions/clipped_ratio")
    assert truncation.level == Level.CRITICAL and truncation.active
    # From the first generation step to the last one (1..99), never cleared.
    assert truncation.first_step == 1 and truncation.last_step == 99
    assert "max_completion_length (now 4)" in truncation.advice


def test_healthy_runs_have_no_critical_and_only_explained_warns(verdicts):
    explained = {
        # With max_completion_length 16, a random policy truncates 50-100 % of its completions early
        # on (0.875 at step 1) and still 13-56 % at the end: a real, intended truncation warning.
        ("grpo_healthy", "truncation", "train/completions/clipped_ratio"),
        ("grpo_with_eval", "truncation", "train/completions/clipped_ratio"),
        # The eval set shows the same: 0.86, 0.77, 0.67 at steps 20, 40, 60.
        ("grpo_with_eval", "truncation", "eval/completions/clipped_ratio"),
    }
    for name in ("grpo_healthy", "ppo_healthy", "grpo_with_eval"):
        health = verdicts[name]
        assert all(f.level < Level.CRITICAL for f in health.findings), (name, health.findings)
        assert Level.CRITICAL not in health.tag_levels.values()
        warns = {(name, f.rule, f.tag) for f in health.findings}
        assert warns <= explained, warns - explained
    assert verdicts["ppo_healthy"].findings == [] and verdicts["ppo_healthy"].level == Level.OK


def test_healthy_grpo_clip_ratios_and_kl_are_quiet(verdicts):
    """Clip ratios are exactly 0 (tiny lr), kl grows 0 -> 0.2 per token: neither is flagged."""
    health = verdicts["grpo_healthy"]
    assert health.tag_levels["train/clip_ratio/region_mean"] == Level.OK
    assert health.tag_levels["train/kl"] == Level.OK
    assert health.tag_levels["train/entropy"] == Level.OK


def test_liger_crash_is_an_empty_run_not_an_error(verdicts):
    health = verdicts["grpo_liger_cpu_crash"]
    assert health.empty and health.findings == [] and health.level == Level.OK
    assert health.kind == "GRPO"  # from its logged config, there are no scalar tags


def test_messages_name_metric_value_threshold_step_and_advice(verdicts):
    tag_rules = {rule.name for rule in RULES}
    for health in verdicts.values():
        for finding in health.findings:
            assert finding.tag in finding.message
            assert f"step {finding.step}" in finding.message
            if finding.rule in tag_rules:  # run-level detectors describe a pattern, not a threshold
                words = ("at ≥", "at <", "outside", "exactly", "below")
                assert any(word in finding.message for word in words)
            assert finding.advice and finding.title
    (drift,) = _findings(verdicts["ppo_unstable"], "ratio_drift", "train/val/ratio")
    assert "1.749" in drift.message and "[0.9524, 1.05]" in drift.message
    assert "num_ppo_epochs (now 16)" in drift.advice and "learning rate (now 0.01)" in drift.advice


def test_bands_for_charts(verdicts):
    ppo = verdicts["ppo_unstable"]
    warn_low, warn_high, crit_low, crit_high = ppo.band("train/val/ratio")
    assert warn_high == 1.05 and crit_high == 2.0 and warn_low == pytest.approx(1 / 1.05)
    assert crit_low == 0.5
    assert ppo.band("train/eps") == (None, None, None, None)
    entropy = verdicts["grpo_healthy"].band("train/entropy")
    assert entropy[0] == pytest.approx(0.5 * 4.5815, rel=1e-3)  # half of the early level
