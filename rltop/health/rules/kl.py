"""The KL to the reference: running away (per sequence for PPO, per token for GRPO/RLOO), or negative.

A high KL alone is a policy that moved far from its reference, which is what training does: past
its critical level it is critical with evidence that the run is being damaged, a warning with
evidence that it learns, and critical again when nothing is known yet; past its ``extreme`` level,
beyond any healthy run, critical on its own.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rltop.health.evidence.collapse import learning_signs
from rltop.health.findings import Level, Stage
from rltop.health.numerics.robust import finite_or, rolling_median, trailing_median
from rltop.health.persistence import Flags, Point
from rltop.health.rules.base import (
    Adjustment,
    Band,
    BandLines,
    Context,
    Rule,
    SlotState,
    constant_lines,
    judged,
    threshold_flags,
    verdict,
)
from rltop.health.rules.levels import extreme_points
from rltop.health.rules.spikes import remember_reference
from rltop.health.settings import RuleDoc, RuleParams
from rltop.health.wording import num

JUMP, JUMP_POINTS = 2.0, 5
"""A relative warning needs a jump: the point at least ``JUMP`` × the median of the ``JUMP_POINTS``
points before it, besides ``relative`` × the longer trailing median."""


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
    unit = ""  # said after each value (" nats")

    def flags(
        self, values: np.ndarray, start: int, state: SlotState, params: RuleParams, context: Context
    ) -> Flags:
        kl = values[start:]
        clear = params.clear_fraction
        on_w, ok_w, on_c, ok_c = threshold_flags(kl, params.warn, params.critical, clear, "above")
        median = trailing_median(values, start, params["window"], max(params["warmup"], 1))
        factor, floor = params["relative"], params["relative_floor"]
        with np.errstate(invalid="ignore", divide="ignore"):
            if factor is not None:
                # A jump, not a climb: also twice the level of the last few points. A KL that starts
                # at 0 (the policy is its reference) grows by any factor over its first hundred
                # steps, smoothly, and that is training (veRL's PPO baseline: 0 -> 0.12 by step 50).
                recent = trailing_median(values, start, JUMP_POINTS, 1)
                jumped = (kl >= JUMP * recent) | np.isnan(recent)
                fast = (kl >= factor * median) & (kl >= floor) & (median > 0) & jumped
                still = (kl >= factor * clear * median) & (kl >= floor * clear) & (median > 0)
                on_w, ok_w = on_w | fast, ok_w & ~still
        remember_reference(state, median)
        # The headline is the highest KL of the episodes (a climb to 21 reads "reached 21"), not the
        # point that stood out most against a trailing median that rises with it.
        extreme = extreme_points(kl, params.extreme, "above")
        return Flags(on_w, ok_w, on_c, ok_c, finite_or(kl), kl, median, extreme)

    def explain(
        self, tag: str, point: Point, level: Level, params: RuleParams, state: SlotState, context: Context
    ) -> str:
        threshold = params.critical if level == Level.CRITICAL else params.warn
        text = f"{tag} reached {num(point.value)}{self.unit} at step {point.step}"
        growth = ""
        if np.isfinite(point.ref) and point.ref > 0:
            growth = (
                f", {num(point.value / point.ref)}× the median {num(point.ref)} of the previous "
                f"{params['window']} points"
            )
        if threshold is not None and point.value >= threshold:
            return f"{text}{growth}: {verdict(level, params, lambda value: num(value) + self.unit, 'at ≥')}"
        return (
            f"{text}{growth}: warn on a jump to ≥ {num(params['relative'])}× (and ≥ "
            f"{num(params['relative_floor'])}{self.unit}) in {judged(level, params)}"
        )

    def advice(self, params: RuleParams, context: Context) -> str:
        c = context.calibration
        penalty = f"beta{c.now('beta')}" if self.name == "kl_blowup_token" else f"kl_coef{c.now('kl_coef')}"
        return (
            f"The policy drifts away from the reference: raise the KL penalty {penalty} or lower the "
            f"learning rate{c.now('learning_rate')}; past ~20 nats per sequence the reward is usually being "
            "over-optimised."
        )

    def adjust(
        self, level: Level, first: int, last: int, signals: Any, params: RuleParams, context: Context
    ) -> Adjustment | None:
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
        return Adjustment(
            Level.CRITICAL,
            "critical: nothing shows the run is still learning (the reward "
            "has not risen and the entropy's level is not known yet)",
            final,
        )

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

    def band(self, params: RuleParams, state: SlotState, context: Context) -> Band:
        warn = params.warn
        median, factor = state.last_ref, params["relative"]
        if median is not None and median > 0 and factor is not None:
            relative = max(factor * median, params["relative_floor"])
            warn = relative if warn is None else min(warn, relative)
        return None, warn, None, params.critical

    def band_along(
        self, ref: np.ndarray, start: int, params: RuleParams, state: SlotState, context: Context
    ) -> BandLines:
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


class KlBlowup(KlBlowupRule):
    """PPO's per-sequence KL to the reference (``objective/kl``)."""

    name, title, unit = "kl_blowup", "KL blow-up", " nats"
    concepts = frozenset({"kl_reference_sequence"})
    defaults = {"warn": 12.0, "critical": 20.0, "extreme": 80.0, "relative": 4.0, "relative_floor": 1.0,
                "warmup": 50, "window": 50, "persistence": (2, 3)}  # fmt: skip
    doc = RuleDoc(
        "KL blow-up (per sequence)",
        "PPO `objective/kl`",
        "above",
        "≥ {warn} nats, or a jump to ≥ {relative} × median of previous {window} (and ≥ {relative_floor})",
        "≥ {critical} nats with damage, or ≥ {extreme} nats",
        "{persistence}",
        "critical with evidence of damage (the reward falling, the entropy collapsing, drastic updates, "
        "completions running into the length cap), or unless evidence shows the policy learns; ≥ {extreme} "
        "nats on its own: 5 nats a token over a 16-token response, far beyond any healthy run",
    )


