"""Rules on the updates themselves: the PPO ratio drifting from 1, and updates that change nothing."""

from __future__ import annotations

import numpy as np

from rltop.health.findings import Level, Stage
from rltop.health.numerics.robust import finite_or
from rltop.health.persistence import Flags, Point
from rltop.health.rules.base import Band, Context, Rule, SlotState, threshold_flags, verdict
from rltop.health.rules.levels import ppo_step_advice
from rltop.health.settings import RuleDoc, RuleParams
from rltop.health.wording import num


class RatioDrift(Rule):
    """PPO ``val/ratio``: drift away from 1.0 by a factor, either way (judged as |ln ratio|)."""

    name, title = "ratio_drift", "ratio drift"
    blow_up = True
    concepts = frozenset({"policy_ratio"})
    defaults = {"warn": 1.05, "critical": 2.0}
    doc = RuleDoc(
        "Ratio drift",
        "PPO `val/ratio`",
        "outside",
        "outside [1/{warn}, {warn}]",
        "outside [1/{critical}, {critical}]",
        "{persistence}",
        "TRL's docs: the ratio should float around 1.0; 2.0 or 0.5 means updates are too drastic",
    )

    def swapped(self, warn: float, critical: float) -> str:
        """Factors either side of 1.0: both above 1, critical the wider."""
        if warn <= 1 or critical <= 1 or critical < warn:
            return "thresholds must be greater than 1, with critical beyond warn"
        return ""

    def flags(
        self, values: np.ndarray, start: int, state: SlotState, params: RuleParams, context: Context
    ) -> Flags:
        ratio = values[start:]
        with np.errstate(divide="ignore", invalid="ignore"):
            drift = np.where(ratio > 0, np.abs(np.log(np.where(ratio > 0, ratio, 1.0))), np.inf)
        warn = np.log(params.warn) if params.warn else None
        critical = np.log(params.critical) if params.critical else None
        on_w, ok_w, on_c, ok_c = threshold_flags(drift, warn, critical, params.clear_fraction, "above")
        severity = drift / (warn or critical or 1.0)
        return Flags(on_w, ok_w, on_c, ok_c, finite_or(severity), ratio, np.full(len(ratio), np.nan))

    def explain(
        self, tag: str, point: Point, level: Level, params: RuleParams, state: SlotState, context: Context
    ) -> str:
        return (
            f"{tag} reached {num(point.value)} at step {point.step}: "
            f"{verdict(level, params, self._range, 'outside')}"
        )

    @staticmethod
    def _range(factor: float) -> str:
        return f"[{num(1 / factor)}, {num(factor)}]"

    def advice(self, params: RuleParams, context: Context) -> str:
        return ppo_step_advice(context)

    def band(self, params: RuleParams, state: SlotState, context: Context) -> Band:
        warn, critical = params.warn, params.critical
        return (1 / warn if warn else None, warn, 1 / critical if critical else None, critical)


class DeadUpdate(Rule):
    """``grad_norm`` exactly 0 (critical) or vanishing (warn): the optimizer step changes nothing."""

    name, title, direction = "dead_update", "dead update", "below"
    stage = Stage.CONSEQUENCE
    concepts = frozenset({"grad_norm"})
    defaults = {"warn": 1e-06, "critical": 0.0, "persistence": (5, 5), "critical_persistence": (3, 3)}
    doc = RuleDoc(
        "Dead update",
        "`grad_norm`",
        "below",
        "< {warn}",
        "= {critical}",
        "warn {persistence}, critical {critical_persistence}",
        "a gradient of exactly 0 in a row: the optimizer step changes nothing (trl#3857)",
    )

    def swapped(self, warn: float, critical: float) -> str:
        return ""  # critical is "exactly 0", not a threshold beyond warn

    def select(self, steps: np.ndarray, context: Context) -> np.ndarray | None:
        # GSPO (sequence level) clips whole completions: a second pass over a batch whose every
        # completion left the tiny trust region has a gradient of exactly 0 by design. Only the
        # generation steps tell whether updates are dead.
        return context.calibration.on_policy_mask(steps) if context.calibration.sequence_level else None

    def flags(
        self, values: np.ndarray, start: int, state: SlotState, params: RuleParams, context: Context
    ) -> Flags:
        norm = values[start:]
        on_w, ok_w, _, _ = threshold_flags(norm, params.warn, None, params.clear_fraction, "below")
        if params.critical is None:
            on_c, ok_c = np.zeros(len(norm), bool), np.ones(len(norm), bool)
        else:
            on_c, ok_c = norm <= params.critical, norm > params.critical
        with np.errstate(divide="ignore"):
            severity = (params.warn or 1e-6) / np.abs(norm)
        return Flags(on_w, ok_w, on_c, ok_c, finite_or(severity), norm, np.full(len(norm), np.nan))

    def explain(
        self, tag: str, point: Point, level: Level, params: RuleParams, state: SlotState, context: Context
    ) -> str:
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

    def band(self, params: RuleParams, state: SlotState, context: Context) -> Band:
        return params.warn, None, params.critical, None
