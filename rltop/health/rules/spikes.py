"""Spikes against the run's own recent level: the value loss and the gradient norm.

The usual level is the median of the last normal points, frozen out of the warm-up and of earlier
spikes, so neither a high warm-up nor a spike lifts the baseline enough to hide the next one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rltop.health.findings import Level
from rltop.health.numerics.robust import finite_or, trailing_median
from rltop.health.numerics.spike_baseline import SpikeWindow, spike_references
from rltop.health.persistence import Flags, Point
from rltop.health.rules.base import (
    Band,
    BandLines,
    Context,
    Rule,
    SlotState,
    scaled,
    threshold_flags,
    verdict,
)
from rltop.health.settings import RuleDoc, RuleParams
from rltop.health.wording import num


def remember_reference(state: SlotState, reference: np.ndarray) -> None:
    """Keep the newest finite reference (trailing median) for the chart band."""
    if len(reference) and np.isfinite(reference[-1]):
        state.last_ref = float(reference[-1])


@dataclass
class SpikeState(SlotState):
    """A spike rule's memory of one tag: the window of normal points its baseline is the median of."""

    window: SpikeWindow = field(default_factory=SpikeWindow)


class SpikeRule(Rule):
    """A value many times its usual level: value loss, grad norm.

    The usual level is the median of the last ``window`` *normal* points: the first ``warmup``
    points (a value loss is high while the value head warms up) and every point already judged a
    spike are left out, so neither a high warm-up nor an earlier spike can lift the baseline enough
    to hide the next one. Judging starts once ``baseline_points`` normal points exist.
    """

    dynamic_band = True
    blow_up = True
    value_kind = "multiple"
    State = SpikeState
    advice_text = ""  # with {lr} and {clip} for the run's learning rate and max_grad_norm

    def flags(
        self, values: np.ndarray, start: int, state: SlotState, params: RuleParams, context: Context
    ) -> Flags:
        reference = self._references(values, start, state, params)
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = values[start:] / reference
        on_w, ok_w, on_c, ok_c = threshold_flags(
            ratio, params.warn, params.critical, params.clear_fraction, "above"
        )
        remember_reference(state, reference)
        waiting = np.isnan(reference)
        ok_w, ok_c = ok_w | waiting, ok_c | waiting
        extreme = self._cold_extremes(values, start, waiting, ratio, params)
        # The headline is the highest value of the episodes (what the card's max shows); the ratio to
        # the trailing median is said beside it.
        return Flags(on_w, ok_w, on_c, ok_c, finite_or(values[start:]), ratio, reference, extreme)

    @staticmethod
    def _cold_extremes(
        values: np.ndarray, start: int, waiting: np.ndarray, ratio: np.ndarray, params: RuleParams
    ) -> np.ndarray | None:
        """Points before the baseline exists that are ``extreme`` times the median of the points
        before them: critical at once. A value head that blows up in its first steps (0.26, 0.83, 44,
        3e5, NaN) is over before any warm-up ends; waiting for a baseline would say it after the
        NaN. ``ratio`` takes the cold ratio where there is no baseline, so the message can say it."""
        extreme = params.extreme
        if extreme is None or not waiting.any():
            return None
        last = int(np.flatnonzero(waiting)[-1])
        cold_median = trailing_median(values[: start + last + 1], start, params["window"], 2)
        with np.errstate(invalid="ignore", divide="ignore"):
            cold = values[start : start + last + 1] / cold_median
        cold[~waiting[: last + 1] | ~(cold_median > 0)] = np.nan
        ratio[: last + 1] = np.where(waiting[: last + 1], cold, ratio[: last + 1])
        flags = np.zeros(len(ratio), dtype=bool)
        with np.errstate(invalid="ignore"):
            flags[: last + 1] = cold >= extreme
        return flags

    @staticmethod
    def _references(values: np.ndarray, start: int, state: SpikeState, params: RuleParams) -> np.ndarray:
        """The baseline each new point is compared with (NaN while there is none yet)."""
        limit = params.warn if params.warn is not None else params.critical
        return spike_references(
            values,
            start,
            state.window,
            params["window"],
            params["warmup"],
            params["baseline_points"],
            params["min_baseline"],
            limit,
            bool(params.values.get("skip_zeros", False)),
        )

    def explain(
        self, tag: str, point: Point, level: Level, params: RuleParams, state: SlotState, context: Context
    ) -> str:
        if not np.isfinite(point.ref):
            if not np.isfinite(point.stat):
                return (
                    f"{tag} spiked to {num(point.value)} at step {point.step} (before its baseline existed)"
                )
            return (
                f"{tag} spiked to {num(point.value)} at step {point.step}, {num(point.stat)}× the median of "
                f"the points before it, before its baseline of {params['baseline_points']} normal points "
                f"existed: critical on its own at ≥ {num(params['extreme'])}×"
            )
        zeros = ", steps at 0" if params.values.get("skip_zeros") else ""
        return (
            f"{tag} spiked to {num(point.value)} at step {point.step}, {num(point.stat)}× the median "
            f"{num(point.ref)} of its last {params['window']} normal points (the first {params['warmup']} "
            f"points{zeros} and earlier spikes left out): "
            f"{verdict(level, params, lambda value: f'{num(value)}×', 'at ≥')}"
        )

    def advice(self, params: RuleParams, context: Context) -> str:
        c = context.calibration
        return self.advice_text.format(lr=c.now("learning_rate"), clip=c.now("max_grad_norm"))

    def band(self, params: RuleParams, state: SlotState, context: Context) -> Band:
        reference = state.last_ref
        if reference is None:
            return None, None, None, None
        warn = reference * params.warn if params.warn is not None else None
        critical = reference * params.critical if params.critical is not None else None
        return None, warn, None, critical

    def band_along(
        self, ref: np.ndarray, start: int, params: RuleParams, state: SlotState, context: Context
    ) -> BandLines:
        # Each point's own baseline (the median of the normal points before it): NaN until it exists.
        none = np.full(len(ref), np.nan)
        return none, scaled(ref, params.warn), none.copy(), scaled(ref, params.critical)


