"""Entropy collapse, judged by how far and how fast the entropy falls, and by what the fall does.

A policy spends entropy to buy reward: healthy runs lose much of it (veRL's PPO baseline 86-88 % in
~110 steps while its score and validation score climb). A collapse is told apart by its
consequences (`rltop.health.evidence.collapse`): the completions converging on one string, a
reward function sacrificed, groups without signal rising, an extreme KL, drastic updates.

Levels, on each point's share of the early level (`rltop.health.evidence.signals.early_level`):

- warn below ``warn`` (half of the early entropy gone), or above ``rise`` × (a blow-up to noise);
- a *candidate* critical below ``critical``, or on a fast fall (``fast_drop`` of the early level
  lost within ``fast_points`` points); its second look (`EntropyRule.adjust`) keeps it critical when
  a consequence shows, when it is deep (below ``deep``) and nothing held-out shows the policy still
  learns, or when the reward did not rise either; it caps it at warn when a validation score rises
  or the completions stay varied, or (not deep) when the reward rises;
- critical in any case below ``extreme`` or below ``floor`` nats: a near-deterministic policy.

The early level exists from the first point (cold start: a blow-up in the first steps is judged
against the entropy the run started with) and is frozen after ``baseline_points`` points, each
point judged against the level known when it was logged, so a live run and a one-shot load agree.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from rltop.health.evidence.collapse import consequences, learning_signs
from rltop.health.evidence.signals import ENTROPY_CONCEPTS, early_level
from rltop.health.findings import Level
from rltop.health.numerics.robust import finite_or
from rltop.health.persistence import Flags, Point
from rltop.health.rules.base import (
    Adjustment,
    Band,
    BandLines,
    Context,
    Rule,
    SlotState,
    judged,
    scaled,
    threshold_flags,
    verdict,
)
from rltop.health.settings import RuleDoc, RuleParams
from rltop.health.wording import num, pct

SMOOTH = 3  # points whose median is the entropy's level when an episode is looked at again


class EntropyCollapse(Rule):
    """Per-token entropy relative to its early level (collapse, or a blow-up to noise)."""

    name, title, direction = "entropy_collapse", "entropy collapse", "below"
    value_kind = "share"
    defaults = {"warn": 0.5, "critical": 0.35, "deep": 0.1, "extreme": 0.03, "floor": 0.01, "rise": 3.0,
                "baseline_points": 10, "fast_drop": 0.4, "fast_points": 20}  # fmt: skip
    doc = RuleDoc(
        "Entropy collapse",
        "PPO `policy/entropy_avg`, GRPO/RLOO `entropy`",
        "below",
        "< {warn} × early level (its first point, medians of its first 3 and {baseline_points}), or > "
        "{rise} ×",
        "< {critical} × early level, or {fast_drop} of it lost within {fast_points} points, confirmed by a "
        "consequence (completions converging, a reward function sacrificed, groups without signal rising, "
        "an extreme KL) or < {deep} × with no validation score rising; always < {extreme} × or < {floor} "
        "nats",
        "{persistence}",
        "a healthy run spends entropy to learn (veRL's PPO baseline loses 86 % while its validation score "
        "rises): critical needs what a collapse does to a run, or a fall so deep that the policy is "
        "near-deterministic",
    )
    note_advice = (
        "Nothing to do while the validation score keeps rising; if it stalls, more entropy (a "
        "higher sampling temperature, an entropy bonus) lets the policy keep exploring."
    )
    dynamic_band = True
    uses_evidence = True
    single_point_warn = False  # one low point is noise: the candidate critical is decided on persistence
    concepts = frozenset({"policy_entropy"})

    def flags(
        self, values: np.ndarray, start: int, state: SlotState, params: RuleParams, context: Context
    ) -> Flags:
        count = len(values) - start
        entropy = values[start:]
        early = self._early(values, start, state, params)
        clear = params.clear_fraction
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(early > 0, entropy / early, np.nan)
        on_w, ok_w, on_c, ok_c = threshold_flags(share, params.warn, params.critical, clear, "below")
        rise = params["rise"]
        with np.errstate(invalid="ignore"):
            if rise is not None:
                on_w, ok_w = on_w | (share > rise), ok_w & ~(share > rise * clear)
            fast = self._fast(values, start, early, params)
            floor = params["floor"]
            floor_on = entropy < floor if floor is not None else np.zeros(count, bool)
            floor_ok = entropy > floor / clear if floor is not None else np.ones(count, bool)
        on_c, ok_c = on_c | fast | floor_on, ok_c & ~fast & floor_ok
        with np.errstate(divide="ignore", invalid="ignore"):
            severity = np.fmax(
                np.fmax((params.warn or 0.5) / share, share / (rise or np.inf)), (floor or 0) / entropy
            )
        with np.errstate(invalid="ignore"):
            extreme = (share < params.extreme) | floor_on if params.extreme is not None else floor_on
        return Flags(on_w, ok_w, on_c, ok_c, finite_or(severity), share, early, extreme)

    @staticmethod
    def _early(values: np.ndarray, start: int, state: SlotState, params: RuleParams) -> np.ndarray:
        """The early level each new point is judged against: known from the first point, frozen once
        ``baseline_points`` values exist (a point never sees a level computed from later points)."""
        points = params["baseline_points"]
        count = len(values) - start
        if state.baseline is not None:
            return np.full(count, state.baseline)
        out = np.empty(count)
        for j in range(start, min(len(values), points)):
            out[j - start] = early_level(values[: j + 1])
        if len(values) >= points:
            state.baseline = early_level(values[:points])
            out[max(points - start, 0) :] = state.baseline
        return out

    @staticmethod
    def _fast(values: np.ndarray, start: int, early: np.ndarray, params: RuleParams) -> np.ndarray:
        """Points ``fast_drop`` of the early level below the highest of the ``fast_points`` before them."""
        drop, window = params["fast_drop"], int(params["fast_points"])
        count = len(values) - start
        if drop is None or count <= 0 or start + count < 2:
            return np.zeros(count, bool)
        begin = max(start - window, 0)
        before = values[begin : len(values) - 1]
        padded = np.concatenate((np.full(window - (start - begin), -np.inf), before))
        highest = sliding_window_view(padded, window).max(axis=1)[-count:]
        with np.errstate(invalid="ignore", divide="ignore"):
            return (highest - values[start:]) >= drop * early

    def adjust(
        self, level: Level, first: int, last: int, signals: Any, params: RuleParams, context: Context
    ) -> Adjustment | None:
        held = _held_at_target(signals, first, last, context)
        if held:
            return Adjustment(Level.OK, held, signals.settled(signals.evidence_end(last)))
        if level == Level.OK:
            return None
        final = signals.settled(signals.evidence_end(last))
        share = self._lowest_share(signals, first, last)
        if share is not None and share < params["extreme"]:
            return Adjustment(Level.CRITICAL, f"critical: at {pct(share)} of its early level the policy is "
                              "near-deterministic", final)  # fmt: skip
        found = consequences(signals, first, last)
        if found:
            if level != Level.CRITICAL:
                return None
            return Adjustment(Level.CRITICAL, f"critical because of {' and '.join(found)}", final)
        strong, weak = learning_signs(signals, first, last)
        deep = share is not None and share < params["deep"]
        if strong and not deep:
            # Held-out evidence of learning and no consequence of a collapse: the run spent entropy
            # to learn (veRL's PPO baseline: -88 % while its validation score climbs 0.38 -> 0.53).
            return Adjustment(Level.OK, f"a healthy run spends entropy to learn: {' and '.join(strong)}, "
                              "and no consequence of a collapse shows", final)  # fmt: skip
        if level != Level.CRITICAL:
            return None
        why_critical = ("critical on the completions converging, a reward function sacrificed, groups "
                        "without signal rising or an extreme KL")  # fmt: skip
        if strong:
            return Adjustment(Level.WARN, f"a warning, not critical: {' and '.join(strong)} ({why_critical})",
                              final)  # fmt: skip
        if weak and not deep:
            return Adjustment(
                Level.WARN,
                f"a warning for now: {weak[0]}, and no consequence of a collapse shows yet ({why_critical}, "
                f"or below {pct(params['deep'])} of its early level without a validation score rising)",
                final,
            )
        if deep:
            return Adjustment(
                Level.CRITICAL,
                f"critical: {pct(1 - share)} of its early entropy is gone and nothing held-out shows the "
                "policy still learns (no validation score rising, no varied completions logged)",
                final,
            )
        return Adjustment(Level.CRITICAL, "critical: the entropy fell while the reward did not rise", final)

    @staticmethod
    def _lowest_share(signals: Any, first: int, last: int) -> float | None:
        """The lowest level (median of `SMOOTH` points) of the entropy during steps first..last, as a
        share of its early level."""
        series = signals.series(ENTROPY_CONCEPTS)
        if series is None:
            return None
        steps, values = signals.finite_upto(series, last)
        early = early_level(values)
        inside = values[np.searchsorted(steps, first) :]
        if not early or early <= 0 or not len(inside):
            return None
        smooth = np.median(sliding_window_view(inside, min(SMOOTH, len(inside))), axis=1)
        return float(smooth.min() / early)

    def explain(
        self, tag: str, point: Point, level: Level, params: RuleParams, state: SlotState, context: Context
    ) -> str:
        baseline = point.ref if np.isfinite(point.ref) else state.baseline
        floor = params["floor"]
        early = f"its early level {num(baseline)}"
        if baseline and params["rise"] and point.stat > params["rise"]:
            return (
                f"{tag} rose to {num(point.value)} at step {point.step}, {num(point.stat)}× {early}: "
                f"warn at > {num(params['rise'])}× in {judged(level, params)}"
            )
        head = f"{tag} fell to {num(point.value)} at step {point.step}"
        if not baseline:
            return f"{head}: critical below {num(floor)} nats"
        fast = (f"; a fall of {pct(params['fast_drop'])} of it within {params['fast_points']} points is a "
                "candidate too") if level == Level.CRITICAL and params["fast_drop"] else ""  # fmt: skip
        return f"{head}, {pct(point.stat)} of {early}: {verdict(level, params, pct, 'at <')}{fast}"

    def advice(self, params: RuleParams, context: Context) -> str:
        c = context.calibration
        penalty = f"beta{c.now('beta')}" if context.kind == "GRPO" else f"kl_coef{c.now('kl_coef')}"
        return (
            "The policy became near-deterministic too early: lower the learning rate"
            f"{c.now('learning_rate')}, raise the KL penalty {penalty}, or add entropy (a higher "
            f"sampling temperature{c.now('temperature')}, an entropy bonus)."
        )

    def band(self, params: RuleParams, state: SlotState, context: Context) -> Band:
        baseline, floor = state.baseline, params["floor"]
        if not baseline:
            return None, None, floor, None
        warn = baseline * params.warn if params.warn is not None else None
        rise = baseline * params["rise"] if params["rise"] is not None else None
        critical = baseline * params.critical if params.critical is not None else None
        if floor is not None:
            critical = floor if critical is None else max(critical, floor)
        return warn, rise, critical, None

    def band_along(
        self, ref: np.ndarray, start: int, params: RuleParams, state: SlotState, context: Context
    ) -> BandLines:
        # Each point's own early level (provisional over the first points); the floor holds throughout.
        critical = scaled(ref, params.critical)
        floor = params["floor"]
        if floor is not None:
            critical = np.where(np.isnan(critical), floor, np.fmax(critical, floor))
        none = np.full(len(ref), np.nan)
        return scaled(ref, params.warn), scaled(ref, params["rise"]), critical, none


HELD = 0.9  # with TRL's adaptive entropy controller, an entropy at or above this share of its target is held


def _held_at_target(signals: Any, first: int, last: int, context: Context) -> str:
    """ "held at entropy_target …" when TRL's adaptive entropy controller (``use_adaptive_entropy``)
    keeps the entropy at its target during the episode: a fall to the target is what it was asked
    for (the coefficient pinned at its cap is the signal, `EntropyCoefPinned`); "" otherwise."""
    c = context.calibration
    if not c.use_adaptive_entropy or not c.entropy_target or c.entropy_target <= 0:
        return ""
    series = signals.series(ENTROPY_CONCEPTS)
    if series is None:
        return ""
    steps, values = signals.finite_upto(series, last)
    inside = values[np.searchsorted(steps, first) :]
    if not len(inside):
        return ""
    level = float(np.median(inside[-SMOOTH:]))
    if level < HELD * c.entropy_target:
        return ""
    return (
        f"held at its target: use_adaptive_entropy keeps the entropy at entropy_target "
        f"{num(c.entropy_target)} (median {num(level)} at the end of the episode), by design; entropy_coef "
        "at its cap is the signal"
    )
