"""The collapse forecast: the entropy (or KL) heading steadily for its rule's warn level, and when."""

from __future__ import annotations

import numpy as np

from rltop.health.evidence.signals import ENTROPY_CONCEPTS, RunSignals
from rltop.health.findings import Finding, Level, Stage
from rltop.health.rules.base import Context
from rltop.health.rules.detectors import Detector
from rltop.health.rules.detectors.trends import detector_finding, slope, window_of
from rltop.health.settings import RuleDoc, RuleParams, Rules
from rltop.health.wording import num, pct


def collapse_forecast(
    signals: RunSignals, params: RuleParams, context: Context, run: str, rules: Rules
) -> Finding | None:
    """The entropy (or KL) heading steadily toward its threshold: in how many steps, at this rate."""
    entropy = signals.series(ENTROPY_CONCEPTS)
    if entropy is not None:
        found = _forecast_entropy(signals, entropy, params, context, run, rules["entropy_collapse"])
        if found is not None:
            return found
    return _forecast_kl(signals, params, context, run, rules)


def _horizon(signals: RunSignals, context: Context, last: int) -> float:
    """How far ahead a forecast may look: to the planned last step, else as far as the run has come."""
    final = context.calibration.final_step()
    return float(final - last) if final is not None else float(last)


def _forecast(
    signals: RunSignals, series, target: float, direction: int, params: RuleParams, context: Context
) -> tuple[float, float, int, float] | None:
    """(steps to reach ``target``, slope, last step, level now) when a steady move gets there in time."""
    steps, values = signals.finite_upto(series)
    if len(values) < 2 * params["window"]:
        return None
    window = window_of(len(values), params)
    tail_steps, tail = steps[-window:], values[-window:]
    rate = slope(tail_steps, tail)
    now = float(np.median(tail[-10:]))
    sigma = signals.noise(series)
    error = max(sigma, 1e-12) * np.sqrt(12.0 / len(tail))
    if rate * direction <= 0 or abs(rate) * float(tail_steps[-1] - tail_steps[0]) <= 3.0 * error:
        return None  # not heading there, or not beyond its noise
    distance = (target - now) * direction
    if distance <= 0:
        return None  # already there: the rule speaks
    steps_to = distance / abs(rate)
    last = int(steps[-1])
    if steps_to > _horizon(signals, context, last):
        return None
    return steps_to, rate, last, now


def _forecast_entropy(
    signals: RunSignals, entropy, params: RuleParams, context: Context, run: str, rule: RuleParams
) -> Finding | None:
    _, values = signals.finite_upto(entropy)
    if len(values) < 10 or rule.warn is None:
        return None
    early = max(float(np.median(values[:3])), float(np.median(values[:10])))
    target = early * rule.warn
    found = _forecast(signals, entropy, target, -1, params, context)
    if found is None:
        return None
    steps_to, rate, last, now = found
    message = (
        f"{entropy.tag} is falling {num(-rate)} per step ({num(now)} at step {last}): at this rate it "
        f"reaches {pct(rule.warn)} of its early level ({num(target)}) in ~{steps_to:.0f} steps, "
        f"around step {last + steps_to:.0f}"
    )
    advice = (
        "Nothing has fired yet: if completions start to repeat, lower the learning rate or raise the "
        "KL penalty before the collapse, not after it."
    )
    return detector_finding(
        Level.OK,
        "collapse_forecast",
        "collapse forecast",
        run,
        entropy.tag,
        last,
        now,
        message + ".",
        advice,
        last,
        Stage.NOTE,
    )


def _forecast_kl(
    signals: RunSignals, params: RuleParams, context: Context, run: str, rules: Rules
) -> Finding | None:
    pairs = (("kl_reference_token", "kl_blowup_token"), ("kl_reference_sequence", "kl_blowup"))
    for concept, rule_name in pairs:
        series = signals.concept(concept)
        rule = rules[rule_name]
        if series is None or rule.warn is None:
            continue
        found = _forecast(signals, series, rule.warn, 1, params, context)
        if found is None:
            continue
        steps_to, rate, last, now = found
        message = (
            f"{series.tag} is rising {num(rate)} per step ({num(now)} at step {last}): at this rate "
            f"it reaches its warning level {num(rule.warn)} in ~{steps_to:.0f} steps, around step "
            f"{last + steps_to:.0f}"
        )
        advice = (
            "Nothing has fired yet: watch the reward and entropy as the KL climbs; raise the KL "
            "penalty if they turn."
        )
        return detector_finding(
            Level.OK,
            "collapse_forecast",
            "collapse forecast",
            run,
            series.tag,
            last,
            now,
            message + ".",
            advice,
            last,
            Stage.NOTE,
        )
    return None


class CollapseForecast(Detector):
    """The entropy or the KL moving steadily toward its rule's warn level: in how many steps."""

    name, title = "collapse_forecast", "collapse forecast"
    defaults = {"window": 20, "share": 0.2}
    doc = RuleDoc(
        "Collapse forecast",
        "entropy, KL",
        "special",
        "note: a steady move over its last {share} reaches the rule's warn level before the planned end",
        "-",
        "≥ {window} points",
        "a note: it says when, at the current rate, before the rule fires",
    )

    def judge(
        self, signals: RunSignals, params: RuleParams, context: Context, run: str, rules: Rules
    ) -> Finding | None:
        return collapse_forecast(signals, params, context, run, rules)
