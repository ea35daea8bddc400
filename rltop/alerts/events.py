"""Alert events: what changed between two verdicts on a run, told once per run and rule.

The health engine says, at every assessment, which findings are active. `AlertTracker` compares a
run's verdict with the previous one and reports the changes as `AlertEvent` values:

* ``finding`` -- a rule went to warn or worse on the run (``stall`` when the rule is the stall rule);
* ``escalation`` -- it got worse (warn -> critical) while it lasted;
* ``recovery`` -- every tag of the rule is back to normal;
* ``finish`` -- the run logged transformers' end-of-training summary or its planned last step.

An *alert episode* of a rule on a run is the union of the rule's episodes on the run's tags: when
the loss goes NaN, twenty tags usually follow, and that is one alert, not twenty. It ends when every
tag is back to normal (the engine's hysteresis) and has logged `SETTLE_POINTS` points since its last
bad one: the non-finite rule judges point by point, so a metric flickering between NaN and numbers
would otherwise "recover" at every finite point.

What was already on disk when watching started is not news: verdicts made during the first read
are only remembered. Once caught up, a run that is still being written reports what is wrong with
it (``initial`` events); a run that is finished or stalled stays quiet until it changes.

`Gate` is one recipient's view of the events (the log, a hook, a webhook, the bell): events at or
above its level, at most one ``finding`` per run and rule per alert episode, then at most one
``escalation`` per level and one ``recovery``. A flapping metric does not spam any of them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from rltop.health.calibration import Calibration
from rltop.health.engine import RunHealth
from rltop.health.findings import Finding, Level
from rltop.health.rules.stall import run_finished
from rltop.model.run import Run

FINDING, ESCALATION, RECOVERY, FINISH, STALL = "finding", "escalation", "recovery", "finish", "stall"
EVENT_KINDS = (FINDING, ESCALATION, RECOVERY, FINISH, STALL)
STALL_RULE = "stall"
SETTLE_POINTS = 3
"""Points a tag logs after its last bad one before its rule counts as recovered."""


@dataclass(frozen=True)
class AlertEvent:
    """One thing worth telling about one run.

    ``level`` is the level reached (finding, stall, escalation), the worst level of the episode that
    ended (recovery) or the run's final verdict (finish). ``finding`` is the worst finding of the
    rule at the time (for a recovery: the last one seen while it was active; none for a finish).
    """

    kind: str
    run: str
    level: Level
    finding: Finding | None = None
    previous_level: Level | None = None
    tags: tuple[str, ...] = ()
    initial: bool = False  # already so when watching started
    findings: int = 0  # finish: the run's findings (active or over)

    @property
    def rule(self) -> str | None:
        """The rule the event is about (None for a finish)."""
        return self.finding.rule if self.finding is not None else None

    def but(self, **changes: object) -> AlertEvent:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


@dataclass
class _Group:
    """The alert episode of one rule on one run."""

    level: Level
    finding: Finding
    tags: dict[str, Finding]  # the newest active finding of each tag involved


@dataclass
class _RunState:
    groups: dict[str, _Group] = field(default_factory=dict)
    finished: bool = False


@dataclass
class _Active:
    finding: Finding  # the worst active finding of the rule (findings come worst first)
    level: Level
    tags: dict[str, Finding]


class AlertTracker:
    """Turns each run's successive verdicts into events; see the module docstring."""

    def __init__(self, settle_points: int = SETTLE_POINTS) -> None:
        self.settle_points = settle_points
        self._runs: dict[str, _RunState] = {}
        self._loading: set[str] = set()  # runs judged during the first read

    def observe(self, run: Run, health: RunHealth, caught_up: bool = True) -> list[AlertEvent]:
        """The events since the previous verdict on ``run``; nothing while the first read goes on."""
        if not caught_up:
            self._loading.add(run.name)
            return []
        active = _active_by_rule(health)
        state = self._runs.get(run.name)
        initial = False
        if state is None:
            state = self._runs[run.name] = _RunState(finished=_finished(run))
            initial = run.name in self._loading
            self._loading.discard(run.name)
            if state.finished or STALL_RULE in active:
                # Finished or idle at start: what is wrong with it is history, not news.
                state.groups = {rule: _Group(a.level, a.finding, dict(a.tags)) for rule, a in active.items()}
                return []
        events = self._changes(run, health, state, active, initial)
        if not state.finished and _finished(run):
            state.finished = True
            events.extend(self._recoveries(run, health, state, active, settled=True))
            events.append(AlertEvent(FINISH, run.name, health.level, findings=len(health.findings)))
        return events

    def present_at_start(self, runs: Iterable[str]) -> None:
        """These runs were on disk when watching started: their first events are ``initial``."""
        self._loading.update(name for name in runs if name not in self._runs)

    def forget(self, run: str) -> None:
        """Drop a run that disappeared (its directory was deleted)."""
        self._runs.pop(run, None)
        self._loading.discard(run)

    def _changes(
        self, run: Run, health: RunHealth, state: _RunState, active: dict[str, _Active], initial: bool
    ) -> list[AlertEvent]:
        events = []
        for rule, now in active.items():
            group = state.groups.get(rule)
            if group is None:
                state.groups[rule] = _Group(now.level, now.finding, dict(now.tags))
                kind = STALL if rule == STALL_RULE else FINDING
                events.append(
                    AlertEvent(kind, run.name, now.level, now.finding, None, tuple(now.tags), initial)
                )
                continue
            group.finding = now.finding
            group.tags.update(now.tags)
            if now.level > group.level:
                events.append(
                    AlertEvent(
                        ESCALATION, run.name, now.level, now.finding, group.level, tuple(group.tags), initial
                    )
                )
                group.level = now.level
        events.extend(self._recoveries(run, health, state, active, settled=False))
        return events

    def _recoveries(
        self, run: Run, health: RunHealth, state: _RunState, active: dict[str, _Active], settled: bool
    ) -> list[AlertEvent]:
        """Recovery events of the rules no longer active (once settled, or all of them at the end)."""
        events = []
        for rule, group in list(state.groups.items()):
            if rule in active or not (settled or self._settled(run, health, rule, group)):
                continue
            del state.groups[rule]
            events.append(AlertEvent(RECOVERY, run.name, group.level, group.finding, None, tuple(group.tags)))
        return events

    def _settled(self, run: Run, health: RunHealth, rule: str, group: _Group) -> bool:
        """Every tag of the rule logged `settle_points` points after its last bad one."""
        for tag, last in group.tags.items():
            series = run.series.get(tag)
            if not tag or series is None:
                continue  # the stall rule (run-wide), or a tag that is gone
            ended = next(
                (
                    f
                    for f in health.findings
                    if f.rule == rule and f.tag == tag and not f.active and f.first_step == last.first_step
                ),
                None,
            )
            bad = ended.last_step if ended is not None else last.last_step
            if bad is None:
                continue
            if int(np.count_nonzero(series.steps > bad)) < self.settle_points:
                return False
        return True


