"""What an entropy collapse does to a run, and what a policy that still learns looks like.

An entropy that falls is not a collapse by itself: a healthy PPO run spends 85-90 % of its entropy
while its score and its validation score climb (veRL's published Qwen2.5-0.5B GSM8K baseline). What
tells a collapse is what it does to the run, and each of these is a *consequence*:

- the completions converging: their distinct bigrams (`rltop.model.completions.distinct_bigrams`)
  down to half their early level, or half of them identical within their group;
- a reward function sacrificed: one function losing more than half of its level or of its gain
  while the total rises (the policy buys one goal with another);
- groups without signal rising: ``frac_reward_zero_std`` climbing while the policy degenerates;
- an extreme KL to the reference (beyond the KL rule's ``extreme`` level);
- drastic updates (a clip or ratio rule critical) or the reward falling (`RunSignals.damage`).

A policy that still learns shows it on evidence the training reward cannot fake: a validation score
rising (held-out prompts) or completions that stay varied. The training reward rising is a weaker
sign (a collapsed policy can maximise it: the x-prefix run's reward climbs to its maximum while it
writes one string).
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from rltop.health.evidence.signals import REWARD_CONCEPTS
from rltop.health.wording import num, pct
from rltop.model.catalog import describe

CONVERGED = 0.5  # distinct bigrams at or below this share of their early level: converging
IDENTICAL = 0.5  # ... or this share of a step's completions identical within their group
HOLDING = 0.8  # distinct bigrams at or above this share of their early level: varied
EARLY_STEPS = 5  # completion steps whose median diversity is the early level
RECENT_STEPS = 3  # completion steps whose median diversity is the level at a step
SACRIFICED = 0.5  # a reward function lost more than this share of its level or its gain (the default
# of the ``reward_sacrificed`` detector's ``share``, which a rules file may change)
MATERIAL_GAIN = 0.1  # a function's gain counts once it is a tenth of its early level (and beyond noise)
ZERO_STD_LEVEL = 0.5  # groups without signal at or above this share ...
ZERO_STD_RISE = 0.3  # ... and this much above where they were before the stretch
VALIDATION_PREFIXES = ("val-core/", "val/test_score/", "val-aux/")  # veRL's held-out scores


def _summaries(signals, first: int, last: int):
    """(early diversity, the completion summaries of steps first..last), None without completions."""
    index = signals.run.completions
    if not index:
        return None
    summaries = [s for s in index.summaries() if signals.upto is None or s.step <= signals.upto]
    early = [s.diversity for s in summaries[:EARLY_STEPS] if s.diversity is not None]
    window = [s for s in summaries if first <= s.step <= last]
    if not early or not window:
        return None
    return float(np.median(early)), window


def completions_converging(signals, first: int, last: int) -> str | None:
    """ "the completions converging (distinct bigrams 0.99 → 0.40 by step 204; …)", or None."""
    found = _summaries(signals, first, last)
    if found is None:
        return None
    early, window = found
    for at in range(len(window)):  # the first step of the stretch where they had converged
        recent = [
            s.diversity for s in window[max(0, at - RECENT_STEPS + 1) : at + 1] if s.diversity is not None
        ]
        summary = window[at]
        level = float(np.median(recent)) if recent else None
        same = summary.identical / summary.rows if summary.rows else 0.0
        if (level is not None and level <= CONVERGED * early) or same >= IDENTICAL:
            parts = [] if level is None else [f"distinct bigrams {early:.2f} → {level:.2f}"]
            if summary.top_count > 1:
                parts.append(f"{summary.top_count} of {summary.rows} write {summary.top_text[:24]!r}")
            return f"the completions converging by step {summary.step} ({'; '.join(parts)})"
    return None


def diversity_holding(signals, first: int, last: int) -> str | None:
    """ "the completions stay varied (distinct bigrams 0.99 → 0.95)", or None (converging, or none logged)."""
    found = _summaries(signals, first, last)
    if found is None:
        return None
    early, window = found
    recent = [s.diversity for s in window[-RECENT_STEPS:] if s.diversity is not None]
    if not recent or np.median(recent) < HOLDING * early:
        return None
    return f"the completions stay varied (distinct bigrams {early:.2f} → {float(np.median(recent)):.2f})"


def validation_rising(signals, first: int, last: int) -> str | None:
    """ "the validation score rose (eval/reward 0.38 → 0.54)": a held-out score rising by ``last``."""
    for tag, series in signals.run.series.items():
        if not _is_validation(tag) or len(series) < 3:
            continue
        trend = signals.trend(series, first, last)
        if trend is not None and trend.rising:
            return f"the validation score rose ({tag} {num(trend.start)} → {num(trend.end)})"
    return None


def _is_validation(tag: str) -> bool:
    info = describe(tag)
    return (info.split == "eval" and info.concept in REWARD_CONCEPTS) or tag.startswith(VALIDATION_PREFIXES)


def sacrificed_rewards(signals, last: int) -> list[tuple[str, str]]:
    """(function, "0.855 → 0.219, −74 %") of each ``rewards/<f>/mean`` that lost more than half of its
    level or of its gain by step ``last`` while the total reward rose."""
    rules = signals.rules
    limit = rules["reward_sacrificed"]["share"] if rules is not None else SACRIFICED
    total = signals.series(REWARD_CONCEPTS)
    if total is None:
        return []
    steps, values = signals.finite_upto(total, last)
    if len(values) < 2 * 10:
        return []
    trend = signals.trend(total, int(steps[len(steps) // 2]), last)
    early_total, now_total = float(np.median(values[:10])), float(np.median(values[-10:]))
    if trend is None or now_total <= early_total + trend.margin:
        return []  # the total did not rise: the reward rules speak
    functions = [key for key in signals.keys() if key.startswith("rewards/") and key.endswith("/mean")]  # noqa: SIM118
    if len(functions) < 2:
        return []  # one reward function is the total: nothing to trade it for
    found = []
    for key in functions:
        series = signals.tag(key)
        _, own = signals.finite_upto(series, last)
        if len(own) < 20:
            continue
        k = max(10, len(own) // 10)
        early, now = float(np.median(own[:k])), float(np.median(own[-k:]))
        peak = float(np.max(np.median(sliding_window_view(own, k), axis=1)))
        margin = 3.0 * 1.2533 * signals.noise(series) / np.sqrt(k)
        gain = peak - early
        lost_level = early > margin and now < (1 - limit) * early  # half of where it started
        # Half of what it had gained, when the gain was material: beyond its noise and a tenth of
        # where it started (a wobble of 0.87 -> 0.93 -> 0.89 is no gain given back). The peak is the
        # best of many windows, so noise alone lifts it: gain and loss must each clear twice the
        # margin of one median (healthy runs' 0/1 rewards, mean of 16, wander 0.16 -> 0.5 -> 0.31).
        material = gain > max(2 * margin, MATERIAL_GAIN * abs(early))
        lost_gain = material and peak - now > max(limit * gain, 2 * margin)
        if lost_level or lost_gain:
            base = early if lost_level else peak
            change = (now - base) / abs(base) if base else 0.0
            name = key[len("rewards/") : -len("/mean")]
            found.append((name, f"{num(base)} → {num(now)}, {pct(change)}"))
    return found


def zero_std_rising(signals, first: int, last: int) -> str | None:
    """ "groups without signal rising (0 → 0.75)": ``frac_reward_zero_std`` up to a high level."""
    series = signals.concept("zero_std_groups")
    if series is None:
        return None
    trend = signals.trend(series, first, last)
    if trend is None or trend.end < ZERO_STD_LEVEL or trend.end < trend.start + ZERO_STD_RISE:
        return None
    return f"groups without signal rising ({num(trend.start)} → {num(trend.end)})"


def extreme_kl(signals, first: int, last: int) -> str | None:
    """ "an extreme KL (kl 14.7 at step 241)": the KL to the reference past its rule's ``extreme``."""
    rules = signals.rules
    if rules is None:
        return None
    for concept, rule in (("kl_reference_token", "kl_blowup_token"), ("kl_reference_sequence", "kl_blowup")):
        series = signals.concept(concept)
        limit = rules[rule]["extreme"]
        if series is None or limit is None:
            continue
        steps, values = signals.finite_upto(series, last)
        inside = steps >= first
        if inside.any() and values[inside].max() >= limit:
            at = int(np.argmax(np.where(inside, values, -np.inf)))
            return f"an extreme KL ({series.tag} {num(values[at])} at step {int(steps[at])})"
    return None


