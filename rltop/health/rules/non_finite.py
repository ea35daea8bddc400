"""Non-finite values (NaN, ±Inf) on any tag: immediate, critical, and latched once seen.

TRL drops a metric that is NaN on every sample (a missing point), so a NaN that reaches the event
file is a real one, and usually the first sign of a diverging update.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from rltop.health.findings import Finding, Level, Stage
from rltop.health.rules.base import Context, Rule
from rltop.health.settings import RuleDoc
from rltop.model.catalog import MetricInfo

_NON_FINITE_ADVICE = (
    "A NaN or Inf usually follows an exploding update: lower the learning rate, clip gradients "
    "(max_grad_norm), check rewards for NaN/Inf, and resume from the last good checkpoint."
)


class NonFiniteValues(Rule):
    """Any NaN or ±Inf, on any tag: critical at once, latched, no threshold to set.

    Not judged point by point like the threshold rules: the engine counts each tag's non-finite
    points (`count_non_finite`), makes one finding per tag (`non_finite_finding`) and folds a run's
    findings into one incident (`fold_incident`).
    """

    name, title, stage = "non_finite", "non-finite value", Stage.CAUSE
    defaults: dict = {}
    doc = RuleDoc(
        "Non-finite value",
        "every scalar tag",
        "special",
        "-",
        "any NaN or ±Inf",
        "immediate",
        "NaN arrives with no precursor and poisons every later update; TRL drops all-NaN metrics, so one "
        "that reaches the log is real",
    )

    def applies(self, info: MetricInfo, context: Context) -> bool:
        return False  # every tag is counted by the engine itself, not through a slot


@dataclass
class NonFiniteCount:
    """Non-finite points of one tag (immediate, critical, latched).

    ``first_step`` is where the latest stretch of non-finite points began (a NaN that comes back
    after finite points starts a new one); ``since`` where the first stretch began.
    """

    count: int = 0
    first_step: int | None = None
    last_step: int | None = None
    since: int | None = None
    first_value: float = float("nan")
    last_value: float = float("nan")
    active: bool = False
    latched: bool = False


def count_non_finite(nf: NonFiniteCount, steps: np.ndarray, values: np.ndarray, finite: np.ndarray) -> None:
    """Update the non-finite summary of a tag with new points."""
    if finite.all():
        count_all_finite(nf)
        return
    bad = np.flatnonzero(~finite)
    nf.count += len(bad)
    # A stretch starts at a non-finite point whose previous point (the last one before these,
    # for the first) was finite.
    before = np.concatenate(([not nf.active], finite[:-1]))
    starts = np.flatnonzero(~finite & before)
    if len(starts):
        nf.first_step = int(steps[starts[-1]])
        nf.first_value = float(values[starts[-1]])
        if nf.since is None:
            nf.since = int(steps[starts[0]])
    nf.last_step = int(steps[bad[-1]])
    nf.last_value = float(values[bad[-1]])
    nf.latched = True
    nf.active = not bool(finite[-1])


def count_all_finite(nf: NonFiniteCount) -> None:
    """Update the non-finite summary of a tag with new points the caller knows are all finite.

    `count_non_finite` for that case, without the points' steps (the engine's shortcut for tags no
    rule judges checks their values only): the tag is finite again, what it had stays latched.
    """
    nf.active = False


def non_finite_finding(run: str, tag: str, nf: NonFiniteCount, acknowledged: bool = False) -> Finding:
    """The finding of a tag that had non-finite points (active while the newest one is).

    Its headline is where the non-finite values began (the root cause a crash report needs), the
    last one said beside it, and an earlier stretch when there was one.
    """
    what = _what(nf.first_value)
    many = (f"{nf.count} non-finite points, the last at step {nf.last_step}" if nf.count > 1
            else "1 such point")  # fmt: skip
    earlier = (
        f"; non-finite before from step {nf.since}"
        if nf.since is not None and nf.since != nf.first_step
        else ""
    )
    message = (
        f"{tag} is {what} from step {nf.first_step} ({many}{earlier}; critical at any NaN or ±Inf); "
        f"{_state(nf.active)}."
    )
    return Finding(
        Level.CRITICAL,
        "non_finite",
        run,
        tag,
        nf.first_step,
        nf.first_value,
        message,
        _NON_FINITE_ADVICE,
        first_step=nf.first_step,
        last_step=nf.last_step,
        active=nf.active,
        title="non-finite value",
        episodes=1,
        stage=Stage.CAUSE,
        acknowledged=acknowledged and not nf.active,
    )


def _what(value: float) -> str:
    return "NaN" if np.isnan(value) else ("+Inf" if value > 0 else "-Inf")


def _state(active: bool) -> str:
    return "still non-finite" if active else "finite again after it"


PRECURSOR_REACH = 0.2  # a blow-up counts as the NaN's precursor when it lasted until this share of the
PRECURSOR_STEPS = 20  # run's steps before the NaN (at least this many steps)


def fold_incident(findings: list[Finding], blow_ups: frozenset[str] = frozenset()) -> list[Finding]:
    """The run's findings, worst first, with its non-finite findings folded into one incident.

    A NaN that reaches six tags is one event: one finding led by the tag that went non-finite
    first ("NaN from step 138: loss/value_avg first, 5 more tags from step 139"), the others in
    `Finding.also`. When a blow-up (a finding of one of the ``blow_ups`` rules: a spike, a KL or
    ratio running away) ran up to the NaN, it is its likely cause: the NaN says so and that finding
    is listed right before it.
    """
    nan = [f for f in findings if f.rule == "non_finite"]
    if not nan:
        return findings
    incident = _folded(nan) if len(nan) > 1 else nan[0]
    cause = _precursor([f for f in findings if f.rule in blow_ups], incident)
    if cause is not None:
        incident = replace(incident, message=incident.message[:-1] + f"; after {_headline(cause)}.")
    # The incident takes the place of the first non-finite finding in the engine's order (a cause
    # before its consequences), its precursor just before it.
    at = next(i for i, f in enumerate(findings) if f.rule == "non_finite")
    before = [f for f in findings[:at] if f is not cause]
    after = [f for f in findings[at:] if f.rule != "non_finite" and f is not cause]
    return before + ([cause] if cause is not None else []) + [incident] + after


def _folded(nan: list[Finding]) -> Finding:
    """Several tags' non-finite findings as one incident, led by the first to go non-finite."""
    ordered = sorted(nan, key=lambda f: (f.first_step if f.first_step is not None else 0, f.tag))
    lead, others = ordered[0], ordered[1:]
    firsts = sorted({f.first_step for f in others if f.first_step is not None})
    when = f"from step {firsts[0]}" if len(firsts) == 1 else f"from steps {firsts[0]}-{firsts[-1]}"
    named = ", ".join(f.tag for f in others[:3]) + (", …" if len(others) > 3 else "")
    active = any(f.active for f in nan)
    message = (f"{lead.tag} is {_what(lead.value if lead.value is not None else np.nan)} from step "
               f"{lead.first_step}, the run's first non-finite value; {len(others)} more "
               f"tag{'s' if len(others) > 1 else ''} {when} ({named}); critical at any NaN or ±Inf; "
               f"{_state(active)}.")  # fmt: skip
    return replace(
        lead,
        message=message,
        active=active,
        last_step=max(f.last_step or 0 for f in nan),
        acknowledged=all(f.acknowledged for f in nan),
        also=tuple(f.tag for f in others),
    )


def _precursor(findings: list[Finding], incident: Finding) -> Finding | None:
    """The blow-up that ran up to the NaN (the latest to begin before it), if one did."""
    first = incident.first_step
    if first is None:
        return None
    reach = max(PRECURSOR_STEPS, PRECURSOR_REACH * first)
    candidates = [
        f for f in findings
        if f.level > Level.OK and f.first_step is not None
        and f.first_step <= first and (f.last_step if f.last_step is not None else first) >= first - reach
    ]  # fmt: skip
    return max(candidates, key=lambda f: (f.first_step, int(f.level))) if candidates else None


def _headline(finding: Finding) -> str:
    """ "the value-loss spike of train/loss/value_avg (from step 116; 1.61e+06 at step 116)"."""
    peak = f"; {finding.value:.4g} at step {finding.step}" if finding.value is not None else ""
    what = f"the {finding.title or finding.rule} of {finding.tag or 'the run'}"
    return f"{what} (from step {finding.first_step}{peak})"
