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

Modules: `trends` (slopes, flatness, the findings' shape), `reward` (the four reward detectors),
`forecast`; each detector is a `Detector` class, listed by `rltop.health.rules`.

* `completions` -- completion rules: judged from what the policy wrote (TRL's completions files), not
  from a scalar.
* `drift` -- slow drifts no per-point threshold sees, on every framework's names: the completions
  shrinking toward nothing, the task score falling while the shaped reward rises, the gradient norm
  climbing.
* `options` -- what the run's own options change about what healthy looks like, said once as a note.
"""

from __future__ import annotations

from rltop.health.evidence.signals import RunSignals
from rltop.health.findings import Finding
from rltop.health.rules.base import Context, Rule
from rltop.health.settings import RuleParams, Rules
from rltop.model.catalog import MetricInfo


class Detector(Rule):
    """A run-level detector: judged on the run as it is now, never point by point on one tag."""

    def applies(self, info: MetricInfo, context: Context) -> bool:
        return False

    def judge(
        self, signals: RunSignals, params: RuleParams, context: Context, run: str, rules: Rules
    ) -> Finding | None:
        """Its finding on ``signals``' view of the run (None when its pattern does not show)."""
        raise NotImplementedError


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


def judge_run(signals: RunSignals, rules: Rules, context: Context, run: str,
              detectors: tuple[Detector, ...]) -> list[Finding]:  # fmt: skip
    """Every enabled detector's finding for one run, on ``signals``' view."""
    found = []
    for detector in detectors:
        params = rules[detector.name]
        if params.enabled:
            finding = detector.judge(signals, params, context, run, rules)
            if finding is not None:
                found.append(finding)
    return found
