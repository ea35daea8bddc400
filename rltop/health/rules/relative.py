"""Rules judged against the run's own history: spikes vs. the recent median, KL growth (entropy vs. its
early level is `rltop.health.rules.entropy`, the reward's own rules are in `rltop.health.rules.reward`).

Baselines are frozen once their warm-up points exist (stored in the rule's memo), so a slow collapse
cannot drag its own baseline down; trailing medians exclude the point being judged.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rltop.health.evidence.collapse import learning_signs
from rltop.health.findings import Level
from rltop.health.numerics.robust import finite_or, trailing_median
from rltop.health.numerics.spike_baseline import spike_references
from rltop.health.persistence import Flags, Point
from rltop.health.rules.base import (
    Adjustment,
    Band,
    BandLines,
    Context,
    Rule,
    judged,
    num,
    scaled,
    threshold_flags,
    verdict,
)
from rltop.health.rules.entropy import EntropyRule
from rltop.health.rules.levels import extreme_points
from rltop.health.settings import RuleParams

_NO_REF = np.nan


def _remember_reference(memo: dict[str, Any], reference: np.ndarray) -> None:
    """Keep the newest finite reference (trailing median) for the chart band."""
    if len(reference) and np.isfinite(reference[-1]):
        memo["last_ref"] = float(reference[-1])


class SpikeRule(Rule):
    """A value many times its usual level: value loss, grad norm.

    The usual level is the median of the last ``window`` *normal* points: the first ``warmup``
    points (a value loss is high while the value head warms up) and every point already judged a
    spike are left out, so neither a high warm-up nor an earlier spike can lift the baseline enough
    to hide the next one. Judging starts once ``baseline_points`` normal points exist.
    """

    dynamic_band = True
    blow_up = True

    def __init__(self, name: str, title: str, concepts: tuple[str, ...], advice: str) -> None:
        self.name, self.title, self.concepts, self._advice = name, title, frozenset(concepts), advice

    def flags(self, values: np.ndarray, start: int, memo: dict[str, Any], params: RuleParams,
              context: Context) -> Flags:
        reference = self._references(values, start, memo, params)
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = values[start:] / reference
        on_w, ok_w, on_c, ok_c = threshold_flags(ratio, params.warn, params.critical, params.clear_fraction,
                                                 "above")
        _remember_reference(memo, reference)
        waiting = np.isnan(reference)
        ok_w, ok_c = ok_w | waiting, ok_c | waiting
        # The headline is the highest value of the episodes (what the card's max shows); the ratio to
        # the trailing median is said beside it.
        return Flags(on_w, ok_w, on_c, ok_c, finite_or(values[start:]), ratio, reference)

    @staticmethod
    def _references(values: np.ndarray, start: int, memo: dict[str, Any], params: RuleParams) -> np.ndarray:
        """The baseline each new point is compared with (NaN while there is none yet)."""
        limit = params.warn if params.warn is not None else params.critical
        return spike_references(values, start, memo, params["window"], params["warmup"],
                                params["baseline_points"], params["min_baseline"], limit)

    def explain(self, tag: str, point: Point, level: Level, params: RuleParams, memo: dict[str, Any],
                context: Context) -> str:
        if not np.isfinite(point.stat):
            return f"{tag} spiked to {num(point.value)} at step {point.step} (before its baseline existed)"
        return (
            f"{tag} spiked to {num(point.value)} at step {point.step}, {num(point.stat)}× the median "
            f"{num(point.ref)} of its last {params['window']} normal points (the first {params['warmup']} "
            f"points and earlier spikes left out): "
            f"{verdict(level, params, lambda value: f'{num(value)}×', 'at ≥')}"
        )

    def advice(self, params: RuleParams, context: Context) -> str:
        c = context.calibration
        return self._advice.format(lr=c.now("learning_rate"), clip=c.now("max_grad_norm"))

    def band(self, params: RuleParams, memo: dict[str, Any], context: Context) -> Band:
        reference = memo.get("last_ref")
        if reference is None:
            return None, None, None, None
        warn = reference * params.warn if params.warn is not None else None
        critical = reference * params.critical if params.critical is not None else None
        return None, warn, None, critical

    def band_along(self, ref: np.ndarray, start: int, params: RuleParams, memo: dict[str, Any],
                   context: Context) -> BandLines:
        # Each point's own baseline (the median of the normal points before it): NaN until it exists.
        none = np.full(len(ref), np.nan)
        return none, scaled(ref, params.warn), none.copy(), scaled(ref, params.critical)


class KlBlowupRule(Rule):
    """KL to the reference above absolute caps, or growing fast against its recent median.

    A high KL alone is a policy that moved far from its reference, which is what training does:
    critical needs evidence that the run is being damaged (the reward falling, the entropy
    collapsing, drastic updates, completions running into the length cap) during the episode or
    just after it. Without it the episode stays a warning and says which healthy signs it saw.
    """

    dynamic_band = True
    uses_evidence = True
    blow_up = True

    def __init__(self, name: str, title: str, concepts: tuple[str, ...], unit: str) -> None:
        self.name, self.title, self.concepts, self.unit = name, title, frozenset(concepts), unit

    def flags(self, values: np.ndarray, start: int, memo: dict[str, Any], params: RuleParams,
              context: Context) -> Flags:
        kl = values[start:]
        clear = params.clear_fraction
        on_w, ok_w, on_c, ok_c = threshold_flags(kl, params.warn, params.critical, clear, "above")
        median = trailing_median(values, start, params["window"], max(params["warmup"], 1))
        factor, floor = params["relative"], params["relative_floor"]
        with np.errstate(invalid="ignore", divide="ignore"):
            if factor is not None:
                fast = (kl >= factor * median) & (kl >= floor) & (median > 0)
                still = (kl >= factor * clear * median) & (kl >= floor * clear) & (median > 0)
                on_w, ok_w = on_w | fast, ok_w & ~still
        _remember_reference(memo, median)
        # The headline is the highest KL of the episodes (a climb to 21 reads "reached 21"), not the
        # point that stood out most against a trailing median that rises with it.
        extreme = extreme_points(kl, params.extreme, "above")
        return Flags(on_w, ok_w, on_c, ok_c, finite_or(kl), kl, median, extreme)

    def explain(self, tag: str, point: Point, level: Level, params: RuleParams, memo: dict[str, Any],
                context: Context) -> str:
        threshold = params.critical if level == Level.CRITICAL else params.warn
        text = f"{tag} reached {num(point.value)}{self.unit} at step {point.step}"
        growth = ""
        if np.isfinite(point.ref) and point.ref > 0:
            growth = f", {num(point.value / point.ref)}× the median {num(point.ref)} of the previous " \
                     f"{params['window']} points"
        if threshold is not None and point.value >= threshold:
            return f"{text}{growth}: {verdict(level, params, lambda value: num(value) + self.unit, 'at ≥')}"
        return (f"{text}{growth}: warn at ≥ {num(params['relative'])}× (and ≥ "
                f"{num(params['relative_floor'])}{self.unit}) in {judged(level, params)}")

    def advice(self, params: RuleParams, context: Context) -> str:
        c = context.calibration
        penalty = f"beta{c.now('beta')}" if self.name == "kl_blowup_token" else f"kl_coef{c.now('kl_coef')}"
        return (
            f"The policy drifts away from the reference: raise the KL penalty {penalty} or lower the "
            f"learning rate{c.now('learning_rate')}; past ~20 nats per sequence the reward is usually being "
            "over-optimised."
        )

    def adjust(self, level: Level, first: int, last: int, signals: Any, params: RuleParams,
               context: Context) -> Adjustment | None:
        if level != Level.CRITICAL:
            return None
        final = signals.settled(signals.evidence_end(last))
        peak = self._peak(signals, first, last)
        if peak is not None and params["extreme"] is not None and peak[0] >= params["extreme"]:
            value, limit = f"{num(peak[0])}{self.unit}", f"{num(params['extreme'])}{self.unit}"
            text = f"critical on its own: {value} at step {peak[1]} is past {limit}, beyond any healthy run"
            return Adjustment(Level.CRITICAL, text, final)
        damage = signals.damage(first, last)
        if damage:
            return Adjustment(Level.CRITICAL, f"critical because of {' and '.join(damage)}", final)
        strong, weak = learning_signs(signals, first, last)
        share = signals.entropy_share(last)
        holding = signals.rules["entropy_collapse"].warn if signals.rules is not None else None
        if strong or weak or (share is not None and holding is not None and share >= holding):
            return Adjustment(
                Level.WARN,
                f"a warning, not critical: {signals.calm(first, last)} (critical needs the reward falling, "
                "the entropy collapsing, drastic updates or completions running into the length cap)",
                final,
            )
        # Missing evidence is not evidence of health: a KL past its critical level in the first steps,
        # before the reward or the entropy say anything, stays critical.
        return Adjustment(Level.CRITICAL, "critical: nothing shows the run is still learning (the reward "
                          "has not risen and the entropy's level is not known yet)", final)

    def _peak(self, signals: Any, first: int, last: int) -> tuple[float, int] | None:
        """(highest KL, its step) of this rule's tag during steps first..last."""
        for concept in sorted(self.concepts):
            series = signals.concept(concept)
            if series is None:
                continue
            steps, values = signals.finite_upto(series, last)
            inside = steps >= first
            if inside.any():
                at = int(np.argmax(np.where(inside, values, -np.inf)))
                return float(values[at]), int(steps[at])
        return None

    def band(self, params: RuleParams, memo: dict[str, Any], context: Context) -> Band:
        warn = params.warn
        median, factor = memo.get("last_ref"), params["relative"]
        if median is not None and median > 0 and factor is not None:
            relative = max(factor * median, params["relative_floor"])
            warn = relative if warn is None else min(warn, relative)
        return None, warn, None, params.critical

    def band_along(self, ref: np.ndarray, start: int, params: RuleParams, memo: dict[str, Any],
                   context: Context) -> BandLines:
        # The warn line is the lower of the fixed cap and ``relative`` x the trailing median.
        count = len(ref)
        warn = np.full(count, np.nan if params.warn is None else float(params.warn))
        factor = params["relative"]
        if factor is not None:
            with np.errstate(invalid="ignore"):
                relative = np.where(ref > 0, np.fmax(factor * ref, params["relative_floor"]), np.nan)
            warn = np.fmin(warn, relative)
        none = np.full(count, np.nan)
        critical = np.full(count, np.nan if params.critical is None else float(params.critical))
        return none, warn, none.copy(), critical


def relative_rules() -> list[Rule]:  # (the entropy rule lives in its own module)
    """The history-relative rules, in report order."""
    return [
        EntropyRule(),
        SpikeRule(
            "value_loss_spike", "value-loss spike", ("value_loss",),
            "The value head is thrown off: lower the learning rate{lr}, tighten cliprange_value, or "
            "normalise / whiten the rewards.",
        ),
        SpikeRule(
            "grad_norm_spike", "grad-norm spike", ("grad_norm",),
            "A few batches produce huge gradients: lower the learning rate{lr}, clip gradients "
            "(max_grad_norm{clip}), and look for outlier rewards or completions.",
        ),
        KlBlowupRule("kl_blowup", "KL blow-up", ("kl_reference_sequence",), " nats"),
        KlBlowupRule("kl_blowup_token", "KL blow-up", ("kl_reference_token",), ""),
    ]
