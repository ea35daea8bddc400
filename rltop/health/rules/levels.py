"""Rules with fixed thresholds on the value itself: fractions, approx-KL, the PPO ratio, dead updates."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rltop.health.evidence.collapse import degenerate as degenerate_policy
from rltop.health.findings import Level, Stage
from rltop.health.numerics.robust import finite_or, rolling_median
from rltop.health.persistence import Flags, Point
from rltop.health.rules.base import (
    Adjustment,
    Band,
    BandLines,
    Context,
    Rule,
    constant_lines,
    judged,
    num,
    threshold_flags,
    verdict,
)
from rltop.health.settings import RuleParams
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

    def __init__(self, name: str, title: str, concepts: tuple[str, ...], direction: str, advice: Advice,
                 unit: str = "", stage: Stage = Stage.BREAKDOWN, blow_up: bool = False) -> None:
        self.name, self.title, self.concepts = name, title, frozenset(concepts)
        self.direction, self._advice, self.unit, self.stage = direction, advice, unit, stage
        self.blow_up = blow_up

    def flags(self, values: np.ndarray, start: int, memo: dict[str, Any], params: RuleParams,
              context: Context) -> Flags:
        stat = values[start:]
        on_w, ok_w, on_c, ok_c = threshold_flags(stat, params.warn, params.critical, params.clear_fraction,
                                                 self.direction)
        reference = params.warn or params.critical or 1.0
        with np.errstate(divide="ignore", invalid="ignore"):
            severity = stat / reference if self.direction == "above" else reference / np.abs(stat)
        return Flags(on_w, ok_w, on_c, ok_c, finite_or(severity), stat,
                     np.full(len(stat), np.nan), extreme_points(stat, params.extreme, self.direction))

    def explain(self, tag: str, point: Point, level: Level, params: RuleParams, memo: dict[str, Any],
                context: Context) -> str:
        verb, op = ("reached", "at ≥") if self.direction == "above" else ("fell to", "at <")
        extreme = params.extreme
        beyond = extreme is not None and (point.value >= extreme if self.direction == "above"
                                          else point.value < extreme)  # fmt: skip
        alone = f"; a single point {op} {num(extreme)}{self.unit} is critical on its own" if beyond else ""
        return (f"{tag} {verb} {num(point.value)}{self.unit} at step {point.step}: "
                f"{verdict(level, params, lambda value: num(value) + self.unit, op)}{alone}")

    def advice(self, params: RuleParams, context: Context) -> str:
        return self._advice(context)

    def band(self, params: RuleParams, memo: dict[str, Any], context: Context) -> Band:
        if self.direction == "above":
            return None, params.warn, None, params.critical
        return params.warn, None, params.critical, None


def extreme_points(stat: np.ndarray, extreme: float | None, direction: str) -> np.ndarray | None:
    """Points beyond a rule's extreme level (None when it has none): critical at once."""
    if extreme is None:
        return None
    with np.errstate(invalid="ignore"):
        return stat >= extreme if direction == "above" else stat < extreme


