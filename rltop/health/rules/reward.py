"""The reward's rules: giving back its gains (collapse) or not moving at all (stuck).

The reward is noisy by nature, so it is judged on the median of its last points against a margin
derived from its own point-to-point noise; its starting level is frozen after the first points.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from rltop.health.evidence.signals import REWARD_CONCEPTS
from rltop.health.findings import Level, Stage
from rltop.health.numerics.robust import finite_or, noise_sigma, rolling_median, rolling_range
from rltop.health.persistence import Flags, Point
from rltop.health.rules.base import Context, Rule, SlotState, judged
from rltop.health.settings import RuleDoc, RuleParams
from rltop.health.wording import num, pct


@dataclass
class RewardState(SlotState):
    """The reward collapse rule's memory: its start (``baseline``), its noise, its best level so far."""

    sigma: float = float("nan")
    peak: float = -float("inf")
    margin: float = 0.0


class RewardCollapse(Rule):
    """The reward (median of recent points) giving back its gains, or ending below where it started."""

    name, title, direction = "reward_collapse", "reward collapse", "above"
    concepts = frozenset(REWARD_CONCEPTS)
    State = RewardState
    defaults = {"warn": 0.5, "critical": 1.0, "baseline_points": 10, "window": 10, "noise_z": 3.0,
                "min_points": 30}  # fmt: skip
    doc = RuleDoc(
        "Reward collapse",
        "GRPO/RLOO `reward`; PPO `objective/rlhf_reward`, `objective/scores`",
        "special",
        "gave back ≥ {warn} of its gain, or below its start (median of last {window}, noise margin "
        "{noise_z} σ)",
        "gave back ≥ {critical} of a real gain",
        "{persistence} (after {min_points} points)",
        "training undoing most of what it learned",
    )

    def swapped(self, warn: float, critical: float) -> str:
        return ""  # warn also fires below the start, which critical never does: no order between them

    def flags(
        self, values: np.ndarray, start: int, state: SlotState, params: RuleParams, context: Context
    ) -> Flags:
        count = len(values) - start
        if len(values) < params["min_points"]:
            return Flags.quiet(count)
        if state.baseline is None:
            state.baseline = float(np.median(values[: params["baseline_points"]]))
            state.sigma = noise_sigma(values[: params["min_points"]])
            state.peak = -np.inf
        window = params["window"]
        # Rolling median of `window` points has about 1.25 sigma / sqrt(window) of noise.
        margin = params["noise_z"] * 1.2533 * state.sigma / np.sqrt(window)
        state.margin = margin
        # The best level *held* for a window (the lowest rolling median of `window` points in a row):
        # a reward at 0 that shows 0.012 for one median and 0 again gained nothing to give back.
        lead = min(start, window - 1)
        history = rolling_median(values, start - lead, window)
        history[: max(params["min_points"] - 1 - (start - lead), 0)] = np.nan
        level = history[lead:]
        padded = np.concatenate((np.full(window - 1 - lead, np.nan), history))
        held = sliding_window_view(padded, window).min(axis=1)  # NaN while any of them waits
        peak = np.fmax.accumulate(np.concatenate(([state.peak], held)))[1:]
        state.peak = float(peak[-1]) if np.isfinite(peak[-1]) else state.peak
        baseline = state.baseline
        gain = peak - baseline
        real = gain > margin
        with np.errstate(invalid="ignore", divide="ignore"):
            given_back = np.where(real, (peak - level) / np.where(real, gain, 1.0), 0.0)
            below = level < baseline - margin
            on_w = (given_back >= (params.warn or np.inf)) | below
            ok_w = (given_back < (params.warn or np.inf) * params.clear_fraction) & ~(
                level < baseline - margin * params.clear_fraction
            )
            critical = params.critical if params.critical is not None else np.inf
            on_c = real & (given_back >= critical)
            ok_c = ~(given_back >= critical * params.clear_fraction)
        waiting = np.isnan(level) | ~np.isfinite(peak)
        on_w &= ~waiting
        on_c &= ~waiting
        severity = finite_or(np.fmax(given_back, (baseline - level) / max(margin, 1e-12)))
        return Flags(on_w, ok_w | waiting, on_c, ok_c | waiting, severity, level, np.full(count, baseline))

    def explain(
        self, tag: str, point: Point, level: Level, params: RuleParams, state: SlotState, context: Context
    ) -> str:
        baseline = state.baseline if state.baseline is not None else np.nan
        peak = state.peak
        window = params["window"]
        gain = peak - baseline
        head = f"{tag} (median of the last {window} points) fell to {num(point.stat)} at step {point.step}"
        if gain > state.margin:
            share = (peak - point.stat) / gain
            threshold = params.critical if level == Level.CRITICAL else params.warn
            # Below its start the share is over 100 % (1.9e+03 % of a tiny gain): what tells is the start.
            given_back = (
                f"now below its start: {num(point.stat)} vs start {num(baseline)}, best {num(peak)}"
                if point.stat < baseline
                else f"giving back {pct(share)} of its gain (start {num(baseline)}, best {num(peak)})"
            )
            # No threshold (warn switched off in a rules file): the warn came from falling below the start.
            why = (f"at {pct(threshold)}" if threshold is not None
                   else f"below its start by more than the noise margin {num(state.margin)}")  # fmt: skip
            return f"{head}, {given_back}; {level.label} {why} ({judged(level, params)})"
        return (
            f"{head}, below its starting level {num(baseline)} by more than the noise margin "
            f"{num(state.margin)} ({judged(level, params)})"
        )

    def advice(self, params: RuleParams, context: Context) -> str:
        c = context.calibration
        return (
            f"Training is undoing its progress: lower the learning rate{c.now('learning_rate')}, keep an "
            "earlier checkpoint, and look at entropy and KL around the step where it turned."
        )


class RewardStuck(Rule):
    """The reward not moving at all for many points: no learning signal is left."""

    name, title = "reward_stuck", "reward stuck"
    stage = Stage.CONSEQUENCE
    concepts = RewardCollapse.concepts
    defaults = {"points": 10, "tolerance": 1e-06}
    doc = RuleDoc(
        "Reward stuck",
        "the same reward tags",
        "special",
        "identical for {points} points",
        "-",
        "{points} in a row",
        "never critical: it is the consequence of another rule's finding",
    )

    def flags(
        self, values: np.ndarray, start: int, state: SlotState, params: RuleParams, context: Context
    ) -> Flags:
        points = params["points"]
        spread = rolling_range(values, start, points)
        scale = 1.0 + np.abs(values[start:])
        with np.errstate(invalid="ignore"):
            stuck = spread <= params["tolerance"] * scale
        count = len(spread)
        no = np.zeros(count, bool)
        return Flags(stuck, ~stuck, no, ~no, stuck.astype(float), values[start:], np.full(count, np.nan))

    def persistences(self, params: RuleParams) -> tuple[tuple[int, int], tuple[int, int]]:
        return (1, 1), (1, 1)  # the window of identical points is the persistence

    def explain(
        self, tag: str, point: Point, level: Level, params: RuleParams, state: SlotState, context: Context
    ) -> str:
        return (
            f"{tag} has been exactly {num(point.value)} for {params['points']} points or more "
            f"(at step {point.step}): no reward signal is left"
        )

    def advice(self, params: RuleParams, context: Context) -> str:
        return (
            "Every sample gets the same reward, so nothing is learned: check the reward functions on real "
            "completions, and look for an entropy collapse or completions that are all truncated."
        )
