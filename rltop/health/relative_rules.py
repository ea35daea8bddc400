"""Rules judged against the run's own history: entropy vs. its early level, spikes vs. the recent
median, KL growth (the reward's own rules are in `rltop.health.reward_rules`).

Baselines are frozen once their warm-up points exist (stored in the rule's memo), so a slow collapse
cannot drag its own baseline down; trailing medians exclude the point being judged.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rltop.health.findings import Level
from rltop.health.machine import Flags, Point
from rltop.health.robust import finite_or, trailing_median
from rltop.health.rule_base import (
    Adjustment,
    Band,
    BandLines,
    Context,
    Rule,
    judged,
    num,
    pct,
    scaled,
    threshold_flags,
    verdict,
)
from rltop.health.rules import RuleParams
from rltop.health.spike_baseline import spike_references

_FIRST_POINTS = 3  # the entropy baseline also looks at this many first points alone

_NO_REF = np.nan


def _remember_reference(memo: dict[str, Any], reference: np.ndarray) -> None:
    """Keep the newest finite reference (trailing median) for the chart band."""
    if len(reference) and np.isfinite(reference[-1]):
        memo["last_ref"] = float(reference[-1])


class EntropyRule(Rule):
    """Per-token entropy relative to its early level (collapse, or a blow-up to noise)."""

    name, title, direction = "entropy_collapse", "entropy collapse", "below"
    dynamic_band = True
    keys = frozenset({"policy/entropy_avg", "entropy", "ppo/policy/entropy"})

    def flags(self, values: np.ndarray, start: int, memo: dict[str, Any], params: RuleParams,
              context: Context) -> Flags:
        count = len(values) - start
        entropy = values[start:]
        baseline = self._baseline(values, memo, params)
        clear = params.clear_fraction
        floor = params["floor"]
        floor_on = entropy < floor if floor is not None else np.zeros(count, bool)
        floor_ok = entropy > floor / clear if floor is not None else np.ones(count, bool)
        # Points before the baseline exists are judged by the absolute floor only.
        judged_from = max(params["baseline_points"] - start, 0) if baseline else count
        share = entropy / baseline if baseline else np.full(count, np.nan)
        on_w, ok_w, on_c, ok_c = threshold_flags(share, params.warn, params.critical, clear, "below")
        rise = params["rise"]
        if rise is not None:
            with np.errstate(invalid="ignore"):
                on_w = on_w | (share > rise)
                ok_w = ok_w & ~(share > rise * clear)
        early = np.arange(count) < judged_from
        on_w[early], ok_w[early], on_c[early], ok_c[early] = False, True, False, True
        on_c, ok_c = on_c | floor_on, ok_c & floor_ok
        with np.errstate(divide="ignore", invalid="ignore"):
            severity = np.fmax(np.fmax((params.warn or 0.1) / share, share / (rise or np.inf)),
                               (floor or 0) / entropy)
        ref = np.full(count, baseline if baseline else _NO_REF)
        return Flags(on_w, ok_w, on_c, ok_c, finite_or(severity), share, ref)

    @staticmethod
    def _baseline(values: np.ndarray, memo: dict[str, Any], params: RuleParams) -> float | None:
        """The run's early entropy, frozen once ``baseline_points`` values exist (None before).

        The higher of the medians of the first 3 and of the first ``baseline_points`` values: with
        a large ``logging_steps`` a collapse can fill most of the first ten points, and their
        median alone would then call the collapsed level "early" and never fire.
        """
        points = params["baseline_points"]
        if "baseline" not in memo and len(values) >= points:
            first = values[: min(_FIRST_POINTS, points)]
            early = max(float(np.median(first)), float(np.median(values[:points])))
            memo["baseline"] = early if early > 0 else None
        return memo.get("baseline")

    def explain(self, tag: str, point: Point, level: Level, params: RuleParams, memo: dict[str, Any],
                context: Context) -> str:
        baseline = memo.get("baseline")
        floor = params["floor"]
        early = f"its early level {num(baseline)} (median of its first points)"
        if baseline and params["rise"] and point.stat > params["rise"]:
            return (f"{tag} rose to {num(point.value)} at step {point.step}, {num(point.stat)}× {early}: "
                    f"warn at > {num(params['rise'])}× in {judged(level, params)}")
        head = f"{tag} fell to {num(point.value)} at step {point.step}"
        floor_text = f"; critical also below {num(floor)} nats" if floor is not None else ""
        if not baseline:
            return f"{head}: critical below {num(floor)} nats (the early level is not known yet)"
        return (f"{head}, {pct(point.stat)} of {early}: "
                f"{verdict(level, params, pct, 'at <')}{floor_text if level == Level.CRITICAL else ''}")

    def advice(self, params: RuleParams, context: Context) -> str:
        c = context.calibration
        penalty = f"beta{c.now('beta')}" if context.kind == "GRPO" else f"kl_coef{c.now('kl_coef')}"
        return (
            "The policy became near-deterministic too early: lower the learning rate"
            f"{c.now('learning_rate')}, raise the KL penalty {penalty}, or add entropy (a higher "
            f"sampling temperature{c.now('temperature')}, an entropy bonus)."
        )

    def band(self, params: RuleParams, memo: dict[str, Any], context: Context) -> Band:
        baseline, floor = memo.get("baseline"), params["floor"]
        if not baseline:
            return None, None, floor, None
        warn = baseline * params.warn if params.warn is not None else None
        rise = baseline * params["rise"] if params["rise"] is not None else None
        critical = baseline * params.critical if params.critical is not None else None
        if floor is not None:
            critical = floor if critical is None else max(critical, floor)
        return warn, rise, critical, None

    def band_along(self, ref: np.ndarray, start: int, params: RuleParams, memo: dict[str, Any],
                   context: Context) -> BandLines:
        # The relative lines start where judging against the early level starts; the floor holds
        # from the first point.
        count = len(ref)
        judged_here = np.arange(start, start + count) >= params["baseline_points"]
        baseline = np.where(judged_here, ref, np.nan)
        critical = scaled(baseline, params.critical)
        floor = params["floor"]
        if floor is not None:
            critical = np.where(np.isnan(critical), floor, np.fmax(critical, floor))
        none = np.full(count, np.nan)
        return scaled(baseline, params.warn), scaled(baseline, params["rise"]), critical, none


class SpikeRule(Rule):
    """A value many times its usual level: value loss, grad norm.

    The usual level is the median of the last ``window`` *normal* points: the first ``warmup``
    points (a value loss is high while the value head warms up) and every point already judged a
    spike are left out, so neither a high warm-up nor an earlier spike can lift the baseline enough
    to hide the next one. Judging starts once ``baseline_points`` normal points exist.
    """

    dynamic_band = True

    def __init__(self, name: str, title: str, keys: tuple[str, ...], advice: str) -> None:
        self.name, self.title, self.keys, self._advice = name, title, frozenset(keys), advice

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
        return Flags(on_w, ok_w, on_c, ok_c, finite_or(ratio), ratio, reference)

    @staticmethod
    def _references(values: np.ndarray, start: int, memo: dict[str, Any], params: RuleParams) -> np.ndarray:
        """The baseline each new point is compared with (NaN while there is none yet)."""
        limit = params.warn if params.warn is not None else params.critical
        return spike_references(values, start, memo, params["window"], params["warmup"],
                                params["baseline_points"], params["min_baseline"], limit)

    def explain(self, tag: str, point: Point, level: Level, params: RuleParams, memo: dict[str, Any],
                context: Context) -> str:
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

    def __init__(self, name: str, title: str, keys: tuple[str, ...], unit: str) -> None:
        self.name, self.title, self.keys, self.unit = name, title, frozenset(keys), unit

    def flags(self, values: np.ndarray, start: int, memo: dict[str, Any], params: RuleParams,
              context: Context) -> Flags:
        kl = values[start:]
        clear = params.clear_fraction
        on_w, ok_w, on_c, ok_c = threshold_flags(kl, params.warn, params.critical, clear, "above")
        median = trailing_median(values, start, params["window"], max(params["warmup"], 1))
        factor, floor = params["relative"], params["relative_floor"]
        with np.errstate(invalid="ignore", divide="ignore"):
            growth = kl / median
            if factor is not None:
                fast = (kl >= factor * median) & (kl >= floor) & (median > 0)
                still = (kl >= factor * clear * median) & (kl >= floor * clear) & (median > 0)
                on_w, ok_w = on_w | fast, ok_w & ~still
            severity = np.fmax(kl / (params.warn or np.inf), growth / (factor or np.inf))
        _remember_reference(memo, median)
        return Flags(on_w, ok_w, on_c, ok_c, finite_or(severity), kl, median)

    def explain(self, tag: str, point: Point, level: Level, params: RuleParams, memo: dict[str, Any],
                context: Context) -> str:
        threshold = params.critical if level == Level.CRITICAL else params.warn
        text = f"{tag} reached {num(point.value)}{self.unit} at step {point.step}"
        if threshold is not None and point.value >= threshold:
            return f"{text}: {verdict(level, params, lambda value: num(value) + self.unit, 'at ≥')}"
        return (f"{text}, {num(point.value / point.ref)}× the median {num(point.ref)} of the previous "
                f"{params['window']} points: warn at ≥ {num(params['relative'])}× (and ≥ "
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
        damage = signals.damage(first, last)
        final = signals.settled(signals.evidence_end(last))
        if damage:
            return Adjustment(Level.CRITICAL, f"critical because of {' and '.join(damage)}", final)
        return Adjustment(
            Level.WARN,
            f"a warning, not critical: {signals.calm(first, last)} (critical needs the reward falling, "
            "the entropy collapsing, drastic updates or completions running into the length cap)",
            final,
        )

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


def relative_rules() -> list[Rule]:
    """The history-relative rules, in report order."""
    return [
        EntropyRule(),
        SpikeRule(
            "value_loss_spike", "value-loss spike", ("loss/value_avg", "ppo/loss/value"),
            "The value head is thrown off: lower the learning rate{lr}, tighten cliprange_value, or "
            "normalise / whiten the rewards.",
        ),
        SpikeRule(
            "grad_norm_spike", "grad-norm spike", ("grad_norm",),
            "A few batches produce huge gradients: lower the learning rate{lr}, clip gradients "
            "(max_grad_norm{clip}), and look for outlier rewards or completions.",
        ),
        KlBlowupRule("kl_blowup", "KL blow-up", ("objective/kl",), " nats"),
        KlBlowupRule("kl_blowup_token", "KL blow-up", ("kl",), ""),
    ]
