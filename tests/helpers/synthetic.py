"""Shared by the tests: what test_health_synthetic.py used to define for itself and others."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rltop.health.findings import Level


def noisy(base: float, scale: float, count: int, seed: int = 0) -> np.ndarray:
    """``count`` points around ``base`` with relative noise ``scale`` (deterministic)."""
    rng = np.random.default_rng(seed)
    return base * (1 + scale * rng.standard_normal(count))


def with_segment(values: np.ndarray, start: int, stop: int, value: float) -> np.ndarray:
    """A copy with points start..stop-1 (0-based) set to ``value``."""
    out = values.copy()
    out[start:stop] = value
    return out


@dataclass
class Case:
    """A rule, the tag it judges, a faulty series, its healthy twin and what must happen."""

    id: str
    rule: str
    key: str
    bad: np.ndarray
    good: np.ndarray
    level: Level
    first_step: int
    clears: bool = True  # the fault ends inside the series: the episode must be over at the end
    config: dict = field(default_factory=dict)
    # Other metrics of the same run (in both twins): the evidence some rules need for critical.
    extra: dict = field(default_factory=dict)


def _cases() -> list[Case]:
    ratio = 1 + 0.002 * np.random.default_rng(1).standard_normal(60)
    small = noisy(0.001, 0.2, 60, 2)
    value_loss = noisy(0.2, 0.1, 80, 3)
    grad = noisy(1.0, 0.05, 80, 4)
    entropy = noisy(2.0, 0.005, 60, 5)
    kl_seq = noisy(2.0, 0.1, 80, 6)
    ramp = np.concatenate((np.linspace(0.0, 1.0, 60), np.ones(40)))
    ramp = ramp + 0.05 * np.random.default_rng(7).standard_normal(100)
    k1 = 0.3 + 0.25 * np.random.default_rng(8).standard_normal(60)
    return [
        Case(
            "ratio-warn",
            "ratio_drift",
            "val/ratio",
            with_segment(ratio, 20, 30, 1.15),
            with_segment(ratio, 25, 26, 1.3),
            Level.WARN,
            21,
        ),
        Case(
            "ratio-critical",
            "ratio_drift",
            "val/ratio",
            with_segment(ratio, 20, 26, 2.5),
            with_segment(ratio, 25, 26, 0.8),
            Level.CRITICAL,
            21,
        ),
        Case(
            "approx-kl",
            "approx_kl",
            "policy/approxkl_avg",
            with_segment(small, 20, 30, 0.03),
            with_segment(small, 25, 26, 0.05),
            Level.WARN,
            21,
        ),
        Case(
            "approx-kl-critical",
            "approx_kl",
            "policy/approxkl_avg",
            with_segment(small, 20, 30, 0.2),
            small,
            Level.CRITICAL,
            21,
        ),
        Case(
            "clipfrac",
            "clip_fraction",
            "policy/clipfrac_avg",
            with_segment(np.zeros(60), 20, 30, 0.1),
            with_segment(np.zeros(60), 25, 26, 0.1),
            Level.WARN,
            21,
        ),
        Case(
            "value-clipfrac",
            "value_clip_fraction",
            "val/clipfrac_avg",
            with_segment(small * 100, 20, 35, 0.7),
            with_segment(small * 100, 25, 28, 0.7),
            Level.WARN,
            21,
        ),
        Case(
            "truncation-warn",
            "truncation",
            "completions/clipped_ratio",
            with_segment(np.full(60, 0.05), 20, 30, 0.4),
            with_segment(np.full(60, 0.05), 25, 26, 0.6),
            Level.WARN,
            21,
        ),
        Case(
            "truncation-critical",
            "truncation",
            "completions/clipped_ratio",
            with_segment(np.full(60, 0.05), 20, 30, 1.0),
            np.full(60, 0.05),
            Level.CRITICAL,
            21,
            config={"max_completion_length": 64},
        ),
        Case(
            "zero-std-warn",
            "zero_std_groups",
            "frac_reward_zero_std",
            with_segment(np.full(60, 0.1), 20, 30, 0.6),
            with_segment(np.full(60, 0.1), 25, 26, 0.75),
            Level.WARN,
            21,
        ),
        Case(
            "zero-std-critical",
            "zero_std_groups",
            "frac_reward_zero_std",
            with_segment(np.full(60, 0.1), 20, 30, 1.0),
            np.full(60, 0.1),
            Level.CRITICAL,
            21,
        ),
        # Below half of the early level while the reward rises: a policy spending entropy to learn.
        Case(
            "entropy-warn",
            "entropy_collapse",
            "entropy",
            with_segment(entropy, 20, 35, 0.9),
            np.linspace(2.0, 1.5, 60),
            Level.WARN,
            21,
            extra={"reward": np.linspace(0.0, 1.0, 60)},
        ),
        # A fall to a fifth of it in one step with the reward flat: nothing says the policy learns.
        Case(
            "entropy-fast",
            "entropy_collapse",
            "entropy",
            with_segment(entropy, 20, 35, 0.4),
            np.linspace(2.0, 1.5, 60),
            Level.CRITICAL,
            21,
            extra={"reward": np.full(60, 0.3)},
        ),
        Case(
            "entropy-critical",
            "entropy_collapse",
            "entropy",
            with_segment(entropy, 20, 60, 0.02),
            with_segment(entropy, 30, 31, 0.1),
            Level.CRITICAL,
            21,
            clears=False,
        ),
        Case(
            "entropy-ppo",
            "entropy_collapse",
            "policy/entropy_avg",
            with_segment(entropy, 20, 60, 0.001),
            entropy,
            Level.CRITICAL,
            21,
            clears=False,
        ),
        Case(
            "value-loss-warn",
            "value_loss_spike",
            "loss/value_avg",
            with_segment(value_loss, 40, 43, 2.0),
            with_segment(with_segment(value_loss, 40, 41, 2.0), 4, 5, 5.0),
            Level.WARN,
            41,
        ),
        Case(
            "value-loss-critical",
            "value_loss_spike",
            "loss/value_avg",
            with_segment(value_loss, 40, 43, 6.0),
            value_loss,
            Level.CRITICAL,
            41,
        ),
        Case(
            "grad-norm-spike",
            "grad_norm_spike",
            "grad_norm",
            with_segment(grad, 40, 43, 15.0),
            with_segment(grad, 40, 41, 15.0),
            Level.WARN,
            41,
        ),
        Case(
            "kl-absolute",
            "kl_blowup",
            "objective/kl",
            with_segment(kl_seq, 30, 40, 14.0),
            with_segment(kl_seq, 35, 36, 14.0),
            Level.WARN,
            31,
        ),
        # A KL past its critical cap is critical only with evidence of damage (here the entropy
        # collapsing during it); alone it is a warning.
        Case(
            "kl-critical",
            "kl_blowup",
            "objective/kl",
            with_segment(kl_seq, 30, 40, 25.0),
            kl_seq,
            Level.CRITICAL,
            31,
            extra={"policy/entropy_avg": with_segment(noisy(2.0, 0.005, 80, 9), 32, 80, 0.001)},
        ),
        # Past the critical level while the reward rises and the entropy holds: a policy that moved far.
        Case(
            "kl-critical-learning",
            "kl_blowup",
            "objective/kl",
            with_segment(kl_seq, 30, 40, 25.0),
            kl_seq,
            Level.WARN,
            31,
            extra={
                "objective/rlhf_reward": np.linspace(0.0, 1.0, 80),
                "policy/entropy_avg": noisy(2.0, 0.005, 80, 9),
            },
        ),
        # ... and with nothing else logged: missing evidence is not evidence of health.
        Case(
            "kl-critical-alone",
            "kl_blowup",
            "objective/kl",
            with_segment(kl_seq, 30, 40, 25.0),
            kl_seq,
            Level.CRITICAL,
            31,
        ),
        Case(
            "kl-extreme",
            "kl_blowup",
            "objective/kl",
            with_segment(kl_seq, 30, 40, 90.0),
            kl_seq,
            Level.CRITICAL,
            31,
            extra={
                "objective/rlhf_reward": np.linspace(0.0, 1.0, 80),
                "policy/entropy_avg": noisy(2.0, 0.005, 80, 9),
            },
        ),
        Case(
            "kl-relative",
            "kl_blowup",
            "objective/kl",
            with_segment(kl_seq * 0.25, 60, 70, 3.0),
            np.linspace(0.0, 3.0, 80),
            Level.WARN,
            61,
        ),
        Case(
            "kl-token",
            "kl_blowup_token",
            "kl",
            with_segment(small * 50, 30, 40, 0.7),
            small * 50,
            Level.WARN,
            31,
            config={"beta": 0.04},
        ),
        Case(
            "kl-token-critical",
            "kl_blowup_token",
            "kl",
            with_segment(small * 50, 30, 40, 1.5),
            with_segment(small * 50, 35, 36, 0.7),
            Level.CRITICAL,
            31,
            config={"beta": 0.04},
            extra={"reward": np.concatenate((np.linspace(0.0, 1.0, 30), np.full(30, -0.5)))},
        ),
        Case(
            "kl-token-critical-rising-reward",
            "kl_blowup_token",
            "kl",
            with_segment(small * 50, 30, 40, 1.5),
            with_segment(small * 50, 35, 36, 0.7),
            Level.WARN,
            31,
            config={"beta": 0.04},
            extra={"reward": np.linspace(0.0, 1.0, 60)},
        ),
        # Judged on the median of the last 10 points: below 0 once 5 of them are negative (step 25).
        Case(
            "negative-kl-ppo",
            "negative_kl",
            "objective/kl",
            with_segment(k1, 20, 40, -0.3),
            k1,
            Level.WARN,
            25,
        ),
        Case(
            "negative-kl-ppo-critical",
            "negative_kl",
            "objective/kl",
            with_segment(k1, 30, 33, -2.0),
            with_segment(k1, 30, 31, -0.9),
            Level.CRITICAL,
            31,
        ),
        Case(
            "negative-kl-grpo",
            "negative_kl",
            "kl",
            with_segment(small * 50, 30, 32, -0.01),
            small * 50,
            Level.CRITICAL,
            31,
        ),
        Case(
            "dead-update",
            "dead_update",
            "grad_norm",
            with_segment(grad, 30, 34, 0.0),
            with_segment(grad, 30, 31, 1e-3),
            Level.CRITICAL,
            31,
        ),
        Case(
            "vanishing-gradient",
            "dead_update",
            "grad_norm",
            with_segment(grad, 30, 40, 1e-8),
            with_segment(grad, 30, 32, 1e-8),
            Level.WARN,
            31,
        ),
        # The reward is judged on the median of its last 10 points: it turns once half of them fell.
        Case(
            "reward-collapse",
            "reward_collapse",
            "reward",
            with_segment(ramp, 70, 100, 0.0),
            ramp,
            Level.CRITICAL,
            75,
            clears=False,
        ),
        Case(
            "reward-falls-back",
            "reward_collapse",
            "reward",
            with_segment(ramp, 70, 100, 0.45),
            ramp,
            Level.WARN,
            76,
            clears=False,
        ),
        # Stuck = 10 identical points: the 10th (step 40) raises it.
        Case(
            "reward-stuck",
            "reward_stuck",
            "reward",
            with_segment(ramp, 30, 45, 0.25),
            with_segment(ramp, 30, 35, 0.25),
            Level.WARN,
            40,
        ),
        Case(
            "non-finite", "non_finite", "loss", with_segment(grad, 30, 31, np.nan), grad, Level.CRITICAL, 31
        ),
    ]


CASES = _cases()
