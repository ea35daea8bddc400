"""Rules with fixed thresholds on the value itself: approx-KL, clip fractions, truncation, groups without
signal (the PPO ratio and dead updates: `rltop.health.rules.updates`; the KL: `rltop.health.rules.kl`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from rltop.health.evidence.collapse import degenerate as degenerate_policy
from rltop.health.findings import Level, Stage
from rltop.health.numerics.robust import finite_or
from rltop.health.persistence import Flags, Point
from rltop.health.rules.base import (
    Adjustment,
    Band,
    Context,
    Rule,
    SlotState,
    threshold_flags,
    verdict,
    with_prefix,
)
from rltop.health.settings import RuleDoc, RuleParams
from rltop.health.wording import num
from rltop.model.catalog import MetricInfo


def ppo_step_advice(context: Context) -> str:
    """Advice for PPO updates that are too large, with the run's own settings."""
    c = context.calibration
    return (
        f"Updates are too large: lower the learning rate{c.now('learning_rate')}, use fewer PPO epochs "
        f"num_ppo_epochs{c.now('num_ppo_epochs')} or fewer num_mini_batches{c.now('num_mini_batches')}, or "
        f"a tighter cliprange{c.now('cliprange')}."
    )


def _grpo_clip_advice(context: Context) -> str:
    c = context.calibration
    return (
        f"The policy moves too far from the samples it reuses: lower the learning rate"
        f"{c.now('learning_rate')}, use fewer num_iterations{c.now('num_iterations')}, or widen epsilon"
        f"{c.now('epsilon')} / epsilon_high{c.now('epsilon_high')}."
    )


def _truncation_advice(context: Context) -> str:
    c = context.calibration
    masked = (
        " With mask_truncated_completions the cut completions are left out of the loss: this share of "
        "every batch teaches nothing."
        if c.mask_truncated_completions
        else ""
    )
    return (
        f"Completions hit the length cap: raise max_completion_length{c.now('max_completion_length')}, "
        f"or reward ending with EOS (a length or format reward) so the model learns to stop.{masked}"
    )


def _zero_std_advice(context: Context) -> str:
    c = context.calibration
    return (
        "Groups whose completions all score the same teach nothing: make the rewards more graded, raise "
        f"num_generations{c.now('num_generations')} or the sampling temperature, or drop prompts that are "
        "always solved or never solved."
    )


def _value_clip_advice(context: Context) -> str:
    c = context.calibration
    return (
        f"The value head cannot keep up: lower the learning rate{c.now('learning_rate')}, widen "
        "cliprange_value, or normalise the rewards."
    )


class LevelRule(Rule):
    """A fraction or magnitude judged against fixed warn / critical thresholds (a subclass a rule)."""

    unit = ""  # said after each value ("nats")

    def flags(
        self, values: np.ndarray, start: int, state: SlotState, params: RuleParams, context: Context
    ) -> Flags:
        stat = values[start:]
        on_w, ok_w, on_c, ok_c = threshold_flags(
            stat, params.warn, params.critical, params.clear_fraction, self.direction
        )
        reference = params.warn or params.critical or 1.0
        with np.errstate(divide="ignore", invalid="ignore"):
            severity = stat / reference if self.direction == "above" else reference / np.abs(stat)
        return Flags(
            on_w,
            ok_w,
            on_c,
            ok_c,
            finite_or(severity),
            stat,
            np.full(len(stat), np.nan),
            extreme_points(stat, params.extreme, self.direction),
        )

    def explain(
        self, tag: str, point: Point, level: Level, params: RuleParams, state: SlotState, context: Context
    ) -> str:
        verb, op = ("reached", "at ≥") if self.direction == "above" else ("fell to", "at <")
        extreme = params.extreme
        beyond = extreme is not None and (point.value >= extreme if self.direction == "above"
                                          else point.value < extreme)  # fmt: skip
        alone = f"; a single point {op} {num(extreme)}{self.unit} is critical on its own" if beyond else ""
        return (
            f"{tag} {verb} {num(point.value)}{self.unit} at step {point.step}: "
            f"{verdict(level, params, lambda value: num(value) + self.unit, op)}{alone}"
        )

    def band(self, params: RuleParams, state: SlotState, context: Context) -> Band:
        if self.direction == "above":
            return None, params.warn, None, params.critical
        return params.warn, None, params.critical, None