class Gate:
    """One recipient's share of the events: at or above ``level``, once per run and rule per episode."""

    def __init__(self, level: Level, recoveries: bool = True, finishes: bool = True) -> None:
        self.level = level
        self.recoveries = recoveries
        self.finishes = finishes
        self._told: dict[tuple[str, str], Level] = {}  # (run, rule) -> the level told in this episode

    def admit(self, event: AlertEvent) -> AlertEvent | None:
        """The event as this recipient hears it, or None.

        The first event of an episode that reaches the gate's level is a ``finding`` (or ``stall``)
        for this recipient, even when the tracker saw it as an escalation from a level below it.
        """
        if event.kind == FINISH:
            return event if self.finishes else None
        key = (event.run, event.rule or "")
        if event.kind == RECOVERY:
            told = self._told.pop(key, None)
            return event if told is not None and self.recoveries else None
        if event.level < self.level:
            return None
        told = self._told.get(key)
        if told is None:
            self._told[key] = event.level
            return event.but(kind=STALL if event.rule == STALL_RULE else FINDING)
        if event.level > told:
            self._told[key] = event.level
            return event.but(kind=ESCALATION, previous_level=told)
        return None

    def forget(self, run: str) -> None:
        """Drop what was told about a run that disappeared."""
        for key in [key for key in self._told if key[0] == run]:
            del self._told[key]


def _active_by_rule(health: RunHealth) -> dict[str, _Active]:
    """Active findings at warn or worse, grouped by rule (worst first within a rule)."""
    grouped: dict[str, _Active] = {}
    for finding in health.findings:
        if not finding.active or finding.level < Level.WARN:
            continue
        group = grouped.get(finding.rule)
        if group is None:
            group = grouped[finding.rule] = _Active(finding, finding.level, {})
        group.level = max(group.level, finding.level)
        for tag in (finding.tag, *finding.also):  # a finding may stand for several tags (a NaN incident)
            group.tags.setdefault(tag, finding)
    return grouped


def _finished(run: Run) -> bool:
    return run_finished(run, Calibration.from_config(run.config))
