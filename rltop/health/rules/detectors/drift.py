"""Slow drifts no per-point threshold sees, on every framework's names: the completions shrinking
toward nothing, the task score falling while the shaped reward rises, the gradient norm climbing.

The pattern they were built on (a real veRL GRPO run that collapsed, 59 steps): the mean response
length fell 970 -> 9 tokens in 20 steps, ``actor/grad_norm`` rose 10-20 × from step 38, and the task
score ``critic/score/mean`` fell -0.52 -> -0.95 while the KL-penalised reward ``critic/rewards/mean``
rose -18.8 -> -1.7: the policy bought the KL penalty back by writing less, and lost the task.
Each detector compares the run's level now (the median of its last `LEVEL_POINTS` points) with
its early level (the median of its first points), so one noisy point never decides.
"""

from __future__ import annotations

import numpy as np

from rltop.health.evidence.signals import LEVEL_POINTS, RunSignals, Trend
from rltop.health.findings import Finding, Level, Stage
from rltop.health.rules.base import Context
from rltop.health.rules.detectors import Detector
from rltop.health.rules.detectors.trends import detector_finding
from rltop.health.settings import RuleDoc, RuleParams, Rules
from rltop.health.wording import num, pct
from rltop.model.series import Series

SCORE_CONCEPTS = ("task_score", "reward", "shaped_reward")  # what the task pays, before shaping first