def extreme_points(stat: np.ndarray, extreme: float | None, direction: str) -> np.ndarray | None:
    """Points beyond a rule's extreme level (None when it has none): critical at once."""
    if extreme is None:
        return None
    with np.errstate(invalid="ignore"):
        return stat >= extreme if direction == "above" else stat < extreme


class ZeroStdGroups(LevelRule):
    """Groups whose completions all scored the same: solved (saturated) or hopeless (starved).

    Both give zero advantage, so zero gradient, but they mean opposite things: with the reward at
    the top of its range the task is solved for most prompts (a note: time to stop or make the
    task harder); with the reward at the bottom there is no learning signal (the level stands).
    A policy that writes one string for every prompt (its completions converged, its entropy gone)
    scores alike too: that is a collapse, never "solved".
    """

    name, title, stage = "zero_std_groups", "groups without reward signal", Stage.SYMPTOM
    concepts = frozenset({"zero_std_groups"})
    value_kind = "share"
    uses_evidence = True
    defaults = {"saturated_position": 0.9, "warn": 0.5, "critical": 0.9}
    doc = RuleDoc(
        "Zero-advantage groups",
        "GRPO `frac_reward_zero_std`",
        "above",
        "≥ {warn}",
        "≥ {critical}",
        "{persistence}",
        "groups with equal rewards give zero gradient; with the reward at the top of its range (≥ "
        "{saturated_position}) they are solved: a note, not an alarm; a policy that writes one string is not",
    )

    def advice(self, params: RuleParams, context: Context) -> str:
        return _zero_std_advice(context)

    def adjust(
        self, level: Level, first: int, last: int, signals: Any, params: RuleParams, context: Context
    ) -> Adjustment | None:
        position = signals.reward_position(last)
        if position is None:
            return None
        where, reward, rose = position
        final = signals.settled(last)  # the position reads the reward up to `last` only
        degenerate = degenerate_policy(signals, first, last)
        if degenerate:
            # All groups scoring alike because the policy writes one string is not a solved task.
            return Adjustment(level, f"not solved: {degenerate}", final)
        if rose and where >= params["saturated_position"]:
            return Adjustment(
                Level.OK,
                f"saturated, not starved: the reward is at the top of its range ({num(reward)}), so most "
                "groups are solved; training has little left to learn from these prompts",
                final,
            )
        if where <= 1 - params["saturated_position"]:
            starved = f"starved: the reward is at the bottom of its range ({num(reward)})"
            return Adjustment(level, starved, final)
        return Adjustment(level, "", final)


class GrpoClipRatio(LevelRule):
    """GRPO clip ratios, judged only where clipping can happen at all (off-policy steps, train split).

    With ``importance_sampling_level="sequence"`` (GSPO) there is one ratio per completion: the clip
    ratios are shares of whole completions, and GSPO's tiny epsilon clips most of them on a healthy
    run (0.69-1.0 on every second pass of a real TRL 1.16 run with ε 3e-4/4e-4; the GSPO paper
    reports two orders of magnitude more clipping than GRPO). Those runs are judged with the
    ``sequence_*`` thresholds: every completion clipped on every off-policy step means the second
    pass learns nothing (a warning), never a blow-up on its own.
    """

    name, title, blow_up = "grpo_clip_ratio", "clip ratio too high", True
    concepts = frozenset({"clip_ratio_region"})
    value_kind = "share"
    defaults = {
        "warn": 0.05, "critical": 0.2, "extreme": 0.5,
        "sequence_warn": 0.95, "sequence_critical": None, "sequence_extreme": None,
        "sequence_persistence": (5, 5),
    }  # fmt: skip
    doc = RuleDoc(
        "GRPO clip ratio too high",
        "GRPO `clip_ratio/region_mean` (Liger `clip_ratio`), off-policy steps "
        "only; off when num_iterations = 1",
        "above",
        "≥ {warn}; GSPO (sequence level) ≥ {sequence_warn} in {sequence_persistence}",
        "≥ {critical}; one point ≥ {extreme}; GSPO: {sequence_critical}",
        "{persistence}",
        "as for PPO's clip fraction; on-policy steps are exactly 0 by construction and never judged; with "
        "importance_sampling_level=sequence the ratios count whole completions and 0.56-1.0 is healthy "
        "(GSPO paper: ~100x GRPO's clipping), so only every completion clipped on every second pass warns",
    )

    def advice(self, params: RuleParams, context: Context) -> str:
        if context.calibration.sequence_level:
            c = context.calibration
            return (
                "Every completion is clipped on the passes that reuse samples, so they teach nothing: "
                f"widen epsilon{c.now('epsilon')} / epsilon_high{c.now('epsilon_high')} (GSPO uses 3e-4 / "
                f"4e-4), lower the learning rate{c.now('learning_rate')}, or use num_iterations = 1."
            )
        return _grpo_clip_advice(context)

    def calibrated(self, params: RuleParams, context: Context) -> RuleParams:
        return with_prefix(params, "sequence") if context.calibration.sequence_level else params

    def explain(
        self, tag: str, point: Point, level: Level, params: RuleParams, state: SlotState, context: Context
    ) -> str:
        text = super().explain(tag, point, level, params, state, context)
        if context.calibration.sequence_level:
            text += " (importance_sampling_level=sequence: shares of whole completions)"
        return text

    def applies(self, info: MetricInfo, context: Context) -> bool:
        # Evaluation is always on-policy, and so is every step when num_iterations = 1: the ratio is
        # exactly 1 there and the clip ratios exactly 0 by construction.
        if info.split == "eval" or context.calibration.grpo_always_on_policy:
            return False
        return super().applies(info, context)

    def select(self, steps: np.ndarray, context: Context) -> np.ndarray | None:
        return context.calibration.off_policy_mask(steps)


