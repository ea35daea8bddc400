"""The dashboard's state without Textual: the store, the health verdicts, the chosen run, the rate.

The app applies every batch here (on the UI thread) and asks for what to draw; keeping this
Textual-free makes the rules (which run is shown, what the header says, which cards changed)
testable on their own.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from rltop.health.engine import HealthEngine, RunHealth
from rltop.health.findings import Level
from rltop.ingest.feed import RELOADED, ChangeBatch, apply_batch
from rltop.model.catalog import trainer_kind
from rltop.model.durations import format_duration
from rltop.model.run import Run, Store
from rltop.report.safe_text import visible
from rltop.report.snapshot import display_names
from rltop.ui.cards import CardModel, build_card, ordered_tags, series_version
from rltop.ui.formatting import format_rate
from rltop.ui.widgets.header_bar import HeaderInfo
from rltop.ui.widgets.runs_table import RunRow

RATE_WINDOW = 10.0
"""Seconds of live points the header's points/s is averaged over."""
STALE_AFTER = 60.0
"""Seconds without new data after which the header says "no new point for …"."""


@dataclass
class Dirty:
    """What changed since the last repaint."""

    runs: set[str] = field(default_factory=set)  # new data: judge again, then redraw
    verdicts: set[str] = field(default_factory=set)  # already judged anew (the clock moved): redraw
    structure: bool = False  # runs appeared or disappeared

    def clear(self) -> None:
        """Forget everything (after a repaint)."""
        self.runs.clear()
        self.verdicts.clear()
        self.structure = False

    def __bool__(self) -> bool:
        return bool(self.runs or self.verdicts) or self.structure