class ValueLossSpike(SpikeRule):
    """PPO's value loss many times its usual level: the value head thrown off."""

    name, title = "value_loss_spike", "value-loss spike"
    concepts = frozenset({"value_loss"})
    defaults = {"warn": 5.0, "critical": 20.0, "extreme": 1000.0, "warmup": 20, "window": 50,
                "baseline_points": 10, "min_baseline": 1e-08, "persistence": (2, 3)}  # fmt: skip
    doc = RuleDoc(
        "Value-loss spike",
        "PPO `loss/value_avg`",
        "above",
        "≥ {warn} × median of its last {window} normal points (the first {warmup} and earlier spikes "
        "left out)",
        "≥ {critical} ×; before the baseline exists, one point ≥ {extreme} × the median of the points "
        "before it",
        "{persistence}",
        "TRL's docs: the value loss spikes or goes NaN when training goes wrong; 20 × its usual level is the "
        "value head blowing up",
    )
    advice_text = ("The value head is thrown off: lower the learning rate{lr}, tighten cliprange_value, or "
                   "normalise / whiten the rewards.")  # fmt: skip


class GradNormSpike(SpikeRule):
    """The gradient norm many times its usual level: a warning (clipping absorbs single spikes)."""

    name, title = "grad_norm_spike", "grad-norm spike"
    concepts = frozenset({"grad_norm"})
    # A grad norm of exactly 0 is a step without an update (every group scored alike), not the
    # gradient's usual size: it stays out of the baseline (`skip_zeros`).
    defaults = {"warn": 10.0, "critical": None, "warmup": 20, "window": 50, "baseline_points": 10,
                "min_baseline": 1e-06, "skip_zeros": True, "persistence": (2, 3)}  # fmt: skip
    doc = RuleDoc(
        "Grad-norm spike",
        "`grad_norm`",
        "above",
        "≥ {warn} × median of its last {window} normal points (the first {warmup}, steps at 0 and earlier "
        "spikes left out)",
        "{critical}",
        "{persistence}",
        "never critical on its own: clipping (max_grad_norm) absorbs single spikes; a NaN is critical",
    )
    advice_text = ("A few batches produce huge gradients: lower the learning rate{lr}, clip gradients "
                   "(max_grad_norm{clip}), and look for outlier rewards or completions.")  # fmt: skip
