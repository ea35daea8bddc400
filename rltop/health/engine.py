"""The health engine: judges every run's series with the rules, incrementally, into findings.

`HealthEngine.assess(run)` only looks at the points appended since its last call for each
``(run, tag)`` (a restart that purged points, a new config or a replaced `Run` rebuilds that state),
so it can run on every batch of the live tail. Rules are matched to tags through the catalogue
(``train/``/``eval/`` prefixes or none) and calibrated with the run's ``args/text_summary``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rltop.health.calibration import Calibration
from rltop.health.findings import Finding, Level
from rltop.health.level_rules import level_rules
from rltop.health.machine import Episode, Tracker
from rltop.health.non_finite import NonFinite, count_non_finite, non_finite_finding
from rltop.health.relative_rules import relative_rules
from rltop.health.reward_rules import reward_rules
from rltop.health.rule_base import NO_BAND, Band, Context, Rule, num
from rltop.health.rules import RuleParams, Rules
from rltop.health.stall import judge_stall
from rltop.model.catalog import MetricInfo, describe, trainer_kind
from rltop.model.run import CONFIG_TAG, Run, Store
from rltop.model.series import Series

RULES: tuple[Rule, ...] = (*level_rules(), *relative_rules(), *reward_rules())
_RULE_ORDER = {rule.name: index for index, rule in enumerate(RULES)}


@dataclass
class RunHealth:
    """The verdict on one run: findings worst first, the colour of each tag, chart bands."""

    run: str
    kind: str
    findings: list[Finding]
    tag_levels: dict[str, Level]
    empty: bool
    bands: dict[str, Band] = field(default_factory=dict, repr=False)

    @property
    def level(self) -> Level:
        """Worst current level: tags (latched criticals included) and active run-level findings."""
        worst = max(self.tag_levels.values(), default=Level.OK)
        active = max((f.level for f in self.findings if f.active), default=Level.OK)
        return max(worst, active)

    def findings_for(self, tag: str) -> list[Finding]:
        """The findings of one tag, worst first."""
        return [finding for finding in self.findings if finding.tag == tag]

    def band(self, tag: str) -> Band:
        """(warn_low, warn_high, crit_low, crit_high) of the rules on ``tag``, for charts."""
        return self.bands.get(tag, NO_BAND)


@dataclass
class _Slot:
    """One rule judging one tag: its filtered input points, level tracker and private memo."""

    rule: Rule
    params: RuleParams
    tracker: Tracker
    points: Series
    memo: dict[str, Any]
    acknowledged: int = 0  # critical episodes the user has seen (tracker.critical_closed at the time)
    # The finding of the worst past episode only changes when an episode ends: cached with its key.
    past_key: tuple[int, int, str] | None = None
    past_finding: Finding | None = None
    band: Band | None = None

    @property
    def latched(self) -> bool:
        """A critical episode is over but nobody acknowledged it yet: the tag stays critical."""
        return self.tracker.critical_closed > self.acknowledged


@dataclass
class _TagState:
    series: Series
    info: MetricInfo
    slots: list[_Slot]
    seen: int = 0
    purged: int = 0
    non_finite: NonFinite = field(default_factory=NonFinite)
    findings: list[Finding] = field(default_factory=list)
    level: Level = Level.OK
    band: Band = NO_BAND


@dataclass
class _RunState:
    run: Run
    config_text: str | None
    context: Context
    tags: dict[str, _TagState] = field(default_factory=dict)
    tag_count: int = -1


class HealthEngine:
    """Keeps per-(run, tag) rule state between calls; see the module docstring."""

    def __init__(self, rules: Rules | None = None) -> None:
        # None means the built-in thresholds; the CLI passes load_rules(--rules) to honour rules files.
        self.rules = rules if rules is not None else Rules.defaults()
        self._runs: dict[str, _RunState] = {}

    def assess(self, run: Run, now: float | None = None) -> RunHealth:
        """Judge what is new in ``run``; ``now`` (seconds since the epoch) enables the stall rule."""
        state = self._state(run)
        kind_changed = self._update_kind(state, run)
        for tag in [tag for tag in state.tags if tag not in run.series]:
            del state.tags[tag]
        for tag, series in run.series.items():
            tag_state = state.tags.get(tag)
            if tag_state is None or tag_state.series is not series or tag_state.purged != series.purged \
                    or len(series) < tag_state.seen:
                tag_state = state.tags[tag] = self._new_tag(tag, series, state.context)
            if len(series) > tag_state.seen:
                self._feed(tag_state, state.context)
                self._refresh(run.name, tag, tag_state, state.context)
            elif kind_changed:
                self._refresh(run.name, tag, tag_state, state.context)
        findings = [finding for tag_state in state.tags.values() for finding in tag_state.findings]
        if now is not None:
            stall = judge_stall(run, now, self.rules["stall"], state.context.calibration)
            if stall is not None:
                findings.append(stall)
        findings.sort(key=_worst_first)
        has_points = any(len(series) for series in run.series.values())
        return RunHealth(
            run=run.name,
            kind=state.context.kind,
            findings=findings,
            tag_levels={tag: tag_state.level for tag, tag_state in state.tags.items()},
            empty=not has_points,
            bands={tag: s.band for tag, s in state.tags.items() if s.band != NO_BAND},
        )

    def acknowledge(self, run: str, tag: str | None = None) -> None:
        """Un-latch the criticals that are over (of one tag, or the whole run): the user saw them."""
        state = self._runs.get(run)
        if state is None:
            return
        for name, tag_state in state.tags.items():
            if tag is None or name == tag:
                tag_state.non_finite.latched = False
                for slot in tag_state.slots:
                    slot.acknowledged = slot.tracker.critical_closed
                tag_state.level = _tag_level(tag_state)

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
            state = _RunState(run, config_text, Context(calibration, calibration.guess_kind()))
            self._runs[run.name] = state
        return state

    @staticmethod
    def _update_kind(state: _RunState, run: Run) -> bool:
        """Re-detect PPO/GRPO when the tag set grew; True when the kind changed."""
        if len(run.series) == state.tag_count:
            return False
        state.tag_count = len(run.series)
        kind = trainer_kind(run.series)
        if kind == "unknown":
            kind = state.context.calibration.guess_kind()
        changed = kind != state.context.kind
        state.context.kind = kind
        return changed

    def _new_tag(self, tag: str, series: Series, context: Context) -> _TagState:
        info = describe(tag)
        slots = []
        for rule in RULES:
            params = self.rules[rule.name]
            if not params.enabled or not rule.applies(info, context):
                continue
            warn_p, crit_p = rule.persistences(params)
            tracker = Tracker(warn_p, crit_p, params.clear_points(warn_p), params.clear_points(crit_p),
                              bool(self.rules.general["single_point_warn"]))
            slots.append(_Slot(rule, params, tracker, Series(tag), {"key": info.key}))
        return _TagState(series, info, slots, purged=series.purged)

    def _feed(self, state: _TagState, context: Context) -> None:
        """Run every rule of one tag over the points appended since the last call."""
        new = state.series.points(state.seen)
        state.seen = len(state.series)
        finite = np.isfinite(new.values)
        if self.rules["non_finite"].enabled:
            count_non_finite(state.non_finite, new.steps, new.values, finite)
        for slot in state.slots:
            mask = finite
            selected = slot.rule.select(new.steps, context)
            if selected is not None:
                mask = mask & selected
            if not mask.any():
                continue
            start = len(slot.points)
            slot.points.append(new.steps[mask], new.wall_times[mask], new.values[mask])
            values = slot.points.values
            flags = slot.rule.flags(values, start, slot.memo, slot.params, context)
            slot.tracker.feed(slot.points.steps[start:], values[start:], flags)

    def _refresh(self, run: str, tag: str, state: _TagState, context: Context) -> None:
        """Rebuild one tag's findings, level and band from its rule states."""
        nf = state.non_finite
        if not state.slots and not nf.count:
            return
        findings: list[Finding] = [non_finite_finding(run, tag, nf)] if nf.count else []
        band: list[float | None] = [None, None, None, None]
        for slot in state.slots:
            tracker = slot.tracker
            current, past = tracker.current, tracker.past_worst
            if current is not None and current.worst is not None:
                findings.append(self._finding(run, tag, slot, current, True, context))
            if past is not None and past.worst is not None:
                key = (tracker.past_count, id(tracker.last_closed), context.kind)
                if slot.past_key != key or slot.past_finding is None:
                    slot.past_key = key
                    slot.past_finding = self._finding(run, tag, slot, past, False, context)
                findings.append(slot.past_finding)
            if slot.band is None or slot.rule.dynamic_band:
                slot.band = slot.rule.band(slot.params, slot.memo, context)
            band = _merge_band(band, slot.band)
        state.findings = findings
        state.level = _tag_level(state)
        state.band = tuple(band)  # type: ignore[assignment]

    @staticmethod
    def _finding(
        run: str, tag: str, slot: _Slot, episode: Episode, active: bool, context: Context
    ) -> Finding:
        worst = episode.worst
        assert worst is not None
        core = slot.rule.explain(tag, worst, episode.level, slot.params, slot.memo, context)
        if active:
            status = f"since step {episode.first_step}"
            last = episode.last
            if last is not None and last.step != worst.step:
                status += f", now {num(last.value)} at step {last.step}"
            last_step = last.step if last is not None else worst.step
        else:
            last_step = episode.end_step if episode.end_step is not None else worst.step
            status = f"steps {episode.first_step}-{last_step}, then back to normal"
            latest = slot.tracker.last_closed
            if slot.tracker.past_count > 1:
                status += f" (the worst of {slot.tracker.past_count} episodes"
                if latest is not None and latest is not episode:
                    status += f"; the latest: steps {latest.first_step}-{latest.end_step}"
                status += ")"
        return Finding(
            level=episode.level, rule=slot.rule.name, run=run, tag=tag, step=worst.step, value=worst.value,
            message=f"{core}; {status}.", advice=slot.rule.advice(slot.params, context),
            first_step=episode.first_step, last_step=last_step, active=active, title=slot.rule.title,
        )


def _episode_critical(episode: Episode | None) -> bool:
    return episode is not None and episode.level == Level.CRITICAL


def _tag_level(state: _TagState) -> Level:
    """Current level of a tag: active levels, plus criticals that are over but not acknowledged."""
    level = Level.CRITICAL if (state.non_finite.active or state.non_finite.latched) else Level.OK
    for slot in state.slots:
        level = max(level, slot.tracker.level)
        if slot.latched or _episode_critical(slot.tracker.current):
            level = Level.CRITICAL
    return level


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


def _worst_first(finding: Finding) -> tuple[int, int, int, str]:
    return (-int(finding.level), 0 if finding.active else 1, _RULE_ORDER.get(finding.rule, -1), finding.tag)


def assess_store(store: Store, rules: Rules | None = None, now: float | None = None) -> dict[str, RunHealth]:
    """One-shot verdict on every run of a store (a fresh engine; the live app keeps its own)."""
    engine = HealthEngine(rules)
    return {name: engine.assess(store.runs[name], now) for name in store.sorted_names()}