def consequences(signals, first: int, last: int) -> list[str]:
    """What a collapse has done to the run during steps ``first..last`` (and just after)."""
    end = max(signals.evidence_end(last), last)
    found = [
        completions_converging(signals, first, end),
        zero_std_rising(signals, first, end),
        extreme_kl(signals, first, end),
    ]
    sacrificed = sacrificed_rewards(signals, end)
    if sacrificed:
        found.append("a reward function sacrificed (" + "; ".join(f"{f}: {t}" for f, t in sacrificed) + ")")
    damage = [reason for reason in signals.damage(first, last) if not reason.startswith("the entropy")]
    return [text for text in found if text] + damage


def learning_signs(signals, first: int, last: int) -> tuple[list[str], list[str]]:
    """(strong signs, weak signs) that the policy still learns during steps ``first..last``.

    Strong: a validation score rising, completions that stay varied. Weak: the training reward rising.
    """
    signs = (validation_rising(signals, first, last), diversity_holding(signals, first, last))
    strong = [sign for sign in signs if sign]
    reward = signals.series(REWARD_CONCEPTS)
    trend = signals.trend(reward, first, last) if reward is not None else None
    weak = (
        [f"the reward rose ({num(trend.start)} → {num(trend.end)})"]
        if trend is not None and trend.rising
        else []
    )
    return strong, weak


def degenerate(signals, first: int, last: int) -> str | None:
    """Why a run whose groups all score alike is not "solved": its policy writes one string."""
    converging = completions_converging(signals, first, last)
    if converging:
        return converging
    share = signals.entropy_share(last)
    if share is not None and share < 0.1:
        return f"the entropy is down to {pct(share)} of its early level"
    return None
