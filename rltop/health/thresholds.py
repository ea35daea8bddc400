"""Every health threshold rltop ships with, in one place, plus what each rule watches (for docs).

A rules file (``~/.config/rltop/rules.toml``, ``--rules FILE``) overrides any of these values; its
tables and keys are exactly the names below (see `rltop.health.settings`). Research and sources behind
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
    "clip_fraction": {"warn": 0.05, "critical": 0.20, "extreme": 0.5},
    "grpo_clip_ratio": {"warn": 0.05, "critical": 0.20, "extreme": 0.5},
    "value_clip_fraction": {"warn": 0.5, "critical": None, "persistence": (8, 10)},
    "entropy_collapse": {
        "warn": 0.5, "critical": 0.35, "deep": 0.10, "extreme": 0.03, "floor": 0.01, "rise": 3.0,
        "baseline_points": 10, "fast_drop": 0.4, "fast_points": 20,
    },
    "value_loss_spike": {
        "warn": 5.0, "critical": 20.0, "warmup": 20, "window": 50, "baseline_points": 10,
        "min_baseline": 1e-8,
        "persistence": (2, 3),
    },
    "grad_norm_spike": {
        "warn": 10.0, "critical": None, "warmup": 20, "window": 50, "baseline_points": 10,
        "min_baseline": 1e-6,
        "persistence": (2, 3),
    },
    "kl_blowup": {
        "warn": 12.0, "critical": 20.0, "extreme": 80.0, "relative": 4.0, "relative_floor": 1.0, "warmup": 50,
        "window": 50, "persistence": (2, 3),
    },
    "kl_blowup_token": {
        "warn": 0.5, "critical": 1.0, "extreme": 5.0, "relative": 4.0, "relative_floor": 0.05, "warmup": 50,
        "window": 50, "persistence": (2, 3),
    },
    "negative_kl": {
        "warn": 0.0, "critical": -1.0, "window": 10, "token_tolerance": 1e-6,
        "token_k1_warn": -0.01, "token_k1_critical": -0.1,
        "persistence": (5, 5), "critical_persistence": (2, 3),
    },
    "truncation": {"warn": 0.25, "critical": 0.9, "critical_persistence": (4, 5)},
    "zero_std_groups": {"saturated_position": 0.9, "warn": 0.5, "critical": 0.9},
    "dead_update": {"warn": 1e-6, "critical": 0.0, "persistence": (5, 5), "critical_persistence": (3, 3)},
    "reward_collapse": {
        "warn": 0.5, "critical": 1.0, "baseline_points": 10, "window": 10, "noise_z": 3.0,
        "min_points": 30,
    },
    "reward_stuck": {"points": 10, "tolerance": 1e-6},
    "stall": {
        "warn": 5.0, "critical": 15.0, "warn_min_s": 180.0, "critical_min_s": 600.0, "gap_points": 20,
    },
    # Run-level detectors (rltop.health.rules.detectors): no persistence, a finding holds while its
    # pattern does.
    "reward_plateau": {"min_points": 50, "window": 30, "share": 0.25, "tolerance": 0.1, "z": 2.0},
    "reward_dominance": {"min_points": 20, "share": 0.8},
    "reward_sacrificed": {"min_points": 20, "share": 0.5},
    "reward_hacking": {"window": 20, "share": 0.2, "length_cap": 0.9, "clipped": 0.25},
    "collapse_forecast": {"window": 20, "share": 0.2},
}

# Keys whose value may be switched off (None; ``false`` in a rules file).
NULLABLE = frozenset(
    {"warn", "critical", "extreme", "critical_persistence", "clear_fraction", "clear_points"}
)
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
    """What a rule watches, how its thresholds read, and the rule of thumb behind its critical level
    (for the README table, which a test keeps equal to `rltop.health.table.markdown_table`)."""

    title: str
    metrics: str
    direction: str  # "above", "below", "outside" (ratio factor) or "special"
    warn: str
    critical: str
    persistence: str
    why: str  # the rule of thumb behind critical (or why the rule never is)


DOCS: dict[str, RuleDoc] = {
    "non_finite": RuleDoc(
        "Non-finite value", "every scalar tag", "special", "-", "any NaN or ±Inf", "immediate",
        "NaN arrives with no precursor and poisons every later update; TRL drops all-NaN metrics, so "
        "one that reaches the log is real"),
    "ratio_drift": RuleDoc(
        "Ratio drift", "PPO `val/ratio`", "outside", "outside [1/{warn}, {warn}]",
        "outside [1/{critical}, {critical}]", "{persistence}",
        "TRL's docs: the ratio should float around 1.0; 2.0 or 0.5 means updates are too drastic"),
    "approx_kl": RuleDoc(
        "Approx-KL too high", "PPO `policy/approxkl_avg`", "above", "≥ {warn}", "≥ {critical}",
        "{persistence}",
        "Spinning Up and SB3 stop a PPO update at 1.5 × target_kl (targets 0.01-0.05)"),
    "clip_fraction": RuleDoc(
        "Policy clip fraction too high", "PPO `policy/clipfrac_avg`", "above", "≥ {warn}",
        "≥ {critical}; one point ≥ {extreme}", "{persistence}",
        "healthy LLM runs clip under 1 %; a fifth of all updates clipped means the policy left its samples, "
        "half of them at once is a blow-up"),
    "grpo_clip_ratio": RuleDoc(
        "GRPO clip ratio too high", "GRPO `clip_ratio/region_mean` (Liger `clip_ratio`), off-policy steps "
        "only; off when num_iterations = 1", "above", "≥ {warn}", "≥ {critical}; one point ≥ {extreme}",
        "{persistence}",
        "as for PPO's clip fraction; on-policy steps are exactly 0 by construction and never judged"),
    "value_clip_fraction": RuleDoc(
        "Value clip fraction too high", "PPO `val/clipfrac_avg`", "above", "≥ {warn}", "{critical}",
        "{persistence}", "never critical: a value head that cannot keep up slows learning, it does not "
        "break the policy"),
    "entropy_collapse": RuleDoc(
        "Entropy collapse", "PPO `policy/entropy_avg`, GRPO/RLOO `entropy`", "below",
        "< {warn} × early level (its first point, medians of its first 3 and {baseline_points}), or > "
        "{rise} ×",
        "< {critical} × early level, or {fast_drop} of it lost within {fast_points} points, confirmed by a "
        "consequence (completions converging, a reward function sacrificed, groups without signal rising, "
        "an extreme KL) or < {deep} × with no validation score rising; always < {extreme} × or < {floor} "
        "nats",
        "{persistence}",
        "a healthy run spends entropy to learn (veRL's PPO baseline loses 86 % while its validation score "
        "rises): critical needs what a collapse does to a run, or a fall so deep that the policy is "
        "near-deterministic"),
    "value_loss_spike": RuleDoc(
        "Value-loss spike", "PPO `loss/value_avg`", "above",
        "≥ {warn} × median of its last {window} normal points (the first {warmup} and earlier spikes "
        "left out)", "≥ {critical} ×", "{persistence}",
        "TRL's docs: the value loss spikes or goes NaN when training goes wrong; 20 × its usual level is "
        "the value head blowing up"),
    "grad_norm_spike": RuleDoc(
        "Grad-norm spike", "`grad_norm`", "above",
        "≥ {warn} × median of its last {window} normal points (the first {warmup} and earlier spikes "
        "left out)", "{critical}", "{persistence}",
        "never critical on its own: clipping (max_grad_norm) absorbs single spikes; a NaN is critical"),
    "kl_blowup": RuleDoc(
        "KL blow-up (per sequence)", "PPO `objective/kl`", "above",
        "≥ {warn} nats, or ≥ {relative} × median of previous {window} (and ≥ {relative_floor})",
        "≥ {critical} nats with damage, or ≥ {extreme} nats", "{persistence}",
        "critical with evidence of damage (the reward falling, the entropy collapsing, drastic updates, "
        "completions running into the length cap), or unless evidence shows the policy learns; ≥ {extreme} "
        "nats on its own: 5 nats a token over a 16-token response, far beyond any healthy run"),
    "kl_blowup_token": RuleDoc(
        "KL blow-up (per token)", "GRPO/RLOO `kl` (logged when beta > 0)", "above",
        "≥ {warn}, or ≥ {relative} × median of previous {window} (and ≥ {relative_floor})",
        "≥ {critical} with damage, or ≥ {extreme}", "{persistence}",
        "as per sequence: a KL that rises slowly while the reward rises and the entropy holds is a policy "
        "learning, a warning; ≥ {extreme} nats a token on its own (healthy GRPO at beta 0.04 peaks at 2.2 "
        "after 2,000 steps, veRL's PPO baseline at 0.31)"),
    "negative_kl": RuleDoc(
        "Negative KL", "PPO `objective/kl`; GRPO/RLOO `kl`", "below",
        "k1 (PPO, RLOO): median of last {window} < {warn} (RLOO per token: < {token_k1_warn})",
        "k1: < {critical} (RLOO per token: < {token_k1_critical}); k3 (GRPO): any value < "
        "-{token_tolerance}", "warn {persistence}, critical {critical_persistence}",
        "k3 (GRPO) is ≥ 0 for every sample, so any negative mean is a bug; a k1 estimate (PPO, RLOO) may "
        "dip but not fall far"),
    "truncation": RuleDoc(
        "Truncation", "GRPO `completions/clipped_ratio`", "above", "≥ {warn}", "≥ {critical}",
        "warn {persistence}, critical {critical_persistence}",
        "with 9 in 10 completions cut at the cap, rewards judge unfinished text (trl#5697)"),
    "zero_std_groups": RuleDoc(
        "Zero-advantage groups", "GRPO `frac_reward_zero_std`", "above", "≥ {warn}", "≥ {critical}",
        "{persistence}",
        "groups with equal rewards give zero gradient; with the reward at the top of its range (≥ "
        "{saturated_position}) they are solved: a note, not an alarm"),
    "dead_update": RuleDoc(
        "Dead update", "`grad_norm`", "below", "< {warn}", "= {critical}",
        "warn {persistence}, critical {critical_persistence}",
        "a gradient of exactly 0 in a row: the optimizer step changes nothing (trl#3857)"),
    "reward_collapse": RuleDoc(
        "Reward collapse", "GRPO/RLOO `reward`; PPO `objective/rlhf_reward`, `objective/scores`", "special",
        "gave back ≥ {warn} of its gain, or below its start (median of last {window}, noise margin "
        "{noise_z} σ)", "gave back ≥ {critical} of a real gain", "{persistence} (after {min_points} points)",
        "training undoing most of what it learned"),
    "reward_stuck": RuleDoc(
        "Reward stuck", "the same reward tags", "special", "identical for {points} points", "-",
        "{points} in a row", "never critical: it is the consequence of another rule's finding"),
    "stall": RuleDoc(
        "Stall", "time since the run's newest point", "above", "> {warn} × usual gap (≥ {warn_min_s} s)",
        "> {critical} × usual gap (≥ {critical_min_s} s)", "usual gap = median of last {gap_points}",
        "15 usual gaps and at least 10 minutes without a point: the trainer crashed, hung or was killed"),
    "reward_plateau": RuleDoc(
        "Reward plateau", "the main reward", "special",
        "note: at its best and flat over its last {share} (≥ {window} points): the change, plus {z} "
        "standard errors, within {tolerance} of its gain (Theil–Sen slope)",
        "-", "after {min_points} points",
        "a note, never an alarm: at its best level training has finished learning"),
    "reward_dominance": RuleDoc(
        "One reward function dominating", "GRPO `rewards/<f>/mean`", "special",
        "one function carries ≥ {share} of the gain while another falls (flat: a note)", "-",
        "after {min_points} points", "never critical: a trade between goals needs a look at completions"),
    "reward_sacrificed": RuleDoc(
        "A reward function sacrificed", "GRPO `rewards/<f>/mean` and the total reward", "special", "-",
        "one function lost more than {share} of its early level or of its gain while the total rose",
        "after {min_points} points",
        "the policy buys the total with one goal: what you asked for in that function is being given up"),
    "reward_hacking": RuleDoc(
        "Reward hacking (early warning)", "reward with completion length / clipped ratio, PPO "
        "`rlhf_reward`, `eval/` reward", "special",
        "reward up over its last {share} while lengths reach {length_cap} × the cap, truncation passes "
        "{clipped}, `rlhf_reward` falls, or the eval reward falls", "-", "≥ {window} points",
        "an early warning: the proxy reward keeps rising after the true one peaked (Gao et al.)"),
    "collapse_forecast": RuleDoc(
        "Collapse forecast", "entropy, KL", "special",
        "note: a steady move over its last {share} reaches the rule's warn level before the planned end",
        "-", "≥ {window} points", "a note: it says when, at the current rate, before the rule fires"),
}