class KlBlowupToken(KlBlowupRule):
    """GRPO/RLOO's per-token KL to the reference (``kl``, logged when beta > 0)."""

    name, title = "kl_blowup_token", "KL blow-up"
    concepts = frozenset({"kl_reference_token"})
    defaults = {"warn": 0.5, "critical": 1.0, "extreme": 5.0, "relative": 4.0, "relative_floor": 0.05,
                "warmup": 50, "window": 50, "persistence": (2, 3)}  # fmt: skip
    doc = RuleDoc(
        "KL blow-up (per token)",
        "GRPO/RLOO `kl` (logged when beta > 0)",
        "above",
        "≥ {warn}, or a jump to ≥ {relative} × median of previous {window} (and ≥ {relative_floor})",
        "≥ {critical} with damage, or ≥ {extreme}",
        "{persistence}",
        "as per sequence: a KL that rises slowly while the reward rises and the entropy holds is a policy "
        "learning, a warning; ≥ {extreme} nats a token on its own (healthy GRPO at beta 0.04 peaks at 2.2 "
        "after 2,000 steps, veRL's PPO baseline at 0.31)",
    )


class NegativeKl(Rule):
    """KL to the reference below 0: a k1 estimate may dip but must not stay there; k3 never can.

    Which estimator a tag holds depends on the trainer: GRPO's per-token ``kl`` is k3 (>= 0 for
    every sample, so any negative mean is a bug), RLOO's per-token ``kl`` a k1 estimate made at
    generation time, PPO's per-sequence ``objective/kl`` k1 unless ``kl_estimator="k3"``.
    """

    name, title, direction = "negative_kl", "negative KL", "below"
    stage = Stage.SYMPTOM
    concepts = frozenset({"kl_reference_sequence", "kl_reference_token"})
    defaults = {"warn": 0.0, "critical": -1.0, "window": 10, "token_tolerance": 1e-06, "token_k1_warn": -0.01,
                "token_k1_critical": -0.1, "persistence": (5, 5), "critical_persistence": (2, 3)}  # fmt: skip
    doc = RuleDoc(
        "Negative KL",
        "PPO `objective/kl`; GRPO/RLOO `kl`",
        "below",
        "k1 (PPO, RLOO): median of last {window} < {warn} (RLOO per token: < {token_k1_warn})",
        "k1: < {critical} (RLOO per token: < {token_k1_critical}); k3 (GRPO): any value < -{token_tolerance}",
        "warn {persistence}, critical {critical_persistence}",
        "k3 (GRPO) is ≥ 0 for every sample, so any negative mean is a bug; a k1 estimate (PPO, RLOO) may dip "
        "but not fall far",
    )

    def swapped(self, warn: float, critical: float) -> str:
        return ""  # warn judges a rolling median, critical single values: no order between them

    @staticmethod
    def _mode(state: SlotState, context: Context) -> tuple[bool, bool]:
        """(per token, k1 estimator) of the tag being judged."""
        per_token = state.concept == "kl_reference_token"
        return per_token, context.calibration.kl_is_k1(per_token)

    def _thresholds(self, params: RuleParams, per_token: bool) -> tuple[float | None, float | None]:
        """(warn on the rolling median, critical on the value) of a k1 estimate."""
        if per_token:
            return params["token_k1_warn"], params["token_k1_critical"]
        return params.warn, params.critical

    def flags(
        self, values: np.ndarray, start: int, state: SlotState, params: RuleParams, context: Context
    ) -> Flags:
        kl = values[start:]
        per_token, k1 = self._mode(state, context)
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

    def explain(
        self, tag: str, point: Point, level: Level, params: RuleParams, state: SlotState, context: Context
    ) -> str:
        per_token, k1 = self._mode(state, context)
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

    def band(self, params: RuleParams, state: SlotState, context: Context) -> Band:
        per_token, k1 = self._mode(state, context)
        if not k1:
            return None, None, -params["token_tolerance"], None
        warn, crit = self._thresholds(params, per_token)
        return warn, None, crit, None

    def band_along(
        self, ref: np.ndarray, start: int, params: RuleParams, state: SlotState, context: Context
    ) -> BandLines:
        # A k1 warning judges the median of the last points, not the value: no line on the values.
        warn, high, crit, top = constant_lines(self.band(params, state, context), len(ref))
        if self._mode(state, context)[1]:
            warn = np.full(len(ref), np.nan)
        return warn, high, crit, top