class ZeroStdRule(LevelRule):
    """Groups whose completions all scored the same: solved (saturated) or hopeless (starved).

    Both give zero advantage, so zero gradient, but they mean opposite things: with the reward at
    the top of its range the task is solved for most prompts (a note: time to stop or make the
    task harder); with the reward at the bottom there is no learning signal (the level stands).
    A policy that writes one string for every prompt (its completions converged, its entropy gone)
    scores alike too: that is a collapse, never "solved".
    """

    uses_evidence = True

    def adjust(self, level: Level, first: int, last: int, signals: Any, params: RuleParams,
               context: Context) -> Adjustment | None:
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
    blow_up = True
    concepts = frozenset({"policy_ratio"})

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
    stage = Stage.CONSEQUENCE
    concepts = frozenset({"grad_norm"})

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
    """KL to the reference below 0: a k1 estimate may dip but must not stay there; k3 never can.

    Which estimator a tag holds depends on the trainer: GRPO's per-token ``kl`` is k3 (>= 0 for
    every sample, so any negative mean is a bug), RLOO's per-token ``kl`` a k1 estimate made at
    generation time, PPO's per-sequence ``objective/kl`` k1 unless ``kl_estimator="k3"``.
    """

    name, title, direction = "negative_kl", "negative KL", "below"
    stage = Stage.SYMPTOM
    concepts = frozenset({"kl_reference_sequence", "kl_reference_token"})

    @staticmethod
    def _mode(memo: dict[str, Any], context: Context) -> tuple[bool, bool]:
        """(per token, k1 estimator) of the tag being judged."""
        per_token = memo.get("concept") == "kl_reference_token"
        return per_token, context.calibration.kl_is_k1(per_token)

    def _thresholds(self, params: RuleParams, per_token: bool) -> tuple[float | None, float | None]:
        """(warn on the rolling median, critical on the value) of a k1 estimate."""
        if per_token:
            return params["token_k1_warn"], params["token_k1_critical"]
        return params.warn, params.critical

    def flags(self, values: np.ndarray, start: int, memo: dict[str, Any], params: RuleParams,
              context: Context) -> Flags:
        kl = values[start:]
        per_token, k1 = self._mode(memo, context)
        if not k1:
            # k3 is >= 0 for every sample: any negative mean is a bug, not noise.
            median = np.full(len(kl), np.nan)
            on_w = np.zeros(len(kl), bool)
            ok_w = np.ones(len(kl), bool)
            limit = -params["token_tolerance"]
            on_c, ok_c = kl < limit, kl >= limit
        else:
            warn, crit = self._thresholds(params, per_token)
            median = rolling_median(values, start, params["window"])
            with np.errstate(invalid="ignore"):
                on_w = median < warn if warn is not None else np.zeros(len(kl), bool)
                ok_w = ~(median < warn) if warn is not None else np.ones(len(kl), bool)
            on_c = kl < crit if crit is not None else np.zeros(len(kl), bool)
            ok_c = kl > crit * params.clear_fraction if crit is not None else np.ones(len(kl), bool)
        severity = finite_or(-np.where(np.isnan(median), kl, median))
        return Flags(on_w, ok_w, on_c, ok_c, severity, median, np.full(len(kl), np.nan))

    def explain(self, tag: str, point: Point, level: Level, params: RuleParams, memo: dict[str, Any],
                context: Context) -> str:
        per_token, k1 = self._mode(memo, context)
        if not k1:
            return (
                f"{tag} is {num(point.value)} at step {point.step}: the k3 KL estimate cannot be negative "
                f"(critical below -{num(params['token_tolerance'])})"
            )
        warn, crit = self._thresholds(params, per_token)
        estimate = f"the k1 estimate{' (RLOO, per token)' if per_token else ''}"
        if level == Level.CRITICAL:
            return (
                f"{tag} fell to {num(point.value)} at step {point.step}, below the critical threshold "
                f"{num(crit)} for {estimate} ({judged(level, params)})"
            )
        return (
            f"{tag} stays negative: median of the last {params['window']} points {num(point.stat)} at step "
            f"{point.step} (value {num(point.value)}), below {num(warn)} for {judged(level, params)}; "
            f"{estimate} may dip below 0 but should not stay there"
        )

    def advice(self, params: RuleParams, context: Context) -> str:
        return (
            "A KL that stays below 0 means the samples do not come from the policy being scored: check that "
            "generation and scoring use the same temperature, top-k/top-p and padding, and that the "
            "reference model is the initial policy."
        )

    def band(self, params: RuleParams, memo: dict[str, Any], context: Context) -> Band:
        per_token, k1 = self._mode(memo, context)
        if not k1:
            return None, None, -params["token_tolerance"], None
        warn, crit = self._thresholds(params, per_token)
        return warn, None, crit, None

    def band_along(self, ref: np.ndarray, start: int, params: RuleParams, memo: dict[str, Any],
                   context: Context) -> BandLines:
        # A k1 warning judges the median of the last points, not the value: no line on the values.
        warn, high, crit, top = constant_lines(self.band(params, memo, context), len(ref))
        if self._mode(memo, context)[1]:
            warn = np.full(len(ref), np.nan)
        return warn, high, crit, top


def level_rules() -> list[Rule]:
    """The fixed-threshold rules, in report order."""
    return [
        RatioRule(),
        LevelRule("approx_kl", "approx-KL too high", ("approx_kl",), "above", _ppo_step_advice, blow_up=True),
        LevelRule("clip_fraction", "clip fraction too high", ("policy_clip_fraction",), "above",
                  _ppo_step_advice, blow_up=True),
        GrpoClipRule("grpo_clip_ratio", "clip ratio too high", ("clip_ratio_region",), "above",
                     _grpo_clip_advice, blow_up=True),
        LevelRule("value_clip_fraction", "value clip fraction too high", ("value_clip_fraction",), "above",
                  _value_clip_advice, stage=Stage.SYMPTOM),
        LevelRule("truncation", "truncation", ("truncation_ratio",), "above", _truncation_advice,
                  stage=Stage.SYMPTOM),
        ZeroStdRule("zero_std_groups", "groups without reward signal", ("zero_std_groups",), "above",
                    _zero_std_advice, stage=Stage.SYMPTOM),
        NegativeKlRule(),
        DeadUpdateRule(),
    ]