class ApproxKl(LevelRule):
    """PPO's approximate KL between consecutive policies within one update."""

    name, title, blow_up = "approx_kl", "approx-KL too high", True
    concepts = frozenset({"approx_kl"})
    defaults = {"warn": 0.015, "critical": 0.075}
    doc = RuleDoc(
        "Approx-KL too high",
        "PPO `policy/approxkl_avg`",
        "above",
        "≥ {warn}",
        "≥ {critical}",
        "{persistence}",
        "Spinning Up and SB3 stop a PPO update at 1.5 × target_kl (targets 0.01-0.05)",
    )

    def advice(self, params: RuleParams, context: Context) -> str:
        return ppo_step_advice(context)


class ClipFraction(LevelRule):
    """PPO's share of policy updates cut by the clip."""

    name, title, blow_up = "clip_fraction", "clip fraction too high", True
    concepts = frozenset({"policy_clip_fraction"})
    value_kind = "share"
    defaults = {"warn": 0.05, "critical": 0.2, "extreme": 0.5}
    doc = RuleDoc(
        "Policy clip fraction too high",
        "PPO `policy/clipfrac_avg`",
        "above",
        "≥ {warn}",
        "≥ {critical}; one point ≥ {extreme}",
        "{persistence}",
        "healthy LLM runs clip under 1 %; a fifth of all updates clipped means the policy left its samples, "
        "half of them at once is a blow-up",
    )

    def advice(self, params: RuleParams, context: Context) -> str:
        return ppo_step_advice(context)


class ValueClipFraction(LevelRule):
    """PPO's share of value updates cut by cliprange_value: a warning, never critical."""

    name, title, stage = "value_clip_fraction", "value clip fraction too high", Stage.SYMPTOM
    concepts = frozenset({"value_clip_fraction"})
    value_kind = "share"
    defaults = {"warn": 0.5, "critical": None, "persistence": (8, 10)}
    doc = RuleDoc(
        "Value clip fraction too high",
        "PPO `val/clipfrac_avg`",
        "above",
        "≥ {warn}",
        "{critical}",
        "{persistence}",
        "never critical: a value head that cannot keep up slows learning, it does not break the policy",
    )

    def advice(self, params: RuleParams, context: Context) -> str:
        return _value_clip_advice(context)


class Truncation(LevelRule):
    """Completions cut at the length cap."""

    name, title, stage = "truncation", "truncation", Stage.SYMPTOM
    concepts = frozenset({"truncation_ratio"})
    value_kind = "share"
    defaults = {"warn": 0.25, "critical": 0.9, "critical_persistence": (4, 5)}
    doc = RuleDoc(
        "Truncation",
        "GRPO `completions/clipped_ratio`",
        "above",
        "≥ {warn}",
        "≥ {critical}",
        "warn {persistence}, critical {critical_persistence}",
        "with 9 in 10 completions cut at the cap, rewards judge unfinished text (trl#5697)",
    )

    def advice(self, params: RuleParams, context: Context) -> str:
        return _truncation_advice(context)
