"""Every health threshold rltop ships with, in one place, plus what each rule watches (for docs).

A rules file (``~/.config/rltop/rules.toml``, ``--rules FILE``) overrides any of these values; its
tables and keys are exactly the names below (see `rltop.health.rules`). Research and sources behind
the numbers: ``docs/health-rules.md`` of the project notes; "(calibrated)" marks values we chose on
the real TRL runs in ``tests/fixtures/trl`` where the research had no number or a number that flags
healthy runs.

Common keys of every rule:

* ``enabled`` -- false switches the rule off.
* ``warn`` / ``critical`` -- thresholds (``false`` in a rules file disables that level).
* ``persistence`` -- ``[m, n]``: a level is entered when m of the last n points are beyond it.
  ``critical_persistence`` may differ (defaults to ``persistence``). One point beyond the critical
  threshold is enough for warn (``general.single_point_warn``).
* ``clear_fraction`` / ``clear_points`` -- hysteresis: a level clears only after ``clear_points``
  points in a row (default m) are back within ``clear_fraction`` of its threshold (default 0.8).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Keys every threshold rule understands (added to each rule's own defaults below).
COMMON: dict[str, Any] = {
    "enabled": True,
    "persistence": (3, 5),
    "critical_persistence": None,
    "clear_fraction": None,
    "clear_points": None,
}

GENERAL: dict[str, Any] = {
    "clear_fraction": 0.8,
    "single_point_warn": True,
}

DEFAULTS: dict[str, dict[str, Any]] = {
    "non_finite": {},
    "ratio_drift": {"warn": 1.05, "critical": 2.0},
    "approx_kl": {"warn": 0.015, "critical": 0.075},
    "clip_fraction": {"warn": 0.05, "critical": 0.20},
    "grpo_clip_ratio": {"warn": 0.05, "critical": 0.20},
    "value_clip_fraction": {"warn": 0.5, "critical": None, "persistence": (8, 10)},
    "entropy_collapse": {
        "warn": 0.10, "critical": 0.03, "floor": 0.01, "rise": 3.0, "baseline_points": 10,
    },
    "value_loss_spike": {
        "warn": 5.0, "critical": 20.0, "warmup": 20, "window": 50, "min_baseline": 1e-8,
        "persistence": (2, 3),
    },
    "grad_norm_spike": {
        "warn": 10.0, "critical": None, "warmup": 20, "window": 50, "min_baseline": 1e-6,
        "persistence": (2, 3),
    },
    "kl_blowup": {
        "warn": 12.0, "critical": 20.0, "relative": 4.0, "relative_floor": 1.0, "warmup": 50,
        "window": 50, "persistence": (2, 3),
    },
    "kl_blowup_token": {
        "warn": 0.5, "critical": 1.0, "relative": 4.0, "relative_floor": 0.05, "warmup": 50,
        "window": 50, "persistence": (2, 3),
    },
    "negative_kl": {
        "warn": 0.0, "critical": -1.0, "window": 10, "token_tolerance": 1e-6,
        "persistence": (5, 5), "critical_persistence": (2, 3),
    },
    "truncation": {"warn": 0.25, "critical": 0.9, "critical_persistence": (4, 5)},
    "zero_std_groups": {"warn": 0.5, "critical": 0.9},
    "dead_update": {"warn": 1e-6, "critical": 0.0, "persistence": (5, 5), "critical_persistence": (3, 3)},
    "reward_collapse": {
        "warn": 0.5, "critical": 1.0, "baseline_points": 10, "window": 10, "noise_z": 3.0,
        "min_points": 30,
    },
    "reward_stuck": {"points": 10, "tolerance": 1e-6},
    "stall": {
        "warn": 5.0, "critical": 15.0, "warn_min_s": 180.0, "critical_min_s": 600.0, "gap_points": 20,
    },
}

# Keys whose value may be switched off (None; ``false`` in a rules file).
NULLABLE = frozenset({"warn", "critical", "critical_persistence", "clear_fraction", "clear_points"})
# Rules whose warn / critical are shares between 0 and 1 (so "25" is caught as a percentage typo).
FRACTIONS = frozenset({
    "clip_fraction", "grpo_clip_ratio", "value_clip_fraction", "truncation", "zero_std_groups",
    "entropy_collapse",
})
# Rules whose warn / critical are multiples of a trailing median: at or below 1 every point would
# be a "spike".
MULTIPLES = frozenset({"value_loss_spike", "grad_norm_spike"})


@dataclass(frozen=True)
class RuleDoc:
    """What a rule watches and how its thresholds read, for the README table and `rltop` help."""

    title: str
    metrics: str
    direction: str  # "above", "below", "outside" (ratio factor) or "special"
    warn: str
    critical: str
    persistence: str


DOCS: dict[str, RuleDoc] = {
    "non_finite": RuleDoc("Non-finite value", "every scalar tag", "special", "-",
                          "any NaN or ±Inf", "immediate"),
    "ratio_drift": RuleDoc("Ratio drift", "PPO `val/ratio`", "outside",
                           "outside [1/{warn}, {warn}]", "outside [1/{critical}, {critical}]",
                           "{persistence}"),
    "approx_kl": RuleDoc("Approx-KL too high", "PPO `policy/approxkl_avg`", "above",
                         "≥ {warn}", "≥ {critical}", "{persistence}"),
    "clip_fraction": RuleDoc("Policy clip fraction too high", "PPO `policy/clipfrac_avg`", "above",
                             "≥ {warn}", "≥ {critical}", "{persistence}"),
    "grpo_clip_ratio": RuleDoc(
        "GRPO clip ratio too high", "GRPO `clip_ratio/region_mean` (Liger `clip_ratio`), off-policy steps "
        "only; off when num_iterations = 1", "above", "≥ {warn}", "≥ {critical}", "{persistence}"),
    "value_clip_fraction": RuleDoc("Value clip fraction too high", "PPO `val/clipfrac_avg`", "above",
                                   "≥ {warn}", "{critical}", "{persistence}"),
    "entropy_collapse": RuleDoc(
        "Entropy collapse", "PPO `policy/entropy_avg`, GRPO `entropy`", "below",
        "< {warn} × early level (median of first {baseline_points}), or > {rise} ×",
        "< {critical} × early level, or < {floor} nats", "{persistence}"),
    "value_loss_spike": RuleDoc(
        "Value-loss spike", "PPO `loss/value_avg`", "above",
        "≥ {warn} × median of previous {window} (after {warmup} points)", "≥ {critical} ×", "{persistence}"),
    "grad_norm_spike": RuleDoc(
        "Grad-norm spike", "`grad_norm`", "above",
        "≥ {warn} × median of previous {window} (after {warmup} points)", "{critical}", "{persistence}"),
    "kl_blowup": RuleDoc(
        "KL blow-up (per sequence)", "PPO `objective/kl`", "above",
        "≥ {warn} nats, or ≥ {relative} × median of previous {window} (and ≥ {relative_floor})",
        "≥ {critical} nats", "{persistence}"),
    "kl_blowup_token": RuleDoc(
        "KL blow-up (per token)", "GRPO `kl` (logged when beta > 0)", "above",
        "≥ {warn}, or ≥ {relative} × median of previous {window} (and ≥ {relative_floor})",
        "≥ {critical}", "{persistence}"),
    "negative_kl": RuleDoc(
        "Negative KL", "PPO `objective/kl`; GRPO `kl`", "below",
        "PPO: median of last {window} < {warn}", "PPO: < {critical}; GRPO: any value < -{token_tolerance}",
        "warn {persistence}, critical {critical_persistence}"),
    "truncation": RuleDoc(
        "Truncation", "GRPO `completions/clipped_ratio`", "above", "≥ {warn}", "≥ {critical}",
        "warn {persistence}, critical {critical_persistence}"),
    "zero_std_groups": RuleDoc("Zero-advantage groups", "GRPO `frac_reward_zero_std`", "above",
                               "≥ {warn}", "≥ {critical}", "{persistence}"),
    "dead_update": RuleDoc("Dead update", "`grad_norm`", "below", "< {warn}", "= {critical}",
                           "warn {persistence}, critical {critical_persistence}"),
    "reward_collapse": RuleDoc(
        "Reward collapse", "GRPO `reward`; PPO `objective/rlhf_reward`, `objective/scores`", "special",
        "gave back ≥ {warn} of its gain, or below its start (median of last {window}, noise margin "
        "{noise_z} σ)", "gave back ≥ {critical} of a real gain", "{persistence} (after {min_points} points)"),
    "reward_stuck": RuleDoc("Reward stuck", "the same reward tags", "special",
                            "identical for {points} points", "-", "{points} in a row"),
    "stall": RuleDoc("Stall", "time since the run's newest point", "above",
                     "> {warn} × usual gap (≥ {warn_min_s} s)",
                     "> {critical} × usual gap (≥ {critical_min_s} s)",
                     "usual gap = median of last {gap_points}"),
}
