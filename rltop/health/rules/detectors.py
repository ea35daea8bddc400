"""Run-level detectors: patterns that only show across several metrics, or over a whole stretch.

Each detector looks at the run as it is now (no episodes, no latching: a finding holds while its
pattern does) and says something no single threshold can:

* ``reward_plateau``: the reward has flattened; at its best level that is "finished learning",
  information rather than an alarm;
* ``reward_dominance``: one reward function carries the reward's whole gain while the others stay
  flat or fall a little (the policy may be trading one goal for another);
* ``reward_sacrificed``: a reward function lost more than half of its level or its gain while the
  total rose: the trade is made, critical;
* ``reward_hacking``: the early signs of over-optimisation: the reward rising while completions run
  to the length cap (GRPO), while ``rlhf_reward`` falls (PPO), or while the eval reward falls;
* ``collapse_forecast``: the entropy (or KL) moving steadily toward its threshold, with the number
  of steps until it gets there at the current rate, before the rule fires.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from rltop.health.evidence.collapse import sacrificed_rewards
from rltop.health.evidence.signals import ENTROPY_CONCEPTS, LENGTH_CONCEPTS, REWARD_CONCEPTS, RunSignals
from rltop.health.findings import Finding, Level, Stage
from rltop.health.rules.base import Context, num, pct
from rltop.health.settings import RuleParams, Rules
from rltop.model.catalog import describe

_SLOPE_SAMPLE = 64  # Theil-Sen slopes are taken on at most this many points of a window
DETECTORS = ("reward_plateau", "reward_dominance", "reward_sacrificed", "reward_hacking", "collapse_forecast")


def slope(steps: np.ndarray, values: np.ndarray) -> float:
    """Theil-Sen slope (median of pairwise slopes) per step, robust to outliers; 0 for < 2 points."""
    if len(values) < 2:
        return 0.0
    pick = np.unique(np.linspace(0, len(values) - 1, min(len(values), _SLOPE_SAMPLE)).astype(int))
    x, y = steps[pick].astype(float), values[pick]
    i, j = np.triu_indices(len(x), 1)
    dx = x[j] - x[i]
    keep = dx > 0
    return float(np.median((y[j] - y[i])[keep] / dx[keep])) if keep.any() else 0.0


def _window(count: int, params: RuleParams) -> int:
    """Points in the recent window: ``share`` of the run, at least ``window`` points."""
    return min(count, max(int(params["window"]), int(count * params["share"])))


def _is_flat(steps: np.ndarray, values: np.ndarray, sigma: float, tolerance: float, z: float = 2.0) -> bool:
    """Confidently flat: the fitted change end to end, plus ``z`` standard errors, is within ``tolerance``.

    Failing to see a slope in noise is not flatness: the stretch must be long and quiet enough that
    even its uncertainty stays within ``tolerance`` (in the values' units).
    """
    change = slope(steps, values) * float(steps[-1] - steps[0])
    # A regression over n points estimates the change end to end with about sigma * sqrt(12 / n).
    error = max(sigma, 1e-12) * np.sqrt(12.0 / len(values))
    return abs(change) + z * error <= tolerance


def _best_level(values: np.ndarray, k: int) -> float:
    """The highest median of ``k`` consecutive points, on block medians when the series is long."""
    block = max(1, len(values) // 500)
    if block > 1:
        usable = len(values) // block * block
        values = np.median(values[:usable].reshape(-1, block), axis=1)
        k = max(2, k // block)
    return float(np.max(np.median(sliding_window_view(values, min(k, len(values))), axis=1)))


def _finding(level: Level, rule: str, title: str, run: str, tag: str, step: int, value: float, message: str,
             advice: str, first: int, stage: Stage) -> Finding:
    return Finding(level, rule, run, tag, step, value, message, advice, first_step=first, last_step=step,
                   active=True, title=title, stage=stage)


def reward_plateau(signals: RunSignals, params: RuleParams, context: Context, run: str) -> Finding | None:
    """The reward flat at its best level over a long stretch, said since when: a note, never an alarm.

    Flat means the reward's change over the stretch, with its uncertainty, is within ``tolerance`` of
    what it gained since the start (a Theil-Sen slope test); the stretch is at least ``share`` of
    the run and ``window`` points.
    """
    series = signals.series(REWARD_CONCEPTS)
    if series is None:
        return None
    steps, values = signals.finite_upto(series)
    count = len(values)
    if count < params["min_points"]:
        return None
    sigma = signals.noise(series)
    # Levels are medians of k points: the best of many short means would be the luckiest noise.
    # The best level is looked for among block medians (at most ~500 blocks: bounded cost).
    k = max(10, min(50, count // 10))
    level_now = float(np.median(values[-k:]))
    first = float(np.median(values[:k]))
    best = _best_level(values, k)
    margin = 3.0 * 1.2533 * sigma / np.sqrt(k)
    gain = level_now - first
    if gain <= margin or level_now < best - margin:
        return None  # never rose, or no longer at its best (the reward rules speak then)
    tolerance = params["tolerance"] * gain
    window = _window(count, params)
    if not _is_flat(steps[-window:], values[-window:], sigma, tolerance, params["z"]):
        return None
    start = count - window
    quarter = max(window // 4, 1)
    while start > 0:  # how far back the flat stretch reaches: flat, and already at today's level
        earlier = max(0, start - quarter)
        head = float(np.median(values[earlier : earlier + quarter]))
        if abs(head - level_now) > tolerance or not _is_flat(
            steps[earlier:], values[earlier:], sigma, tolerance, params["z"]
        ):
            break
        start = earlier
    since, tag = int(steps[start]), series.tag
    collapse = signals.overlapping("entropy_collapse", since, int(steps[-1]))
    if collapse:
        collapsed = min(e[1] for e in collapse)
        message = (f"{tag} has been flat since step {since} ({num(level_now)} at step {int(steps[-1])}): "
                   f"nothing more is learned since the entropy collapsed (step {collapsed})")
        advice = "See the entropy finding: the policy stopped exploring; resume from a checkpoint before it."
    else:
        message = (f"{tag} has been flat since step {since} ({num(level_now)} at step {int(steps[-1])}), at "
                   f"its best level (it rose from {num(first)}): training has finished learning what this "
                   "reward asks")
        advice = ("Nothing is wrong: keep this checkpoint and stop, or make the task harder (new prompts, a "
                  "stricter reward); more steps mostly move the policy further from its reference.")
    return _finding(Level.OK, "reward_plateau", "reward plateau", run, tag, int(steps[-1]), level_now,
                    message + ".", advice, since, Stage.NOTE)


def reward_dominance(signals: RunSignals, params: RuleParams, context: Context, run: str) -> Finding | None:
    """One ``rewards/<f>/mean`` carrying most of the reward's gain while the others are flat or fall."""
    moves: dict[str, tuple[float, float, int, float]] = {}  # f -> (change, margin, last step, last value)
    for key in signals.keys():  # noqa: SIM118 (a method of RunSignals, not a dict)
        if not (key.startswith("rewards/") and key.endswith("/mean")):
            continue
        steps, values = signals.finite_upto(signals.tag(key))
        if len(values) < params["min_points"]:
            continue
        k = max(10, len(values) // 10)
        change = float(np.median(values[-k:]) - np.median(values[:k]))
        margin = 3.0 * 1.2533 * signals.noise(signals.tag(key)) / np.sqrt(k)
        moves[key[len("rewards/"):-len("/mean")]] = (change, margin, int(steps[-1]), float(values[-1]))
    if len(moves) < 2:
        return None
    gains = {f: m[0] for f, m in moves.items() if m[0] > m[1]}
    total = sum(gains.values())
    if not gains or total <= 0:
        return None
    leader = max(gains, key=lambda f: gains[f])
    if gains[leader] < params["share"] * total:
        return None
    others = {f: m for f, m in moves.items() if f != leader}
    falling = [f for f, m in others.items() if m[0] < -m[1]]
    if any(m[0] > m[1] for m in others.values()):
        return None  # another function rises too: shared progress
    change, _, step, value = moves[leader]
    tag = signals.tag(f"rewards/{leader}/mean").tag
    if falling and sacrificed_rewards(signals, step):
        return None  # more than half of it lost: `reward_sacrificed` says it, critical
    if falling:
        lost = ", ".join(f"{f} ({num(others[f][0])})" for f in falling)
        level = Level.WARN
        message = (f"{tag} carries the reward's gain ({num(change)} since the start, {num(value)} at step "
                   f"{step}) while {lost} fell: the policy trades one goal for another")
        advice = ("Look at completions that score high on it and low on the others; reweight the reward "
                  "functions (reward_weights) or make the falling ones stricter to stop the trade.")
    else:
        level = Level.OK
        flat = ", ".join(others)
        message = (f"{tag} carries {pct(gains[leader] / total)} of the reward's gain ({num(change)} since "
                   f"the start, {num(value)} at step {step}); {flat} has not moved")
        advice = ("Fine if that function is the goal; otherwise the flat ones may be too hard or too sparse "
                  "to teach anything (see their rewards/*/std).")
    return _finding(level, "reward_dominance", "one reward function dominating", run, tag, step, value,
                    message + ".", advice, step, Stage.SYMPTOM)


def reward_sacrificed(signals: RunSignals, params: RuleParams, context: Context, run: str) -> Finding | None:
    """A reward function that lost more than ``share`` of its level or its gain while the total rose:
    the policy buys one goal with another (critical: the run optimises something you did not ask)."""
    reward = signals.series(REWARD_CONCEPTS)
    if reward is None or len(signals.finite_upto(reward)[1]) < params["min_points"]:
        return None
    last = int(signals.finite_upto(reward)[0][-1])
    lost = sacrificed_rewards(signals, last)
    if not lost:
        return None
    name, change = lost[0]
    series = signals.tag(f"rewards/{name}/mean")
    trend = signals.trend(reward, int(reward.steps[0]), last)
    total = f"{reward.tag} rose" + (f" ({num(trend.start)} → {num(trend.end)})" if trend is not None else "")
    others = "".join(f"; also {f} ({t})" for f, t in lost[1:])
    message = (f"{series.tag} fell ({change}) while {total}: the policy sacrifices {name} for the other "
               f"reward functions{others}")
    advice = ("Look at completions that score high overall and low on it: the policy found a way to buy the "
              "total with one function; raise its weight (reward_weights), or make the rising ones stricter.")
    value = float(signals.finite_upto(series)[1][-1])
    return _finding(Level.CRITICAL, "reward_sacrificed", "a reward function sacrificed", run, series.tag,
                    last, value, message + ".", advice, last, Stage.SYMPTOM)


def reward_hacking(signals: RunSignals, params: RuleParams, context: Context, run: str) -> Finding | None:
    """A reward rising while a sign of over-optimisation rises with it (early warning)."""
    found = _hacking_pattern(signals, params, context)
    if found is None:
        return None
    series, trend, first, what, advice = found
    last = int(series.steps[-1])
    message = (f"{series.tag} rose from {num(trend.start)} to {num(trend.end)} between step {first} and step "
               f"{last} while {what}: an early sign of reward hacking")
    return _finding(Level.WARN, "reward_hacking", "reward hacking", run, series.tag, last, trend.end,
                    message + ".", advice, first, Stage.SYMPTOM)


def _rising(signals: RunSignals, series, params: RuleParams):
    """(trend, first step of the recent window) when ``series`` rose over its recent window."""
    if series is None:
        return None
    steps, values = signals.finite_upto(series)
    if len(values) < 2 * params["window"]:
        return None
    first = int(steps[len(values) - _window(len(values), params)])
    trend = signals.trend(series, first, int(steps[-1]))
    return (trend, first) if trend is not None and trend.rising else None


def _hacking_pattern(signals: RunSignals, params: RuleParams, context: Context):
    """(rising series, its trend, window start, what rose with it, advice) of the first pattern seen.

    GRPO: the reward with completion lengths running to the cap or truncation rising. PPO: the
    score with ``rlhf_reward`` falling (the score bought with KL). Any trainer: the train reward
    with the eval reward falling at its last evaluations.
    """
    reward = signals.series(("reward", "task_score"))
    rising = _rising(signals, reward, params)
    if rising is not None:
        trend, first = rising
        sign = _length_sign(signals, params, context, first, int(reward.steps[-1]))
        if sign is not None:
            return reward, trend, first, *sign
    scores = signals.concept("task_score")
    rising = _rising(signals, scores, params)
    rlhf = signals.concept("shaped_reward")
    if rising is not None and rlhf is not None:
        trend, first = rising
        down = signals.trend(rlhf, first, int(scores.steps[-1]))
        if down is not None and down.falling:
            return (scores, trend, first,
                    f"objective/rlhf_reward fell ({num(down.start)} → {num(down.end)}): the score is bought "
                    "with KL",
                    "Raise kl_coef or lower the learning rate; keep the checkpoint from before the turn.")
    main = signals.series(REWARD_CONCEPTS)
    rising = _rising(signals, main, params)
    sign = _eval_falls(signals) if rising is not None else None
    if sign is not None:
        return main, rising[0], rising[1], *sign
    return None


def _length_sign(signals: RunSignals, params: RuleParams, context: Context, first: int,
                 last: int) -> tuple[str, str] | None:
    """Completions running to the cap, or truncation rising, over steps ``first..last``."""
    cap = context.calibration.max_completion_length
    length = signals.series(LENGTH_CONCEPTS)
    if length is not None and cap:
        trend = signals.trend(length, first, last)
        if trend is not None and trend.rising and trend.end >= params["length_cap"] * cap:
            return (f"completions grew to {num(trend.end)} tokens, near the cap {num(cap)}",
                    "Longer is being rewarded: check completions for padding or repetition, add a length "
                    "penalty or a format reward, or use a length-normalised loss (dr_grpo).")
    clipped = signals.concept("truncation_ratio")
    if clipped is not None:
        trend = signals.trend(clipped, first, last)
        if trend is not None and trend.rising and trend.end >= params["clipped"]:
            return (f"truncated completions rose to {pct(trend.end)}",
                    "The policy learns not to stop: check completions at the cap, and reward ending with "
                    "EOS.")
    return None


def _eval_falls(signals: RunSignals) -> tuple[str, str] | None:
    """The eval reward falling at its last three evaluations (while the train reward rises)."""
    for tag, series in signals.run.series.items():
        info = describe(tag)
        if info.split != "eval" or info.concept not in REWARD_CONCEPTS or len(series) < 3:
            continue
        values = series.values[np.isfinite(series.values)][-3:]
        if len(values) == 3 and values[0] > values[1] > values[2]:
            return (f"{tag} fell at the last three evaluations ({num(values[0])} → {num(values[2])})",
                    "The policy fits the training reward, not the task: stop at the best eval checkpoint, "
                    "raise the KL penalty, or make the reward harder to game.")
    return None


def collapse_forecast(signals: RunSignals, params: RuleParams, context: Context, run: str,
                      rules: Rules) -> Finding | None:
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


def _forecast(signals: RunSignals, series, target: float, direction: int, params: RuleParams,
              context: Context) -> tuple[float, float, int, float] | None:
    """(steps to reach ``target``, slope, last step, level now) when a steady move gets there in time."""
    steps, values = signals.finite_upto(series)
    if len(values) < 2 * params["window"]:
        return None
    window = _window(len(values), params)
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


def _forecast_entropy(signals: RunSignals, entropy, params: RuleParams, context: Context, run: str,
                      rule: RuleParams) -> Finding | None:
    _, values = signals.finite_upto(entropy)
    if len(values) < 10 or rule.warn is None:
        return None
    early = max(float(np.median(values[:3])), float(np.median(values[:10])))
    target = early * rule.warn
    found = _forecast(signals, entropy, target, -1, params, context)
    if found is None:
        return None
    steps_to, rate, last, now = found
    message = (f"{entropy.tag} is falling {num(-rate)} per step ({num(now)} at step {last}): at this rate it "
               f"reaches {pct(rule.warn)} of its early level ({num(target)}) in ~{steps_to:.0f} steps, "
               f"around step {last + steps_to:.0f}")
    advice = ("Nothing has fired yet: if completions start to repeat, lower the learning rate or raise the "
              "KL penalty before the collapse, not after it.")
    return _finding(Level.OK, "collapse_forecast", "collapse forecast", run, entropy.tag, last, now,
                    message + ".", advice, last, Stage.NOTE)


def _forecast_kl(signals: RunSignals, params: RuleParams, context: Context, run: str,
                 rules: Rules) -> Finding | None:
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
        message = (f"{series.tag} is rising {num(rate)} per step ({num(now)} at step {last}): at this rate "
                   f"it reaches its warning level {num(rule.warn)} in ~{steps_to:.0f} steps, around step "
                   f"{last + steps_to:.0f}")
        advice = ("Nothing has fired yet: watch the reward and entropy as the KL climbs; raise the KL "
                  "penalty if they turn.")
        return _finding(Level.OK, "collapse_forecast", "collapse forecast", run, series.tag, last, now,
                        message + ".", advice, last, Stage.NOTE)
    return None


DETECTOR_QUANTUM = 200  # detectors look at the run up to its latest multiple of last_step / 200 steps


def detector_horizon(last_step: int | None) -> int | None:
    """The step up to which detectors judge a run: the latest multiple of ~0.5 % of its length.

    Plateaus, trades between rewards and forecasts move slowly: judging them again on every new
    point would cost a few milliseconds per live batch for nothing. Judging the run up to a step
    that advances in quanta makes them cost that once per quantum, and a live engine and a one-shot
    load (which judge the same prefix) agree exactly.
    """
    if last_step is None:
        return None
    quantum = max(1, last_step // DETECTOR_QUANTUM)
    return last_step - last_step % quantum


def judge_run(signals: RunSignals, rules: Rules, context: Context, run: str) -> list[Finding]:
    """Every run-level detector's finding for one run (the enabled ones), on ``signals``' view."""
    found: list[Finding | None] = []
    for name, judge in (("reward_plateau", reward_plateau), ("reward_dominance", reward_dominance),
                        ("reward_sacrificed", reward_sacrificed), ("reward_hacking", reward_hacking)):
        params = rules[name]
        if params.enabled:
            found.append(judge(signals, params, context, run))
    forecast = rules["collapse_forecast"]
    if forecast.enabled:
        found.append(collapse_forecast(signals, forecast, context, run, rules))
    return [finding for finding in found if finding is not None]
