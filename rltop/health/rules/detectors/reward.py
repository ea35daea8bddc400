"""The reward detectors: a plateau at its best, one function dominating or sacrificed, signs of hacking."""

from __future__ import annotations

import numpy as np

from rltop.health.evidence.collapse import learning_signs, sacrificed_rewards
from rltop.health.evidence.signals import LENGTH_CONCEPTS, REWARD_CONCEPTS, RunSignals
from rltop.health.findings import Finding, Level, Stage
from rltop.health.rules.base import Context
from rltop.health.rules.detectors import Detector
from rltop.health.rules.detectors.trends import best_level, detector_finding, is_flat, window_of
from rltop.health.settings import RuleDoc, RuleParams, Rules
from rltop.health.wording import num, pct
from rltop.model.catalog import describe


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
    best = best_level(values, k)
    margin = 3.0 * 1.2533 * sigma / np.sqrt(k)
    gain = level_now - first
    if gain <= margin or level_now < best - margin:
        return None  # never rose, or no longer at its best (the reward rules speak then)
    tolerance = params["tolerance"] * gain
    window = window_of(count, params)
    if not is_flat(steps[-window:], values[-window:], sigma, tolerance, params["z"]):
        return None
    start = count - window
    quarter = max(window // 4, 1)
    while start > 0:  # how far back the flat stretch reaches: flat, and already at today's level
        earlier = max(0, start - quarter)
        head = float(np.median(values[earlier : earlier + quarter]))
        if abs(head - level_now) > tolerance or not is_flat(
            steps[earlier:], values[earlier:], sigma, tolerance, params["z"]
        ):
            break
        start = earlier
    since, tag = int(steps[start]), series.tag
    collapse = signals.overlapping("entropy_collapse", since, int(steps[-1]))
    if collapse and learning_signs(signals, collapse[0][1], int(steps[-1]))[0]:
        collapse = []  # the entropy fell while a validation score rose: spent to learn, not collapsed
    if collapse:
        collapsed = min(e[1] for e in collapse)
        message = (
            f"{tag} has been flat since step {since} ({num(level_now)} at step {int(steps[-1])}): "
            f"nothing more is learned since the entropy collapsed (step {collapsed})"
        )
        advice = "See the entropy finding: the policy stopped exploring; resume from a checkpoint before it."
    else:
        message = (
            f"{tag} has been flat since step {since} ({num(level_now)} at step {int(steps[-1])}), at "
            f"its best level (it rose from {num(first)}): training has finished learning what this "
            "reward asks"
        )
        advice = (
            "Nothing is wrong: keep this checkpoint and stop, or make the task harder (new prompts, a "
            "stricter reward); more steps mostly move the policy further from its reference."
        )
    return detector_finding(
        Level.OK,
        "reward_plateau",
        "reward plateau",
        run,
        tag,
        int(steps[-1]),
        level_now,
        message + ".",
        advice,
        since,
        Stage.NOTE,
    )


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
        moves[key[len("rewards/") : -len("/mean")]] = (change, margin, int(steps[-1]), float(values[-1]))
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
        message = (
            f"{tag} carries the reward's gain ({num(change)} since the start, {num(value)} at step "
            f"{step}) while {lost} fell: the policy trades one goal for another"
        )
        advice = (
            "Look at completions that score high on it and low on the others; reweight the reward "
            "functions (reward_weights) or make the falling ones stricter to stop the trade."
        )
    else:
        level = Level.OK
        flat = ", ".join(others)
        message = (
            f"{tag} carries {pct(gains[leader] / total)} of the reward's gain ({num(change)} since "
            f"the start, {num(value)} at step {step}); {flat} has not moved"
        )
        advice = (
            "Fine if that function is the goal; otherwise the flat ones may be too hard or too sparse "
            "to teach anything (see their rewards/*/std)."
        )
    return detector_finding(
        level,
        "reward_dominance",
        "one reward function dominating",
        run,
        tag,
        step,
        value,
        message + ".",
        advice,
        step,
        Stage.SYMPTOM,
    )


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
    message = (
        f"{series.tag} fell ({change}) while {total}: the policy sacrifices {name} for the other "
        f"reward functions{others}"
    )
    advice = (
        "Look at completions that score high overall and low on it: the policy found a way to buy the "
        "total with one function; raise its weight (reward_weights), or make the rising ones stricter."
    )
    value = float(signals.finite_upto(series)[1][-1])
    return detector_finding(
        Level.CRITICAL,
        "reward_sacrificed",
        "a reward function sacrificed",
        run,
        series.tag,
        last,
        value,
        message + ".",
        advice,
        last,
        Stage.SYMPTOM,
    )


def reward_hacking(signals: RunSignals, params: RuleParams, context: Context, run: str) -> Finding | None:
    """A reward rising while a sign of over-optimisation rises with it (early warning)."""
    found = _hacking_pattern(signals, params, context)
    if found is None:
        return None
    series, trend, first, what, advice = found
    last = int(series.steps[-1])
    message = (
        f"{series.tag} rose from {num(trend.start)} to {num(trend.end)} between step {first} and step "
        f"{last} while {what}: an early sign of reward hacking"
    )
    return detector_finding(
        Level.WARN,
        "reward_hacking",
        "reward hacking",
        run,
        series.tag,
        last,
        trend.end,
        message + ".",
        advice,
        first,
        Stage.SYMPTOM,
    )


def _rising(signals: RunSignals, series, params: RuleParams):
    """(trend, first step of the recent window) when ``series`` rose over its recent window."""
    if series is None:
        return None
    steps, values = signals.finite_upto(series)
    if len(values) < 2 * params["window"]:
        return None
    first = int(steps[len(values) - window_of(len(values), params)])
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
            return (
                scores,
                trend,
                first,
                f"objective/rlhf_reward fell ({num(down.start)} → {num(down.end)}): the score is bought "
                "with KL",
                "Raise kl_coef or lower the learning rate; keep the checkpoint from before the turn.",
            )
    main = signals.series(REWARD_CONCEPTS)
    rising = _rising(signals, main, params)
    sign = _eval_falls(signals) if rising is not None else None
    if sign is not None:
        return main, rising[0], rising[1], *sign
    return None


def _length_sign(
    signals: RunSignals, params: RuleParams, context: Context, first: int, last: int
) -> tuple[str, str] | None:
    """Completions running to the cap, or truncation rising, over steps ``first..last``."""
    cap = context.calibration.max_completion_length
    length = signals.series(LENGTH_CONCEPTS)
    if length is not None and cap:
        trend = signals.trend(length, first, last)
        if trend is not None and trend.rising and trend.end >= params["length_cap"] * cap:
            return (
                f"completions grew to {num(trend.end)} tokens, near the cap {num(cap)}",
                "Longer is being rewarded: check completions for padding or repetition, add a length "
                "penalty or a format reward, or use a length-normalised loss (dr_grpo).",
            )
    clipped = signals.concept("truncation_ratio")
    if clipped is not None:
        trend = signals.trend(clipped, first, last)
        if trend is not None and trend.rising and trend.end >= params["clipped"]:
            return (
                f"truncated completions rose to {pct(trend.end)}",
                "The policy learns not to stop: check completions at the cap, and reward ending with EOS.",
            )
    return None


def _eval_falls(signals: RunSignals) -> tuple[str, str] | None:
    """The eval reward falling at its last three evaluations (while the train reward rises)."""
    for tag, series in signals.run.series.items():
        info = describe(tag)
        if info.split != "eval" or info.concept not in REWARD_CONCEPTS or len(series) < 3:
            continue
        values = series.values[np.isfinite(series.values)][-3:]
        if len(values) == 3 and values[0] > values[1] > values[2]:
            return (
                f"{tag} fell at the last three evaluations ({num(values[0])} → {num(values[2])})",
                "The policy fits the training reward, not the task: stop at the best eval checkpoint, "
                "raise the KL penalty, or make the reward harder to game.",
            )
    return None


class RewardPlateau(Detector):
    """The reward flat at its best level over a long stretch: a note, never an alarm."""

    name, title = "reward_plateau", "reward plateau"
    defaults = {"min_points": 50, "window": 30, "share": 0.25, "tolerance": 0.1, "z": 2.0}
    doc = RuleDoc(
        "Reward plateau",
        "the main reward",
        "special",
        "note: at its best and flat over its last {share} (≥ {window} points): the change, plus {z} standard "
        "errors, within {tolerance} of its gain (Theil–Sen slope)",
        "-",
        "after {min_points} points",
        "a note, never an alarm: at its best level training has finished learning",
    )

    def judge(
        self, signals: RunSignals, params: RuleParams, context: Context, run: str, rules: Rules
    ) -> Finding | None:
        return reward_plateau(signals, params, context, run)


class RewardDominance(Detector):
    """One reward function carrying the gain while the others are flat or fall a little."""

    name, title = "reward_dominance", "one reward function dominating"
    defaults = {"min_points": 20, "share": 0.8}
    doc = RuleDoc(
        "One reward function dominating",
        "GRPO `rewards/<f>/mean`",
        "special",
        "one function carries ≥ {share} of the gain while another falls (flat: a note)",
        "-",
        "after {min_points} points",
        "never critical: a trade between goals needs a look at completions",
    )

    def judge(
        self, signals: RunSignals, params: RuleParams, context: Context, run: str, rules: Rules
    ) -> Finding | None:
        return reward_dominance(signals, params, context, run)


class RewardSacrificed(Detector):
    """A reward function that lost more than half of its level or gain while the total rose."""

    name, title = "reward_sacrificed", "a reward function sacrificed"
    defaults = {"min_points": 20, "share": 0.5}
    doc = RuleDoc(
        "A reward function sacrificed",
        "GRPO `rewards/<f>/mean` and the total reward",
        "special",
        "-",
        "one function lost more than {share} of its early level or of its gain while the total rose",
        "after {min_points} points",
        "the policy buys the total with one goal: what you asked for in that function is being given up",
    )

    def judge(
        self, signals: RunSignals, params: RuleParams, context: Context, run: str, rules: Rules
    ) -> Finding | None:
        return reward_sacrificed(signals, params, context, run)


class RewardHacking(Detector):
    """A reward rising while a sign of over-optimisation rises with it (an early warning)."""

    name, title = "reward_hacking", "reward hacking"
    defaults = {"window": 20, "share": 0.2, "length_cap": 0.9, "clipped": 0.25}
    doc = RuleDoc(
        "Reward hacking (early warning)",
        "reward with completion length / clipped ratio, PPO `rlhf_reward`, `eval/` reward",
        "special",
        "reward up over its last {share} while lengths reach {length_cap} × the cap, truncation passes "
        "{clipped}, `rlhf_reward` falls, or the eval reward falls",
        "-",
        "≥ {window} points",
        "an early warning: the proxy reward keeps rising after the true one peaked (Gao et al.)",
    )

    def judge(
        self, signals: RunSignals, params: RuleParams, context: Context, run: str, rules: Rules
    ) -> Finding | None:
        return reward_hacking(signals, params, context, run)
