"""The train-inference mismatch rule on each framework's names, with a healthy twin that stays quiet.

vLLM cannot run here, so each run is written with tensorboardX under the names and in the value
ranges each framework's code logs (the sources are cited beside each series):

* TRL 1.16 ``trl/trainer/grpo_trainer.py`` L2860-2896 (``use_vllm`` with
  ``vllm_importance_sampling_correction``): ``sampling/sampling_logp_difference/{mean,max}`` (mean and
  max of |old_logp - vllm_logp| per token) and ``sampling/importance_sampling_ratio/{min,mean,max}``
  (the ratio applied after truncation/masking), logged as ``train/...`` by transformers'
  TensorBoardCallback. Healthy ranges from trl#6789 (mean |Δ| 0.0007 at top_p=1, per-token max
  0.37-0.66 in bf16) and trl#4772 (mean 0.012 on ~100-token completions; sequence ratios ~3.3 masked
  to 0, so the applied mean falls below 1 on a healthy run; trl#5814: 0.4-0.7).
* veRL ``verl/trainer/ppo/rollout_corr_helper.py`` (`compute_offpolicy_metrics`, `compute_is_metrics`)
  and ``verl/utils/debug/metrics.py`` (`calculate_debug_metrics`), tags exactly as veRL's Tracking
  passes them to its TensorBoard logger (no ``train/`` prefix): ``rollout_corr/kl``,
  ``rollout_corr/rollout_is_mean``, ``rollout_corr/rollout_is_std``,
  ``rollout_corr/rollout_is_eff_sample_size``, ``rollout_corr/chi2_token``,
  ``training/rollout_probs_diff_max``; alert levels from veRL's ``docs/algo/rollout_corr.md``
  (`check_rollout_correction_health`, L1024-1062 at b178a3c).
* OpenRLHF ``openrlhf/models/loss.py`` `PolicyLoss` (v0.8.9+, vLLM IS correction on):
  ``vllm_kl`` = masked mean of log π_rollout - log π_old, written as ``train/vllm_kl`` by its
  TensorboardLogger.
"""

from __future__ import annotations

import numpy as np
from helpers.health import first_step_at, judge, replay, rule_findings, write_run

from rltop.health.findings import Level
from rltop.health.rules.mismatch import TrainInferenceMismatch

RULE = TrainInferenceMismatch.name
STEPS = 120


def _noise(seed: int, scale: float, count: int = STEPS) -> np.ndarray:
    return np.random.default_rng(seed).normal(0.0, scale, count)


def _rising_reward(seed: int = 1) -> list[float]:
    return list(np.linspace(0.1, 0.8, STEPS) + _noise(seed, 0.03))


def _grad_norm(seed: int = 2) -> list[float]:
    return list(0.5 + np.abs(_noise(seed, 0.05)))


def _trl_series(gap: np.ndarray) -> dict[str, list[float]]:
    """A TRL GRPO run with vLLM's importance-sampling tags around a per-token gap ``gap``."""
    steps = len(gap)
    ratio_mean = np.clip(0.55 + _noise(3, 0.05, steps), 0.4, 0.7)  # healthy with sequence_mask (trl#5814)
    return {
        "train/sampling/sampling_logp_difference/mean": list(gap),
        "train/sampling/sampling_logp_difference/max": list(np.clip(0.5 + _noise(4, 0.1, steps), 0.37, 0.66)),
        "train/sampling/importance_sampling_ratio/min": [0.0] * steps,  # masked sequences count 0
        "train/sampling/importance_sampling_ratio/mean": list(ratio_mean),
        "train/sampling/importance_sampling_ratio/max": [3.0] * steps,  # the default clip_max
    }


def test_trl_healthy_vllm_run_is_quiet(tmp_path) -> None:
    gap = np.abs(0.002 + _noise(5, 0.001))  # trl#6789: ~0.0007 at top_p=1; trl#4772: ~0.012
    series = {**_trl_series(gap), "train/reward": _rising_reward(), "train/grad_norm": _grad_norm()}
    write_run(tmp_path, "trl", series, {"use_vllm": True, "vllm_importance_sampling_correction": True})
    health = judge(tmp_path)
    assert not rule_findings(health, RULE)
    assert health.level == Level.OK, [f.message for f in health.findings if f.level > Level.OK]


def test_trl_gap_rising_then_grad_spike_then_reward_falling_is_one_finding(tmp_path) -> None:
    # open-instruct#1473's shape: the gap climbs, the gradient norm spikes, then the reward falls.
    gap = np.concatenate([np.full(50, 0.003), np.geomspace(0.003, 2.0, 30), np.full(40, 2.0)])
    reward = np.concatenate([np.linspace(0.1, 0.8, 75), np.linspace(0.8, 0.05, 15), np.full(30, 0.05)])
    grad = np.array(_grad_norm())
    grad[76:80] = [30.0, 45.0, 60.0, 40.0]
    series = {
        **_trl_series(gap),
        "train/reward": list(reward + _noise(6, 0.01)),
        "train/grad_norm": list(grad),
    }
    write_run(tmp_path, "trl", series, {"use_vllm": True})
    changes, health = replay(tmp_path)
    tag = "train/sampling/sampling_logp_difference/mean"
    warned = first_step_at(changes, RULE, tag, Level.WARN)
    assert warned is not None and 60 <= warned <= 75  # past 0.1 (veRL's |kl| alert) at step ~68
    (finding,) = rule_findings(health, RULE)
    assert finding.level == Level.CRITICAL and finding.tag == tag
    assert "veRL's alert level" in finding.message
    assert "then train/grad_norm spiked" in finding.message and "train/reward collapsed" in finding.message
    assert set(finding.also) == {"train/grad_norm", "train/reward"}
    # Folded: no separate spike or reward-collapse finding is left.
    assert not rule_findings(health, "grad_norm_spike") and not rule_findings(health, "reward_collapse")
    # The other sampling tags are shown, never judged (their normal ranges look alarming).
    assert {f.tag for f in health.findings if f.rule == RULE} == {tag}


