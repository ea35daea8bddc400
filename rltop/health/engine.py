"""The health engine: judges every run's series with the rules, incrementally, into findings.

`HealthEngine.assess(run)` only looks at the points appended since its last call for each
``(run, tag)`` (a restart that purged points, a new config or a replaced `Run` rebuilds that state),
so it can run on every batch of the live tail. Rules are matched to tags through the catalogue
(``train/``/``eval/`` prefixes or none) and calibrated with the run's ``args/text_summary``.

Shortcuts for the live dashboard's CPU goal (issue 28: at most 2 % of a core while a run logs 50
tags a second), on unless ``RLTOP_PLAIN_HEALTH=1`` is in the environment (read at import; tests set
`SHORTCUTS`). Each gives the same findings, levels, bands, marks and stall times as the plain path
(``tests/e2e/test_health_shortcuts.py`` replays the fixtures batch by batch both ways):

- a tag no rule judges (most of a run's tags) only has its new values checked for NaN and ±Inf:
  no `Points` view, no steps widened, unless a non-finite value is among them;
- `assess_with_stall_due` reads the run's activity (`Activity.of_run`: every tag's first step, the
  busiest tag's wall times) once for the stall verdict and the time it can next change, where the
  plain path reads it twice.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from rltop.health.calibration import Calibration
from rltop.health.evidence.signals import RunSignals
from rltop.health.evidence.text import with_text_evidence
from rltop.health.findings import Finding, Level
from rltop.health.persistence import EpisodeTracker
from rltop.health.rules import BLOW_UPS, DETECTORS, NON_FINITE, STALL, TAG_RULES
from rltop.health.rules.base import NO_BAND, Band, Context, Rule, SlotState
from rltop.health.rules.detectors import detector_horizon, judge_run
from rltop.health.rules.mismatch import fold_mismatch
from rltop.health.rules.non_finite import (
    NonFiniteCount,
    count_all_finite,
    count_non_finite,
    fold_incident,
    non_finite_finding,
)
from rltop.health.rules.stall import Activity, gap_window, judge_stall, next_stall_change
from rltop.health.settings import RuleParams, Rules
from rltop.health.verdicts import judge_slot
from rltop.model.catalog import MetricInfo, describe, spelling_rank, trainer_kind
from rltop.model.run import CONFIG_TAG, Run, Store
from rltop.model.series import Series

SHORTCUTS: bool = os.environ.get("RLTOP_PLAIN_HEALTH", "") in ("", "0")
"""Whether the engine takes the exact shortcuts of the module docstring (off: the plain path)."""

_RULE_ORDER = {rule.name: index for index, rule in enumerate(TAG_RULES)}
_DETECTOR_NAMES = frozenset(detector.name for detector in DETECTORS)


@dataclass
class RunHealth:
    """The verdict on one run: findings worst first, the colour of each tag, chart bands."""

    run: str
    kind: str
    findings: list[Finding]
    tag_levels: dict[str, Level]
    empty: bool
    bands: dict[str, Band] = field(default_factory=dict, repr=False)
    # Tags that had a warn or critical episode the user has not acknowledged, with its level: a
    # card keeps a mark after the metric is back to normal, so a blow-up never goes unseen.
    marks: dict[str, Level] = field(default_factory=dict)

    @property
    def level(self) -> Level:
        """Worst current level: tags (latched criticals included) and active run-level findings."""
        worst = max(self.tag_levels.values(), default=Level.OK)
        active = max((f.level for f in self.findings if f.active), default=Level.OK)
        return max(worst, active)

    def findings_for(self, tag: str) -> list[Finding]:
        """The findings of one tag (an incident covering it included), worst first."""
        return [finding for finding in self.findings if finding.covers(tag)]

    def band(self, tag: str) -> Band:
        """(warn_low, warn_high, crit_low, crit_high) of the rules on ``tag``, for charts."""
        return self.bands.get(tag, NO_BAND)


@dataclass
class _Slot:
    """One rule judging one tag: its filtered input points, level tracker and private state."""

    rule: Rule
    params: RuleParams
    tracker: EpisodeTracker
    # The points this rule judged: None while they are exactly the tag's points (every one finite
    # and selected), so that most rules cost no copy of the series; a private copy from the first
    # point it leaves out (a NaN, an on-policy GRPO step).
    points: Series | None
    state: SlotState
    band: Band | None = None


@dataclass
class _TagState:
    series: Series
    info: MetricInfo
    slots: list[_Slot]
    seen: int = 0
    purged: int = 0
    non_finite: NonFiniteCount = field(default_factory=NonFiniteCount)
    findings: list[Finding] = field(default_factory=list)
    level: Level = Level.OK
    mark: Level = Level.OK
    band: Band = NO_BAND

    @property
    def uses_evidence(self) -> bool:
        """Some rule of this tag takes a second look with the rest of the run in view."""
        return any(slot.rule.uses_evidence for slot in self.slots)


@dataclass
class _RunState:
    run: Run
    config_text: str | None
    context: Context
    tags: dict[str, _TagState] = field(default_factory=dict)
    tag_count: int = -1
    # tag -> the step up to which the user acknowledged its episodes; kept apart from the tag
    # states so that it survives their rebuilds (a resumed session purges, and rebuilds).
    acks: dict[str, int] = field(default_factory=dict)
    # The run-level detectors' findings and the view they were judged on (see detector_horizon).
    detected: tuple[tuple, list[Finding]] | None = None
    # (concept, split) -> the lowest catalogue rank among the run's tags of it (`_preferred_ranks`):
    # a tag of that concept with a higher rank is a twin, shown but not judged.
    preferred: dict[tuple[str, str], int] = field(default_factory=dict)

    def episodes(self, rule: str) -> list[tuple[Level, int, int]]:
        """Every episode (closed, and the current one) of ``rule`` on any tag, as raw levels."""
        found = []
        for tag_state in self.tags.values():
            for slot in tag_state.slots:
                if slot.rule.name != rule:
                    continue
                found.extend(slot.tracker.closed)
                current = slot.tracker.current
                if current is not None and current.last is not None:
                    found.append((current.level, current.first_step, current.last.step))
        return found


class HealthEngine:
    """Keeps per-(run, tag) rule state between calls; see the module docstring."""

    def __init__(self, rules: Rules | None = None) -> None:
        # None means the built-in thresholds; the CLI passes load_rules(--rules) to honour rules files.
        self.rules = rules if rules is not None else Rules.defaults()
        self._runs: dict[str, _RunState] = {}

    def assess(self, run: Run, now: float | None = None) -> RunHealth:
        """Judge what is new in ``run``; ``now`` (seconds since the epoch) enables the stall rule."""
        health, _activity = self._assess(run, now)
        return health

    def assess_with_stall_due(self, run: Run, now: float) -> tuple[RunHealth, float | None]:
        """`assess` at ``now`` and `next_stall_change` at the same ``now``, in one call (a live
        consumer asks both after every batch; the shortcut reads the run's activity once)."""
        if not SHORTCUTS:
            return self.assess(run, now), self.next_stall_change(run, now)
        health, activity = self._assess(run, now)
        assert activity is not None  # read whenever ``now`` is given
        params = self.rules[STALL.name]
        due = next_stall_change(activity, now, params, self._state(run).context.calibration)
        return health, due

    def _assess(self, run: Run, now: float | None) -> tuple[RunHealth, Activity | None]:
        """`assess`, and the run's activity it read for the stall rule (None when ``now`` is None)."""
        state = self._state(run)
        kind_changed = self._update_kind(state, run)
        for tag in [tag for tag in state.tags if tag not in run.series]:
            del state.tags[tag]
        fed: set[str] = set()
        count_non_finite_points = self.rules[NON_FINITE.name].enabled
        for tag, series in run.series.items():
            tag_state = state.tags.get(tag)
            if (
                tag_state is None
                or tag_state.series is not series
                or tag_state.purged != series.purged
                or len(series) < tag_state.seen
            ):
                tag_state = state.tags[tag] = self._new_tag(tag, series, state.context, state.preferred)
            if len(series) > tag_state.seen:
                self._feed(tag_state, state.context, count_non_finite_points)
                fed.add(tag)
        signals = RunSignals(run, state.episodes, rules=self.rules)  # evidence, cached for this call
        for tag, tag_state in state.tags.items():
            # Evidence comes from other tags: a rule that uses it is looked at again on any change.
            if tag in fed or kind_changed or (fed and tag_state.uses_evidence):
                self._refresh(run.name, tag, tag_state, state, signals)
        findings = [finding for tag_state in state.tags.values() for finding in tag_state.findings]
        findings.extend(self._detect(state, run))
        activity = None
        if now is not None:
            params = self.rules[STALL.name]
            activity = Activity.of_run(run, gap_window(int(params["gap_points"])))
            stall = judge_stall(activity, now, params, state.context.calibration, findings)
            if stall is not None:
                findings.append(stall)
        findings.sort(key=_worst_first)
        findings = with_text_evidence(fold_incident(fold_mismatch(findings), BLOW_UPS), run)
        has_points = any(len(series) for series in run.series.values())
        health = RunHealth(
            run=run.name,
            kind=state.context.kind,
            findings=findings,
            tag_levels=_tag_levels(state, findings),
            empty=not has_points,
            bands={tag: s.band for tag, s in state.tags.items() if s.band != NO_BAND},
            marks={tag: s.mark for tag, s in state.tags.items() if s.mark > Level.OK},
        )
        return health, activity

    def next_stall_change(self, run: Run, now: float) -> float | None:
        """When ``run``'s stall verdict can next change without new points (None: not before)."""
        params = self.rules[STALL.name]
        activity = Activity.of_run(run, gap_window(int(params["gap_points"])))
        return next_stall_change(activity, now, params, self._state(run).context.calibration)

    def _detect(self, state: _RunState, run: Run) -> list[Finding]:
        """The run-level detectors' findings, judged again only when their view of the run moved."""
        horizon = detector_horizon(run.last_step)
        latest = run.completions.latest()
        key = (
            horizon,
            state.context.kind,
            sum(series.purged for series in run.series.values()),
            len(run.series),
            # The completion rules read the completions index: a new or rewritten file is news.
            len(run.completions),
            None if latest is None else (latest.step, latest.version),
        )
        if state.detected is None or state.detected[0] != key:
            view = RunSignals(run, state.episodes, upto=horizon, rules=self.rules)
            state.detected = (key, judge_run(view, self.rules, state.context, run.name, DETECTORS))
        return state.detected[1]

    def acknowledge(self, run: str, tag: str | None = None) -> None:
        """The user saw the episodes so far (of one tag, or the whole run): criticals that are over
        stop latching, and the marks of past episodes go away."""
        state = self._runs.get(run)
        if state is None:
            return
        signals = RunSignals(state.run, state.episodes, rules=self.rules)
        for name, tag_state in state.tags.items():
            if tag is None or name == tag:
                last = tag_state.series.last_step
                if last is not None:
                    state.acks[name] = last
                self._refresh(run, name, tag_state, state, signals)

    def forget(self, run: str) -> None:
        """Drop the state of a run that disappeared."""
        self._runs.pop(run, None)

    # -- state -------------------------------------------------------------------------------------

    def _state(self, run: Run) -> _RunState:
        """The run's state, rebuilt when the Run object or its logged config changed."""
        entries = run.texts.get(CONFIG_TAG)
        config_text = entries[-1].text if entries else None
        state = self._runs.get(run.name)
        if state is None or state.run is not run or state.config_text != config_text:
            calibration = Calibration.from_config(run.config)
            acks = state.acks if state is not None and state.run is run else {}
            state = _RunState(run, config_text, Context(calibration, calibration.guess_kind()), acks=acks)
            self._runs[run.name] = state
        return state

    @staticmethod
    def _update_kind(state: _RunState, run: Run) -> bool:
        """Re-detect the trainer (and which spelling of each concept is judged) when the tag set
        grew; True when the kind changed.

        The tags tell PPO from GRPO; RLOO logs GRPO's tags, so only its config tells it apart.
        """
        if len(run.series) == state.tag_count:
            return False
        state.tag_count = len(run.series)
        state.preferred = _preferred_ranks(run)
        kind = trainer_kind(run.series)
        calibration = state.context.calibration
        guessed = calibration.guess_kind()
        if calibration.named_kind or kind == "unknown" or (kind == "GRPO" and guessed == "RLOO"):
            kind = guessed  # the config's own word (adv_estimator) beats the tags'
        changed = kind != state.context.kind
        state.context.kind = kind
        return changed

    def _new_tag(
        self, tag: str, series: Series, context: Context, preferred: dict[tuple[str, str], int]
    ) -> _TagState:
        info = describe(tag)
        slots = []
        if info.concept and spelling_rank(info.key) > preferred.get((info.concept, info.split), 1 << 31):
            return _TagState(series, info, slots, purged=series.purged)  # judged once, on its twin
        for rule in TAG_RULES:
            params = self.rules[rule.name]
            if not params.enabled or not rule.applies(info, context):
                continue
            params = rule.calibrated(params, context)
            warn_p, crit_p = rule.persistences(params)
            tracker = EpisodeTracker(
                warn_p,
                crit_p,
                params.clear_points(warn_p),
                params.clear_points(crit_p),
                bool(self.rules.general["single_point_warn"]) and rule.single_point_warn,
            )
            slots.append(_Slot(rule, params, tracker, None, rule.State(key=info.key, concept=info.concept)))
        if slots:
            series.keep_wide()  # the rules read its whole columns at every batch (narrow: widened each time)
        return _TagState(series, info, slots, purged=series.purged)

    def _feed(self, state: _TagState, context: Context, count_non_finite_points: bool) -> None:
        """Run every rule of one tag over the points appended since the last call."""
        seen = state.seen
        if SHORTCUTS and not state.slots:
            # Issue 28's CPU goal: most tags have no rule, and their new points are all finite: the
            # plain path's `Points` (and its widened steps) would only learn that. Exact: a
            # non-finite value takes the plain path below.
            state.seen = len(state.series)
            if not count_non_finite_points:
                return
            values = state.series.values_at(slice(seen, None))
            if np.isfinite(values).all():
                count_all_finite(state.non_finite)
                return
            state.seen = seen
        new = state.series.points(seen)
        state.seen = len(state.series)
        finite = np.isfinite(new.values)
        if count_non_finite_points:
            count_non_finite(state.non_finite, new.steps, new.values, finite)
        for slot in state.slots:
            mask = finite
            selected = slot.rule.select(new.steps, context)
            if selected is not None:
                mask = mask & selected
            if not mask.any():
                if slot.points is None and len(mask):
                    slot.points = _judged_copy(state.series, seen)
                continue
            if slot.points is None and mask.all():
                steps, values, start = state.series.steps, state.series.values, seen  # shared
            else:
                if slot.points is None:
                    slot.points = _judged_copy(state.series, seen)
                start = len(slot.points)
                slot.points.append(new.steps[mask], new.wall_times[mask], new.values[mask])
                steps, values = slot.points.steps, slot.points.values
            flags = slot.rule.flags(values, start, slot.state, slot.params, context)
            slot.tracker.feed(steps[start:], values[start:], flags)

    def _refresh(
        self, run: str, tag: str, state: _TagState, run_state: _RunState, signals: RunSignals
    ) -> None:
        """Rebuild one tag's findings, level, mark and band from its rule states."""
        nf = state.non_finite
        if not state.slots and not nf.count:
            return
        ack = run_state.acks.get(tag)
        context = run_state.context
        findings: list[Finding] = []
        level = mark = Level.OK
        if nf.count:
            latched = ack is None or (nf.last_step or 0) > ack
            findings.append(non_finite_finding(run, tag, nf, acknowledged=not latched))
            if nf.active or latched:
                level = mark = Level.CRITICAL
        band: list[float | None] = [None, None, None, None]
        for slot in state.slots:
            verdict = judge_slot(slot.rule, slot.tracker, slot.params, slot.state, context, signals, ack)
            if verdict is not None:
                findings.append(verdict.finding(run, tag, slot.rule, slot.params, slot.state, context))
                level, mark = max(level, verdict.level), max(mark, verdict.mark)
            if slot.band is None or slot.rule.dynamic_band:
                slot.band = slot.rule.band(slot.params, slot.state, context)
            band = _merge_band(band, slot.band)
        state.findings = findings
        state.level, state.mark = level, mark
        state.band = tuple(band)  # type: ignore[assignment]


def _preferred_ranks(run: Run) -> dict[tuple[str, str], int]:
    """(concept, split) -> the lowest catalogue rank among the run's tags of that concept: veRL's
    ``response_length/mean`` and ``response_length_non_aborted/mean`` are one measurement, judged
    once (on the spelling the catalogue lists first), so one collapse never counts as two findings."""
    best: dict[tuple[str, str], int] = {}
    for tag in run.series:
        info = describe(tag)
        if info.concept:
            key = (info.concept, info.split)
            best[key] = min(best.get(key, 1 << 31), spelling_rank(info.key))
    return best


def _tag_levels(state: _RunState, findings: list[Finding]) -> dict[str, Level]:
    """Each tag's level: its rules' level, raised by an active run-level finding on it (a detector
    that calls the score critical colours the score's card critical too, as its alert does)."""
    levels = {tag: tag_state.level for tag, tag_state in state.tags.items()}
    for finding in findings:
        if finding.active and finding.tag in levels and finding.rule in _DETECTOR_NAMES:
            levels[finding.tag] = max(levels[finding.tag], finding.level)
    return levels


def _judged_copy(series: Series, count: int) -> Series:
    """A private copy of the first ``count`` points of ``series`` (what a sharing slot judged so far)."""
    copy = Series(series.tag, wide=True)  # (read whole at every batch, as a shared series)
    points = series.points(0, count)
    copy.append(points.steps, points.wall_times, points.values)
    return copy


def _merge_band(band: list[float | None], other: Band) -> list[float | None]:
    """Tightest band over rules: highest lows, lowest highs."""
    merged = list(band)
    for index, value in enumerate(other):
        if value is None:
            continue
        current = merged[index]
        if current is None:
            merged[index] = value
        else:
            merged[index] = max(current, value) if index in (0, 2) else min(current, value)
    return merged


def _worst_first(finding: Finding) -> tuple[int, int, int, int, str]:
    """Alerts in the order a person should read them: level, then what is happening now before
    what is over, then the cause before its consequences (a NaN before the stall it caused)."""
    return (
        -int(finding.level),
        0 if finding.active else 1,
        int(finding.stage),
        _RULE_ORDER.get(finding.rule, len(_RULE_ORDER)),
        finding.tag,
    )


def assess_store(store: Store, rules: Rules | None = None, now: float | None = None) -> dict[str, RunHealth]:
    """One-shot verdict on every run of a store (a fresh engine; the live app keeps its own)."""
    engine = HealthEngine(rules)
    return {name: engine.assess(store.runs[name], now) for name in store.sorted_names()}