class Session:
    """Store + health + view choices of one dashboard."""

    def __init__(self, store: Store | None = None, engine: HealthEngine | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.store = store if store is not None else Store()
        self.engine = engine if engine is not None else HealthEngine()
        self.clock = clock
        self.health: dict[str, RunHealth] = {}
        self.current: str | None = None
        self.pinned = False  # the user chose the run: no automatic switching any more
        self._settled = False  # the automatic choice is final (made after the first read)
        self.caught_up = store is not None  # a preloaded store is complete
        self.loaded_points = sum(run.scalar_count() for run in self.store.runs.values())
        self.dirty = Dirty(runs=set(self.store.runs), structure=True)
        self.events: list[str] = []
        self._rate: deque[tuple[float, int]] = deque()
        self._cards: dict[str, dict[str, CardModel]] = {}

    # -- input ---------------------------------------------------------------------------------------

    def apply(self, batch: ChangeBatch) -> None:
        """Apply one watcher batch and remember what changed."""
        before = set(self.store.runs)
        changes = apply_batch(self.store, batch)
        for run, _tag, _first in changes:
            self.dirty.runs.add(run)
        self.dirty.runs.update(name for name in batch.changed_runs if name in self.store.runs)
        for event in batch.events:
            if event.run is not None and event.run in self.store.runs:
                self.dirty.runs.add(event.run)
        # A reloaded run (one of its files was rewritten) starts over like a removed one.
        reloaded = {e.run for e in batch.events if e.kind == RELOADED and e.run is not None}
        if set(self.store.runs) != before or reloaded:
            self.dirty.structure = True
            for gone in (before - set(self.store.runs)) | reloaded:
                self.health.pop(gone, None)
                self._cards.pop(gone, None)
                self.engine.forget(gone)
        points = batch.point_count()
        self.loaded_points += points
        if not batch.initial and points:
            self._rate.append((time.monotonic(), points))
        if batch.caught_up:
            self.caught_up = True
            self.dirty.structure = True

    def reassess(self, names: set[str] | None = None) -> set[str]:
        """Judge the given runs (default: the dirty ones) now; return those whose verdict changed."""
        now = self.clock()
        changed = set()
        for name in sorted(self.dirty.runs if names is None else names):
            run = self.store.runs.get(name)
            if run is None:
                continue
            health = self.engine.assess(run, now)
            old = self.health.get(name)
            if old is None or _verdict(old) != _verdict(health):
                changed.add(name)
            self.health[name] = health
        return changed

    def acknowledge(self, tag: str | None) -> None:
        """The user saw the latched criticals of ``tag`` (None: the whole current run) that are over."""
        if self.current is None:
            return
        self.engine.acknowledge(self.current, tag)
        self.dirty.runs.add(self.current)

    # -- which run -------------------------------------------------------------------------------------

    def choose_run(self) -> bool:
        """Pick the run to show; True if it changed.

        While the first read is in progress the choice follows the most recently updated run (it
        may change as older runs load); once caught up it is final, unless the user picks another
        run, the run disappears, or it still has no scalar at all.
        """
        if self.current is not None and self.current not in self.store.runs:
            self.current, self.pinned, self._settled = None, False, False
        if self.pinned:
            return False
        current = self.store.runs.get(self.current) if self.current else None
        if self._settled and current is not None and current.series:
            return False
        best = most_recent_run(self.store)
        changed = best != self.current
        self.current = best
        self._settled = self.caught_up and best is not None
        return changed

    def find_run(self, wanted: str) -> str | None:
        """The run called ``wanted``, else the first (by name) whose name contains it."""
        if wanted in self.store.runs:
            return wanted
        return next((name for name in self.store.sorted_names() if wanted in name), None)

    def select(self, name: str) -> bool:
        """The user picked ``name``; True when it exists."""
        if name not in self.store.runs:
            return False
        self.current, self.pinned = name, True
        return True

    def cycle(self, direction: int) -> str | None:
        """The run before/after the current one in name order (wrapping)."""
        names = self.store.sorted_names()
        if not names:
            return None
        index = names.index(self.current) if self.current in names else -1
        return names[(index + direction) % len(names)]

    # -- what to draw ----------------------------------------------------------------------------------

    def cards(self, name: str) -> list[tuple[str, list[CardModel]]]:
        """The grouped card models of a run; a model is rebuilt only when its tag changed."""
        run = self.store.runs[name]
        health = self.health.get(name)
        cache = self._cards.setdefault(name, {})
        names = display_names(run.series)
        grouped = []
        for group, tags in ordered_tags(run):
            models = []
            for tag in tags:
                model = cache.get(tag)
                if model is None or _stale(model, run, tag, health) or model.label != visible(names[tag]):
                    model = cache[tag] = build_card(run, tag, health, names[tag])
                models.append(model)
            grouped.append((group, models))
        return grouped

    def kind(self, name: str) -> str:
        """PPO, GRPO or unknown."""
        health = self.health.get(name)
        if health is not None and health.kind:
            return health.kind
        run = self.store.runs.get(name)
        return trainer_kind(run.series) if run is not None else "unknown"

    def age(self, run: Run) -> float | None:
        """Seconds since the run's newest point, as the snapshot and the stall rule count them.

        The file change time stands in when there is no point yet, or when the newest point is
        stamped in the future (the trainer's clock runs ahead of ours).
        """
        now = self.clock()
        moment = run.last_point_wall_time
        if moment is None or moment > now:
            moment = run.last_change_time
        return None if moment is None else max(0.0, now - moment)

    def rate(self) -> float:
        """Live points per second over the last `RATE_WINDOW` seconds."""
        now = time.monotonic()
        while self._rate and self._rate[0][0] < now - RATE_WINDOW:
            self._rate.popleft()
        return sum(count for _, count in self._rate) / RATE_WINDOW

    def header(self, paused_points: int | None, filter_text: str) -> HeaderInfo:
        """The header line's content for the current run."""
        loading = "" if self.caught_up else f"reading… {self.loaded_points:,} points"
        run = self.store.runs.get(self.current) if self.current else None
        if run is None:
            return HeaderInfo(loading_text=loading, paused_points=paused_points, filter_text=filter_text)
        health = self.health.get(run.name)
        age = self.age(run)
        stale = age is not None and age >= STALE_AFTER
        age_text = "" if age is None else (
            f"no new point for {_age_text(age)}" if stale else f"updated {_age_text(age)} ago")
        names = self.store.sorted_names()
        return HeaderInfo(
            run=run.name,
            kind=self.kind(run.name),
            step=run.last_step,
            level=None if health is None or health.empty else Level(health.level),
            age_text=age_text,
            stale=stale,
            rate_text=format_rate(self.rate()) if self.caught_up else "",
            run_position=(names.index(run.name) + 1, len(names)),
            paused_points=paused_points,
            loading_text=loading,
            filter_text=filter_text,
            # A run read from another kind than event files says so; the usual choice only in passing.
            source=run.source_label if run.source != "tfevents" else "",
            source_aside=run.source_label if run.source == "tfevents" else "",
        )

    def run_rows(self) -> list[RunRow]:
        """The runs list, in name order."""
        rows = []
        for name in self.store.sorted_names():
            run = self.store.runs[name]
            health = self.health.get(name)
            empty = health is None or health.empty
            rows.append(RunRow(
                name=name,
                kind=self.kind(name),
                step=run.last_step,
                level=None if empty else Level(health.level),
                age_text=_age_text(self.age(run)),
                points=run.scalar_count(),
            ))
        return rows


def _verdict(health: RunHealth) -> tuple:
    """What the screen shows of a verdict (levels and finding texts, not the exact values)."""
    shown = [(f.level, f.rule, f.tag, f.message, f.advice) for f in health.findings]
    return (shown, sorted(health.tag_levels.items()))


def _age_text(seconds: float | None) -> str:
    """``4 s``, then ``10 s``, ``20 s``… then minutes: the header changes at most every 10 s when idle."""
    if seconds is None:
        return "–"
    if 10 <= seconds < 60:
        seconds = seconds // 10 * 10
    return format_duration(seconds)


def most_recent_run(store: Store) -> str | None:
    """The run that changed last, preferring runs that hold scalars; None for an empty store."""
    def key(run: Run) -> tuple[bool, float, str]:
        moment = max(run.last_point_wall_time or 0.0, run.last_change_time or 0.0)
        return (bool(run.series), moment, run.name)

    runs = list(store.runs.values())
    return max(runs, key=key).name if runs else None


def _stale(model: CardModel, run: Run, tag: str, health: RunHealth | None) -> bool:
    """Does the card of ``tag`` need a new model (new points, new level, new findings)?"""
    if model.version != series_version(run.series[tag]) or model.series is not run.series[tag]:
        return True
    if health is None:
        return model.level != Level.OK or bool(model.findings)
    return model.level != health.tag_levels.get(tag, Level.OK) or model.findings != health.findings_for(tag)
