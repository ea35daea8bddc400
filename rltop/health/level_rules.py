"""Rules with fixed thresholds on the value itself: fractions, approx-KL, the PPO ratio, dead updates."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rltop.health.findings import Level
from rltop.health.machine import Flags, Point
from rltop.health.robust import finite_or, rolling_median
from rltop.health.rule_base import (
    Band,
    Context,
    Rule,
    judged,
    num,
    threshold_flags,
    verdict,
)
from rltop.health.rules import RuleParams
from rltop.model.catalog import MetricInfo

Advice = Callable[[Context], str]


def _ppo_step_advice(context: Context) -> str:
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
    return (
        f"Completions hit the length cap: raise max_completion_length{c.now('max_completion_length')}, "
        "or reward ending with EOS (a length or format reward) so the model learns to stop."
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
    """A fraction or magnitude judged against fixed warn / critical thresholds."""

    def __init__(self, name: str, title: str, keys: tuple[str, ...], direction: str, advice: Advice,
                 unit: str = "") -> None:
        self.name, self.title, self.keys = name, title, frozenset(keys)
        self.direction, self._advice, self.unit = direction, advice, unit

    def flags(self, values: np.ndarray, start: int, memo: dict[str, Any], params: RuleParams,
              context: Context) -> Flags:
        stat = values[start:]
        on_w, ok_w, on_c, ok_c = threshold_flags(stat, params.warn, params.critical, params.clear_fraction,
                                                 self.direction)
        reference = params.warn or params.critical or 1.0
        with np.errstate(divide="ignore", invalid="ignore"):
            severity = stat / reference if self.direction == "above" else reference / np.abs(stat)
        return Flags(on_w, ok_w, on_c, ok_c, finite_or(severity), stat,
                     np.full(len(stat), np.nan))

    def explain(self, tag: str, point: Point, level: Level, params: RuleParams, memo: dict[str, Any],
                context: Context) -> str:
        verb, op = ("reached", "at ≥") if self.direction == "above" else ("fell to", "at <")
        return (f"{tag} {verb} {num(point.value)}{self.unit} at step {point.step}: "
                f"{verdict(level, params, lambda value: num(value) + self.unit, op)}")

    def advice(self, params: RuleParams, context: Context) -> str:
        return self._advice(context)

    def band(self, params: RuleParams, memo: dict[str, Any], context: Context) -> Band:
        if self.direction == "above":
            return None, params.warn, None, params.critical
        return params.warn, None, params.critical, None


class GrpoClipRule(LevelRule):
    """GRPO clip ratios, judged only where clipping can happen at all (off-policy steps, train split)."""

    def applies(self, info: MetricInfo, context: Context) -> bool:
        # Evaluation is always on-policy, and so is every step when num_iterations = 1: the ratio is
        # exactly 1 there and the clip ratios exactly 0 by construction.
        if info.split == "eval" or context.calibration.grpo_always_on_policy:
            return False
        return super().applies(info, context)

    def select(self, steps: np.ndarray, context: Context) -> np.ndarray | None:
        return context.calibration.off_policy_mask(steps)


class RatioRule(Rule):
    """PPO ``val/ratio``: drift away from 1.0 by a factor, either way (judged as |ln ratio|)."""

    name, title = "ratio_drift", "ratio drift"
    keys = frozenset({"val/ratio", "ppo/policy/ratio"})

    def flags(self, values: np.ndarray, start: int, memo: dict[str, Any], params: RuleParams,
              context: Context) -> Flags:
        ratio = values[start:]
        with np.errstate(divide="ignore", invalid="ignore"):
            drift = np.where(ratio > 0, np.abs(np.log(np.where(ratio > 0, ratio, 1.0))), np.inf)
        warn = np.log(params.warn) if params.warn else None
        critical = np.log(params.critical) if params.critical else None
        on_w, ok_w, on_c, ok_c = threshold_flags(drift, warn, critical, params.clear_fraction, "above")
        severity = drift / (warn or critical or 1.0)
        return Flags(on_w, ok_w, on_c, ok_c, finite_or(severity), ratio,
                     np.full(len(ratio), np.nan))

    def explain(self, tag: str, point: Point, level: Level, params: RuleParams, memo: dict[str, Any],
                context: Context) -> str:
        return (f"{tag} reached {num(point.value)} at step {point.step}: "
                f"{verdict(level, params, self._range, 'outside')}")

    @staticmethod
    def _range(factor: float) -> str:
        return f"[{num(1 / factor)}, {num(factor)}]"

    def advice(self, params: RuleParams, context: Context) -> str:
        return _ppo_step_advice(context)

    def band(self, params: RuleParams, memo: dict[str, Any], context: Context) -> Band:
        warn, critical = params.warn, params.critical
        return (1 / warn if warn else None, warn, 1 / critical if critical else None, critical)


class DeadUpdateRule(Rule):
    """``grad_norm`` exactly 0 (critical) or vanishing (warn): the optimizer step changes nothing."""

    name, title, direction = "dead_update", "dead update", "below"
    keys = frozenset({"grad_norm"})

    def flags(self, values: np.ndarray, start: int, memo: dict[str, Any], params: RuleParams,
              context: Context) -> Flags:
        norm = values[start:]
        on_w, ok_w, _, _ = threshold_flags(norm, params.warn, None, params.clear_fraction, "below")
        if params.critical is None:
            on_c, ok_c = np.zeros(len(norm), bool), np.ones(len(norm), bool)
        else:
            on_c, ok_c = norm <= params.critical, norm > params.critical
        with np.errstate(divide="ignore"):
            severity = (params.warn or 1e-6) / np.abs(norm)
        return Flags(on_w, ok_w, on_c, ok_c, finite_or(severity), norm,
                     np.full(len(norm), np.nan))

    def explain(self, tag: str, point: Point, level: Level, params: RuleParams, memo: dict[str, Any],
                context: Context) -> str:
        m, n = params.critical_persistence if level == Level.CRITICAL else params.persistence
        if level == Level.CRITICAL:
            what = f"was {num(params.critical)} in {m} points in a row"
        else:
            what = f"stayed below {num(params.warn)} ({m} of {n} points)"
        return f"{tag} {what}: {num(point.value)} at step {point.step}, so the updates change nothing"

    def advice(self, params: RuleParams, context: Context) -> str:
        return (
            "No gradient reaches the weights: check that the rewards vary within a group "
            f"(frac_reward_zero_std), that the learning rate{context.calibration.now('learning_rate')} "
            "is not 0, and that the loss is connected to the trainable parameters."
        )

    def band(self, params: RuleParams, memo: dict[str, Any], context: Context) -> Band:
        return params.warn, None, params.critical, None


class NegativeKlRule(Rule):
    """KL to the reference below 0: PPO's k1 estimate may dip but must not stay there; GRPO's k3 never."""

    name, title, direction = "negative_kl", "negative KL", "below"
    keys = frozenset({"objective/kl", "kl"})

    def flags(self, values: np.ndarray, start: int, memo: dict[str, Any], params: RuleParams,
              context: Context) -> Flags:
        kl = values[start:]
        token = memo.get("key") == "kl"
        if token:
            # k3 is >= 0 for every sample: any negative mean is a bug, not noise.
            median = np.full(len(kl), np.nan)
            on_w = np.zeros(len(kl), bool)
            ok_w = np.ones(len(kl), bool)
            limit = -params["token_tolerance"]
            on_c, ok_c = kl < limit, kl >= limit
        else:
            median = rolling_median(values, start, params["window"])
            with np.errstate(invalid="ignore"):
                on_w = median < params.warn if params.warn is not None else np.zeros(len(kl), bool)
                ok_w = ~(median < params.warn) if params.warn is not None else np.ones(len(kl), bool)
            crit = params.critical
            on_c = kl < crit if crit is not None else np.zeros(len(kl), bool)
            ok_c = kl > crit * params.clear_fraction if crit is not None else np.ones(len(kl), bool)
        severity = finite_or(-np.where(np.isnan(median), kl, median))
        return Flags(on_w, ok_w, on_c, ok_c, severity, median, np.full(len(kl), np.nan))

    def explain(self, tag: str, point: Point, level: Level, params: RuleParams, memo: dict[str, Any],
                context: Context) -> str:
        if memo.get("key") == "kl":
            return (
                f"{tag} is {num(point.value)} at step {point.step}: the k3 KL estimate cannot be negative "
                f"(critical below -{num(params['token_tolerance'])})"
            )
        if level == Level.CRITICAL:
            return (
                f"{tag} fell to {num(point.value)} at step {point.step}, below the critical threshold "
                f"{num(params.critical)} ({judged(level, params)})"
            )
        return (
            f"{tag} stays negative: median of the last {params['window']} points {num(point.stat)} at step "
            f"{point.step} (value {num(point.value)}), below {num(params.warn)} for {judged(level, params)}"
        )

    def advice(self, params: RuleParams, context: Context) -> str:
        return (
            "A KL that stays below 0 means the samples do not come from the policy being scored: check that "
            "generation and scoring use the same temperature, top-k/top-p and padding, and that the "
            "reference model is the initial policy."
        )

    def band(self, params: RuleParams, memo: dict[str, Any], context: Context) -> Band:
        if memo.get("key") == "kl":
            return None, None, -params["token_tolerance"], None
        return params.warn, None, params.critical, None


def level_rules() -> list[Rule]:
    """The fixed-threshold rules, in report order."""
    return [
        RatioRule(),
        LevelRule("approx_kl", "approx-KL too high", ("policy/approxkl_avg", "ppo/policy/approxkl"),
                  "above", _ppo_step_advice),
        LevelRule("clip_fraction", "clip fraction too high", ("policy/clipfrac_avg", "ppo/policy/clipfrac"),
                  "above", _ppo_step_advice),
        GrpoClipRule("grpo_clip_ratio", "clip ratio too high", ("clip_ratio/region_mean", "clip_ratio"),
                     "above", _grpo_clip_advice),
        LevelRule("value_clip_fraction", "value clip fraction too high", ("val/clipfrac_avg",), "above",
                  _value_clip_advice),
        LevelRule("truncation", "truncation", ("completions/clipped_ratio",), "above", _truncation_advice),
        LevelRule("zero_std_groups", "groups without reward signal", ("frac_reward_zero_std",), "above",
                  _zero_std_advice),
        NegativeKlRule(),
        DeadUpdateRule(),
    ]