def early_and_now(signals: RunSignals, series: Series) -> tuple[float, float, np.ndarray, np.ndarray] | None:
    """(early level, level now, steps, values) of ``series``'s finite points (None: too few)."""
    steps, values = signals.finite_upto(series)
    if len(values) < 2 * LEVEL_POINTS:
        return None
    k = max(3, min(LEVEL_POINTS, len(values) // 10))
    return float(np.median(values[:k])), float(np.median(values[-LEVEL_POINTS:])), steps, values


def first_below(steps: np.ndarray, values: np.ndarray, level: float, points: int = 5) -> int:
    """The first step at which the rolling median of ``points`` points is below ``level``."""
    for end in range(points, len(values) + 1):
        if np.median(values[end - points : end]) < level:
            return int(steps[end - 1])
    return int(steps[-1])


def score_trend(signals: RunSignals, first: int, last: int) -> tuple[Series, Trend] | None:
    """The task score's (or reward's) level before step ``first`` against its level at ``last``."""
    series = signals.series(SCORE_CONCEPTS)
    if series is None:
        return None
    trend = signals.trend(series, first, last)
    return (series, trend) if trend is not None else None


class LengthCollapse(Detector):
    """The mean completion length falling toward 0 while the task does not improve."""

    name, title = "length_collapse", "completions shrinking"
    concepts = frozenset({"response_length"})
    defaults = {"warn": 0.25, "critical": 0.1, "min_length": 4.0}
    doc = RuleDoc(
        "Length collapse",
        "mean completion length (TRL `completions/mean_length`, veRL `response_length/mean`, OpenRLHF "
        "`response_length`)",
        "below",
        "< {warn} × its early level (medians of first and last points), early level ≥ {min_length} tokens",
        "< {critical} × with the task score (or reward) not rising since the fall began",
        "as long as it holds",
        "a real veRL GRPO collapse went 970 -> 9 tokens in 20 steps while its score fell; with the score "
        "rising it is a note (the reward pays for short answers); growing to the cap is the truncation "
        "rule's",
    )

    def judge(
        self, signals: RunSignals, params: RuleParams, context: Context, run: str, rules: Rules
    ) -> Finding | None:
        series = signals.concept("response_length")
        found = early_and_now(signals, series) if series is not None else None
        if found is None:
            return None
        early, now, steps, values = found
        if early < params["min_length"] or params.warn is None or now >= params.warn * early:
            return None
        share, last = now / early, int(steps[-1])
        since = first_below(steps, values, params.warn * early)
        scored = score_trend(signals, since, last)
        rising = scored is not None and scored[1].rising
        level = Level.WARN
        if params.critical is not None and share < params.critical and not rising:
            level = Level.CRITICAL
        if rising:
            level = Level.OK
        message = (
            f"{series.tag} fell to {num(now)} tokens ({pct(share)} of its early {num(early)}) by step {last}"
        )
        if scored is not None:
            score, trend = scored
            verb = "rose" if trend.rising else "fell" if trend.falling else "did not move"
            message += f", while {score.tag} {verb} ({num(trend.start)} → {num(trend.end)})"
        if level == Level.OK:
            message += ": the reward pays for short completions"
            advice = (
                "Fine if short answers are the goal; look at a few completions to be sure they still answer."
            )
        else:
            message += ": the policy writes less and less without doing the task better"
            advice = (
                "Look at the latest completions (empty, a bare answer, one repeated string?); a KL penalty "
                "summed over tokens or a length penalty can pay for writing nothing: lower it, add a format "
                "or correctness reward, and resume from a checkpoint before the fall."
            )
        return detector_finding(
            level,
            self.name,
            self.title,
            run,
            series.tag,
            last,
            now,
            message + ".",
            advice,
            since,
            Stage.SYMPTOM,
        )


class ScoreBehindShaping(Detector):
    """The task score falling while the shaped reward (score minus KL penalty, plus shaping) rises."""

    name, title = "score_behind_shaping", "shaping beats the task"
    concepts = frozenset({"task_score", "shaped_reward"})
    defaults = {"critical": 0.2}
    doc = RuleDoc(
        "Shaping beats the task",
        "task score (veRL `critic/score/mean`, TRL PPO `objective/scores`) against the shaped reward "
        "(veRL `critic/rewards/mean`, TRL PPO `objective/rlhf_reward`)",
        "special",
        "the score's level now below its early level and the shaped reward's above, each beyond its noise",
        "the score lost ≥ {critical} of its size",
        "as long as it holds",
        "the optimiser serves the shaping (a KL penalty, a length or format bonus) instead of the task: a "
        "real veRL collapse's score fell -0.52 -> -0.95 while its penalised reward rose -18.8 -> -1.7",
    )

    def judge(
        self, signals: RunSignals, params: RuleParams, context: Context, run: str, rules: Rules
    ) -> Finding | None:
        score, shaped = signals.concept("task_score"), signals.concept("shaped_reward")
        if score is None or shaped is None or len(score) < 2 * LEVEL_POINTS:
            return None
        first_step, last = int(score.steps[min(LEVEL_POINTS, len(score) - 1)]), int(score.steps[-1])
        down, up = signals.trend(score, first_step, last), signals.trend(shaped, first_step, last)
        if down is None or up is None or not down.falling or not up.rising:
            return None
        size = max(abs(down.start), abs(down.end), 1e-12)
        lost = (down.start - down.end) / size
        level = Level.CRITICAL if params.critical is not None and lost >= params.critical else Level.WARN
        message = (
            f"{score.tag} fell ({num(down.start)} → {num(down.end)}) between step {first_step} and step "
            f"{last} while {shaped.tag} rose ({num(up.start)} → {num(up.end)}): the policy optimises the "
            "shaping (the KL penalty or another term), not the task"
        )
        advice = (
            "Lower the KL coefficient or the shaping term that dominates (a KL penalty summed over tokens "
            "pays for short completions), check the completions, and resume from a checkpoint before the "
            "score turned."
        )
        value = float(signals.finite_upto(score)[1][-1])
        return detector_finding(
            level, self.name, self.title, run, score.tag, last, value, message + ".", advice, first_step,
            Stage.SYMPTOM,
        )  # fmt: skip


class GradNormRise(Detector):
    """The gradient norm's level many times its early level, held over the last points."""

    name, title = "grad_norm_rise", "grad norm rising"
    concepts = frozenset({"grad_norm"})
    defaults = {"warn": 5.0, "critical": 10.0}
    doc = RuleDoc(
        "Grad-norm rise",
        "`grad_norm` (veRL `actor/grad_norm`, OpenRLHF `actor_grad_norm`)",
        "above",
        "median of its last points ≥ {warn} × its early level",
        "≥ {critical} × with the task score (or reward) falling",
        "as long as it holds",
        "a sustained rise, not a spike (the spike rule sees those): a real veRL collapse ran at 10-20 × from "
        "step 38 while its score fell; healthy RLOO runs wander 2-12 with no trend",
    )

    def judge(
        self, signals: RunSignals, params: RuleParams, context: Context, run: str, rules: Rules
    ) -> Finding | None:
        series = signals.concept("grad_norm")
        found = early_and_now(signals, series) if series is not None else None
        if found is None or params.warn is None:
            return None
        early, now, steps, values = found
        if not early > 0 or now < params.warn * early:
            return None
        ratio, last = now / early, int(steps[-1])
        since = first_below(steps, -values, -params.warn * early)  # the rolling median first above warn
        scored = score_trend(signals, since, last)
        falling = scored is not None and scored[1].falling
        critical = params.critical is not None and ratio >= params.critical and falling
        message = (
            f"{series.tag} is at {num(now)} at step {last}, {num(ratio)}× its early level {num(early)}, "
            f"since step {since}"
        )
        if scored is not None:
            score, trend = scored
            verb = "fell" if trend.falling else "rose" if trend.rising else "held"
            message += f"; {score.tag} {verb} meanwhile ({num(trend.start)} → {num(trend.end)})"
        advice = (
            "Updates grow as the policy drifts: lower the learning rate, check max_grad_norm / grad_clip, "
            "and look for a collapse starting (completion lengths, entropy, the score)."
        )
        level = Level.CRITICAL if critical else Level.WARN
        return detector_finding(
            level,
            self.name,
            self.title,
            run,
            series.tag,
            last,
            now,
            message + ".",
            advice,
            since,
            Stage.SYMPTOM,
        )
