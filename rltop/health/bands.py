"""The rules' thresholds along a series, point by point, for charts: a band that follows its baseline.

`RunHealth.bands` holds each tag's band *now* (a spike rule's is today's median times its factor).
A chart of the whole history needs the threshold each point was judged against: the entropy's
lines start once its early level is known, a spike rule's follow the median of the normal points
before each point, a KL rule's its trailing median, and a rule that judges only some steps (GRPO
clip ratios: off-policy steps) draws from its first judged point on.

`BandTracker` computes this on demand, incrementally: it replays each rule's own ``flags`` on the
points appended since its last call (as the engine does, but in its own state), so the engine does
no extra work per batch and a chart of 30k points costs the rules' work once, then only the new
points. Between two judged points a line keeps its last value (a step function).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rltop.health.calibration import Calibration
from rltop.health.rules import TAG_RULES as RULES
from rltop.health.rules.base import Context, Rule, SlotState
from rltop.health.settings import RuleParams, Rules
from rltop.model.catalog import describe, trainer_kind
from rltop.model.run import CONFIG_TAG, Run
from rltop.model.series import Series

LINE_NAMES = ("warn_low", "warn_high", "crit_low", "crit_high")
"""The four lines of a band, in `rltop.health.rules.base.Band` order."""


@dataclass
class BandTrack:
    """The thresholds at each point of a series (index-aligned with it; NaN: no line there)."""

    lines: np.ndarray
    """Shape (4, points): warn_low, warn_high, crit_low, crit_high."""

    def __len__(self) -> int:
        return int(self.lines.shape[1])

    def line(self, name: str) -> np.ndarray:
        """One of `LINE_NAMES`."""
        return self.lines[LINE_NAMES.index(name)]

    @property
    def empty(self) -> bool:
        """No rule draws any line on this series."""
        return not np.isfinite(self.lines).any()


@dataclass
class _RuleState:
    rule: Rule
    params: RuleParams
    points: Series
    state: SlotState
    carry: np.ndarray = field(default_factory=lambda: np.full(4, np.nan))


@dataclass
class _TagState:
    series: Series
    purged: int
    seen: int
    rules: list[_RuleState]
    lines: np.ndarray  # (4, seen)


class BandTracker:
    """Per (run, tag) band tracks, brought up to date when asked (see the module docstring)."""

    def __init__(self, rules: Rules | None = None) -> None:
        self.rules = rules if rules is not None else Rules.defaults()
        self._runs: dict[str, tuple[tuple, dict[str, _TagState]]] = {}

    def track(self, run: Run, tag: str, kind: str | None = None) -> BandTrack | None:
        """The band along ``run.series[tag]``; None when no rule judges the tag.

        ``kind``: the trainer as the engine decided it (`RunHealth.kind`); by default from the tags.
        """
        series = run.series.get(tag)
        if series is None:
            return None
        kind = kind or trainer_kind(run.series)
        entries = run.texts.get(CONFIG_TAG)
        key = (id(run), entries[-1].text if entries else None, kind)
        cached = self._runs.get(run.name)
        if cached is None or cached[0] != key:
            cached = self._runs[run.name] = (key, {})
        context = Context(Calibration.from_config(run.config), kind)
        tags = cached[1]
        state = tags.get(tag)
        if (
            state is None
            or state.series is not series
            or state.purged != series.purged
            or len(series) < state.seen
        ):
            state = tags[tag] = self._new(tag, series, context)
        if not state.rules:
            return None
        if len(series) > state.seen:
            self._feed(state, context)
        return BandTrack(state.lines)

    def forget(self, run: str) -> None:
        """Drop what is kept for a run that disappeared."""
        self._runs.pop(run, None)

    def _new(self, tag: str, series: Series, context: Context) -> _TagState:
        info = describe(tag)
        states = []
        for rule in RULES:
            params = self.rules[rule.name]
            if params.enabled and rule.applies(info, context):
                params = rule.calibrated(params, context)
                slot_state = rule.State(key=info.key, concept=info.concept)  # what the engine's slots know
                states.append(_RuleState(rule, params, Series(tag, wide=True), slot_state))  # read whole
        return _TagState(series, series.purged, 0, states, np.empty((4, 0)))

    def _feed(self, state: _TagState, context: Context) -> None:
        new = state.series.points(state.seen)
        state.seen = len(state.series)
        finite = np.isfinite(new.values)
        merged: np.ndarray | None = None
        for rule_state in state.rules:
            block = _rule_block(rule_state, new.steps, new.wall_times, new.values, finite, context)
            merged = block if merged is None else _tightest(merged, block)
        state.lines = np.concatenate((state.lines, merged), axis=1)


def _rule_block(
    state: _RuleState,
    steps: np.ndarray,
    walls: np.ndarray,
    values: np.ndarray,
    finite: np.ndarray,
    context: Context,
) -> np.ndarray:
    """One rule's four lines at the new points (its last judged value carried over the others)."""
    rule = state.rule
    mask = finite
    selected = rule.select(steps, context)
    if selected is not None:
        mask = mask & selected
    block = np.full((4, len(steps)), np.nan)
    judged = np.flatnonzero(mask)
    if judged.size:
        start = len(state.points)
        state.points.append(steps[mask], walls[mask], values[mask])
        if rule.dynamic_band:
            ref = rule.flags(state.points.values, start, state.state, state.params, context).ref
        else:
            ref = np.full(judged.size, np.nan)
        block[:, judged] = np.stack(rule.band_along(ref, start, state.params, state.state, context))
    block = _carried(block, state.carry)
    state.carry = block[:, -1].copy() if block.shape[1] else state.carry
    return block


def _carried(block: np.ndarray, carry: np.ndarray) -> np.ndarray:
    """Each NaN replaced by the last finite value before it in its row (``carry`` from earlier)."""
    extended = np.concatenate((carry[:, None], block), axis=1)
    index = np.where(np.isfinite(extended), np.arange(extended.shape[1]), 0)
    np.maximum.accumulate(index, axis=1, out=index)
    filled = np.take_along_axis(extended, index, axis=1)
    return filled[:, 1:]


def _tightest(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Rules on one tag: the highest low lines and the lowest high lines (NaN ignored)."""
    return np.stack(
        (
            np.fmax(first[0], second[0]),
            np.fmin(first[1], second[1]),
            np.fmax(first[2], second[2]),
            np.fmin(first[3], second[3]),
        )
    )