def _verl_series(kl: np.ndarray, is_mean: np.ndarray, ess: np.ndarray) -> dict[str, list[float]]:
    steps = len(kl)
    return {
        "rollout_corr/kl": list(kl),
        "rollout_corr/k3_kl": list(np.abs(kl) / 2),
        "rollout_corr/rollout_is_mean": list(is_mean),
        "rollout_corr/rollout_is_std": list(np.clip(0.1 + _noise(7, 0.02, steps), 0.01, None)),
        "rollout_corr/rollout_is_eff_sample_size": list(ess),
        "rollout_corr/chi2_token": list(np.clip(0.05 + _noise(8, 0.01, steps), 0.0, None)),
        "training/rollout_probs_diff_max": list(np.clip(0.3 + _noise(9, 0.05, steps), 0.0, 1.0)),
        "training/rollout_probs_diff_mean": list(np.clip(0.002 + _noise(10, 0.0005, steps), 0.0, 1.0)),
        "critic/score/mean": _rising_reward(11)[:steps],
        "actor/grad_norm": _grad_norm(12)[:steps],
    }


def test_verl_healthy_rollout_correction_is_quiet(tmp_path) -> None:
    kl = 0.002 + _noise(13, 0.003)  # signed k1, well inside |kl| < 0.1
    series = _verl_series(kl, 1.0 + _noise(14, 0.01), np.clip(0.9 + _noise(15, 0.02), 0.0, 1.0))
    write_run(tmp_path, "verl", series)
    health = judge(tmp_path)
    assert not rule_findings(health, RULE)
    assert health.level == Level.OK, [f.message for f in health.findings if f.level > Level.OK]


def test_verl_kl_of_ten_at_step_one_is_critical_and_named_by_the_nan_after_it(tmp_path) -> None:
    # The issue's real veRL run: rollout_corr/kl 9.97 at step 1, the loss NaN at step 3.
    steps = 3
    series = _verl_series(np.array([9.97, 8.1, 12.4]), np.array([0.95, 1.0, 1.05]), np.array([0.8, 0.8, 0.8]))
    series["actor/pg_loss"] = [0.01, 0.4, float("nan")]
    series = {tag: values[:steps] for tag, values in series.items()}
    write_run(tmp_path, "verl", series)
    changes, health = replay(tmp_path)
    assert first_step_at(changes, RULE, "rollout_corr/kl", Level.CRITICAL) == 1  # 99.7x the alert
    (mismatch,) = rule_findings(health, RULE)
    assert mismatch.level == Level.CRITICAL and mismatch.first_step == 1
    assert "124× veRL's alert level (|value| above 0.1)" in mismatch.message  # its peak, 12.4 at step 3
    (nan,) = rule_findings(health, "non_finite")
    assert "after the train-inference mismatch of rollout_corr/kl" in nan.message


def test_verl_weights_outside_their_band_and_low_ess_warn(tmp_path) -> None:
    kl = 0.002 + _noise(16, 0.003)
    is_mean = np.where(np.arange(STEPS) >= 60, 0.35, 1.0)  # below 0.5 from step 61
    ess = np.where(np.arange(STEPS) >= 90, 0.2, 0.9)  # below 0.3 from step 91
    write_run(tmp_path, "verl", _verl_series(kl, is_mean, ess))
    changes, health = replay(tmp_path)
    assert first_step_at(changes, RULE, "rollout_corr/rollout_is_mean", Level.WARN) == 63  # 3 of 5
    assert first_step_at(changes, RULE, "rollout_corr/rollout_is_eff_sample_size", Level.WARN) == 93
    assert all(f.level == Level.WARN for f in rule_findings(health, RULE))
    (low,) = rule_findings(health, RULE, "rollout_corr/rollout_is_mean")
    assert "outside [0.5, 2]" in low.message


def test_openrlhf_healthy_vllm_kl_is_quiet(tmp_path) -> None:
    series = {"train/vllm_kl": list(0.001 + _noise(17, 0.002)), "train/reward": _rising_reward(18)}
    write_run(tmp_path, "openrlhf", series)
    health = judge(tmp_path)
    assert not rule_findings(health, RULE) and health.level == Level.OK


def test_openrlhf_vllm_kl_running_away_is_critical(tmp_path) -> None:
    kl = np.concatenate([0.001 + _noise(19, 0.002, 40), np.linspace(0.05, 1.5, 80)])
    write_run(tmp_path, "openrlhf", {"train/vllm_kl": list(kl), "train/reward": _rising_reward(20)})
    changes, health = replay(tmp_path)
    warned = first_step_at(changes, RULE, "train/vllm_kl", Level.WARN)
    critical = first_step_at(changes, RULE, "train/vllm_kl", Level.CRITICAL)
    assert warned is not None and critical is not None and 40 < warned < critical
    (finding,) = rule_findings(health, RULE)
    assert finding.tag == "train/vllm_kl" and finding.level == Level.CRITICAL
