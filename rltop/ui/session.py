"""The dashboard's state without Textual: the store, the health verdicts, the run views, the chosen run.

The app applies every batch here (on the UI thread) and asks for what to draw; keeping this
Textual-free makes the rules (which run is shown, what the header says, which views changed)
testable on their own. Everything drawn comes from `rltop.view`: one `RunView` per run, the model
the snapshot prints too.
"""

from __future__ import annotations

import operator
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from rltop.health.bands import BandTracker
from rltop.health.engine import HealthEngine, RunHealth
from rltop.health.findings import Level
from rltop.ingest.feed import RELOADED, ChangeBatch
from rltop.live.judged import JudgedStore
from rltop.model.run import CONFIG_TAG, Run, Store
from rltop.model.summary import SeriesSummary
from rltop.ui.logic.header_info import HeaderInfo
from rltop.ui.logic.rates import RunRates
from rltop.view.compare.comparison import Comparison, compare_runs
from rltop.view.compare.groups import group_by_setting, group_settings, setting_group_row
from rltop.view.fleet import OverviewRow, overview_row, overview_values, severity, state_counts, worst_run
from rltop.view.group_view import GroupRow, GroupView, build_group_views, group_row
from rltop.view.metric_view import MetricView
from rltop.view.names import store_display_names
from rltop.view.run_view import RunView, build_run_view
from rltop.view.seed_groups import SeedGroup, find_seed_groups
from rltop.view.text.humanize import format_rate
from rltop.view.text.sentences import critical_sentence, freshness, step_text

FOLLOW_MODES = ("worst", "newest")
"""``--follow`` choices besides a run name: the worst run (default), or the newest one."""


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
    """Store + health + run views + view choices of one dashboard."""

    def __init__(
        self,
        store: Store | None = None,
        engine: HealthEngine | None = None,
        clock: Callable[[], float] = time.time,
        follow: str = "worst",
    ) -> None:
        self.judged = JudgedStore(store, engine, clock)
        """The store, the verdicts and the stall schedule (`rltop.live`: the same as ``watch``'s)."""
        self.store = self.judged.store
        self.engine = self.judged.engine
        self.health = self.judged.health
        self.clock = clock
        self.follow = follow
        """"worst", "newest", or (a part of) a run name: which run the dashboard shows by itself."""
        self.group_by: str | None = None
        """The setting the runs overview groups its lines by (``b``); None: not grouped."""
        self.current: str | None = None
        self.pinned = False  # the user (or --follow NAME) chose the run: no automatic switching
        self._settled = False  # the automatic choice is final (made after the first read)
        self.judged.caught_up = store is not None  # a preloaded store is complete
        self.loaded_points = sum(run.scalar_count() for run in self.store.runs.values())
        self.held = (0, 0)
        """(points, runs): what the first reads hold and have not delivered yet, and the runs they found."""
        self.dirty = Dirty(runs=set(self.store.runs), structure=True)
        self.rates = RunRates()
        """Live points per second of each run (a run's history is not counted)."""
        self._metric_views: dict[str, dict[str, MetricView]] = {}
        self._summaries: dict[str, dict[str, SeriesSummary]] = {}
        """Run -> tag -> the series' running summary (statistics and sparklines of live series)."""
        self._views: dict[str, RunView] = {}
        self._display_names: dict[str, str] = {}
        self._known_runs: set[str] = set(self.store.runs)
        self.bands = BandTracker(self.engine.rules)
        """The rules' thresholds along each series, for the charts (computed when a chart asks)."""
        self._groups: tuple[tuple, list[SeedGroup]] = ((), [])
        self.became_critical: list[str] = []
        """Runs that turned critical since the app last looked (announced once, then cleared)."""
        self.attention: set[str] = set()
        """Runs that turned critical and have not been shown since: highlighted in the overview."""
        self._overview_values: dict[str, tuple[RunView, tuple[tuple[str, str], ...]]] = {}
        self._fleet_counts: tuple[list[RunView], list[tuple[str, int]]] = ([], [])

    @property
    def caught_up(self) -> bool:
        """Everything on disk at start was read (a preloaded store: from the start)."""
        return self.judged.caught_up

    # -- input ---------------------------------------------------------------------------------------

    def apply(self, batch: ChangeBatch) -> int:
        """Apply one watcher batch and remember what changed; return the number of points it held.

        The batch is the session's alone, so it is consumed: a new series keeps the batch's
        columns instead of copying them (the whole first read comes as one batch).
        """
        before = set(self.store.runs)
        points = batch.point_count()
        if batch.held is not None:
            self.held = batch.held
        delivered = _points_per_run(batch)
        # A run without points until now gets its history in this batch (found while the
        # dashboard is open, or re-read after a rewrite): history is not a rate.
        history = {name for name in delivered if name not in before or not self.store.runs[name].series}
        # New points, completions (evidence of the findings; an open completions screen follows) and
        # events; a reloaded run (one of its files was rewritten) starts over like a removed one.
        applied = self.judged.apply(batch, consume=True)
        self.dirty.runs.update(applied.touched)
        reloaded = {e.run for e in batch.events if e.kind == RELOADED and e.run is not None}
        if set(self.store.runs) != before or applied.gone:
            self.dirty.structure = True
            for gone in applied.gone:
                self._overview_values.pop(gone, None)
                self._metric_views.pop(gone, None)
                self._summaries.pop(gone, None)
                self._views.pop(gone, None)
                self.attention.discard(gone)
                self.bands.forget(gone)
                self.rates.forget(gone)
        self.loaded_points += points
        now = time.monotonic()
        if not batch.initial:
            for name, count in delivered.items():
                if name in history or name in reloaded:
                    self.rates.begin(name, now)
                else:
                    self.rates.add(name, count, now)
        if batch.caught_up:
            self.dirty.structure = True
            for name in self.store.runs:  # what the first read found is history: rates start now
                self.rates.begin(name, now)
        return points

    @property
    def points_read(self) -> int:
        """Points read so far: in the store, and held by the watcher's first read."""
        return self.loaded_points + self.held[0]

    @property
    def runs_read(self) -> int:
        """Runs found so far: in the store, or (more of them) in the watcher's first read."""
        return max(len(self.store.runs), self.held[1])

    def reassess(self, names: set[str] | None = None) -> set[str]:
        """Judge the given runs (default: the dirty ones) now; return those whose verdict changed.

        A run that turns critical once the first read is over is noted in `became_critical` and
        `attention` (runs read as critical from the start are simply critical: nothing *became*).
        """
        changed = set()
        previous = self.judged.judge(set(self.dirty.runs) if names is None else names)
        for name, old in previous.items():
            health = self.health[name]
            if old is None or _verdict(old) != _verdict(health):
                changed.add(name)
            if self.caught_up and old is not None and old.level < Level.CRITICAL <= health.level:
                self.became_critical.append(name)
                if name != self.current:
                    self.attention.add(name)
            self._views.pop(name, None)
        return changed

    def alarm_state(self) -> dict[str, tuple]:
        """Run -> its level and which rules fire on which tags at which level: what must reach the
        screen at once when it changes (a changed value in an alert's text can wait)."""
        return {
            name: (health.level, sorted((f.rule, f.tag, f.level) for f in health.findings))
            for name, health in self.health.items()
        }

    def has_young_run(self, seconds: float) -> bool:
        """Whether a run's newest point or file change is less than ``seconds`` old."""
        limit = self.clock() - seconds
        return any(
            (run.last_point_wall_time or 0.0) > limit or (run.last_change_time or 0.0) > limit
            for run in self.store.runs.values()
        )

    def stale_runs(self) -> set[str]:
        """Runs whose stall verdict may have changed with the clock alone: each run is judged
        again when its age passes its next limit (a multiple of its own cadence), not on every
        tick, so an idle dashboard of 200 runs judges almost nothing."""
        return self.judged.stale_runs()

    def acknowledge(self, tag: str | None) -> None:
        """The user saw the latched criticals of ``tag`` (None: the whole current run) that are over."""
        if self.current is None:
            return
        self.engine.acknowledge(self.current, tag)
        self.dirty.runs.add(self.current)
        self._views.pop(self.current, None)

    # -- which run -------------------------------------------------------------------------------------

    def choose_run(self) -> bool:
        """Pick the run to show by the `follow` policy; True if it changed.

        - ``worst`` (default): the worst run (`severity`, then the most recent news). While the
          first read is in progress the choice may change at every repaint; afterwards only a run
          that is strictly worse than the one shown takes its place (a tie never flips the screen):
          a worse level, or the same level still active where the shown run's is over (a NaN now
          beside criticals that are all latched).
        - ``newest``: the most recently updated run when the first read ends, then any run that
          appears later (a new training started).
        - a name (or a part of one): that run as soon as it exists, then it stays (pinned).

        A run the user picked (runs list, ``[``/``]``, a click) stays until it disappears.
        """
        if self.current is not None and self.current not in self.store.runs:
            self.current, self.pinned, self._settled = None, False, False
        appeared = set(self.store.runs) - self._known_runs
        if self.caught_up:
            self._known_runs = set(self.store.runs)
        if self.pinned:
            return False
        if self.follow not in FOLLOW_MODES:
            wanted = self.find_run(self.follow)
            if wanted is not None:
                changed = wanted != self.current
                self.select(wanted)
                return changed
        best = self._candidate(appeared)
        if best is None or best == self.current:
            self._settled = self._settled or (self.caught_up and best is not None)
            return False
        self.current = best
        self._settled = self.caught_up
        self.attention.discard(best)
        return True

    def _candidate(self, appeared: set[str]) -> str | None:
        """The run the policy would show now (the current one when nothing should change)."""
        current = self.store.runs.get(self.current) if self.current else None
        if self.follow == "newest":
            if self._settled and current is not None and current.series:
                new = [name for name in appeared if self.store.runs[name].series]
                return most_recent_run(self.store, new) if new else self.current
            return most_recent_run(self.store)
        views = self.run_views()
        worst = worst_run(views)
        if worst is None:
            return None
        if not self._settled or current is None or not current.series:
            return worst.name
        # A worse run takes over; so does a live critical (a NaN now) from a run whose are all over.
        return worst.name if severity(worst) > severity(self.run_view(self.current)) else self.current

    def find_run(self, wanted: str) -> str | None:
        """The run called ``wanted``, else the first (by name) whose name or display name contains it."""
        if wanted in self.store.runs:
            return wanted
        names = self.display_names()
        return next(
            (name for name in self.store.sorted_names() if wanted in name or wanted in names[name]), None
        )

    def select(self, name: str) -> bool:
        """The user picked ``name``; True when it exists."""
        if name not in self.store.runs:
            return False
        self.current, self.pinned = name, True
        self.attention.discard(name)
        return True

    def follow_worst(self) -> str | None:
        """Back to following the worst run (``w``); returns the run to show."""
        self.follow, self.pinned, self._settled = "worst", False, False
        self.choose_run()
        return self.current

    def cycle(self, direction: int) -> str | None:
        """The run before/after the current one in name order (wrapping)."""
        names = self.store.sorted_names()
        if not names:
            return None
        index = names.index(self.current) if self.current in names else -1
        return names[(index + direction) % len(names)]

    # -- what to draw ----------------------------------------------------------------------------------

    def display_names(self) -> dict[str, str]:
        """Run name -> display name, for the runs shown now (shared parts dropped)."""
        if self._display_names.keys() != self.store.runs.keys():  # (compared in C, no sets built)
            self._display_names = store_display_names(self.store)
            self._views.clear()
        return self._display_names

    def run_view(self, name: str) -> RunView:
        """The view of a run (rebuilt after a new verdict; metric views only for the tags that changed)."""
        view = self._views.get(name)
        names = self.display_names()
        if view is None:
            cache = self._metric_views.setdefault(name, {})
            summaries = self._summaries.setdefault(name, {})
            view = build_run_view(
                self.store.runs[name], self.health.get(name), self.clock(), names[name], cache, summaries
            )
            self._views[name] = view
        return view

    def run_views(self) -> list[RunView]:
        """Every run's view, in name order (the runs overview and the runs list)."""
        self.display_names()  # (checked once here, not once per run: the header asks every second)
        views = self._views
        return [views.get(name) or self.run_view(name) for name in self.store.sorted_names()]

    def seed_groups(self) -> list[SeedGroup]:
        """The seed groups among the runs (found again when a run or a logged config changes)."""
        names = self.display_names()
        key = tuple((name, names[name], _config_text(run)) for name, run in sorted(self.store.runs.items()))
        if self._groups[0] != key:
            configs = {name: run.config for name, run in self.store.runs.items()}
            self._groups = (key, find_seed_groups(configs, names))
        return self._groups[1]

    def group_views(self) -> list[GroupView]:
        """Every seed group with its members' views and the spread of its key metrics."""
        groups = self.seed_groups()
        if not groups:
            return []
        return build_group_views(groups, {view.name: view for view in self.run_views()})

    def comparison(self) -> Comparison:
        """The runs compared: config diff, each verdict, the split line (`rltop.view.compare.comparison`)."""
        configs = {name: run.config for name, run in self.store.runs.items()}
        return compare_runs(self.run_views(), configs, self.seed_groups())

    def next_group_by(self) -> str | None:
        """``b``: group the overview by the next setting that differs between the runs (after the
        last one: not grouped); returns it."""
        settings = group_settings(self.comparison().diff)
        if self.group_by in settings:
            index = settings.index(self.group_by) + 1
            self.group_by = settings[index] if index < len(settings) else None
        else:
            self.group_by = settings[0] if settings else None
        return self.group_by

    def overview_rows(self) -> list[OverviewRow | GroupRow]:
        """The runs overview's lines, in name order; a seed group's line comes before its first run.
        Grouped by a setting (`group_by`): a line per value (its worst level and size), and the runs
        of the value the shown run has (a click on another value's line shows its worst run, and so
        opens that value): the overview stays a few lines high, whatever the sweep."""
        views = self.run_views()
        if self.group_by is None:
            return self._overview_lines(views)
        configs = {name: run.config for name, run in self.store.runs.items()}
        rows: list[OverviewRow | GroupRow] = []
        for group in group_by_setting(views, configs, self.group_by):
            rows.append(setting_group_row(group))
            if any(member.name == self.current for member in group.members):
                rows.extend(self._overview_lines(group.members))
        return rows

    def _overview_lines(self, views: list[RunView]) -> list[OverviewRow | GroupRow]:
        """The lines of these runs, each seed group's line before its first run."""
        now = self.clock()
        leading = {group.group.runs[0]: group for group in self.group_views()}
        rows: list[OverviewRow | GroupRow] = []
        for view in views:
            group = leading.get(view.name)
            if group is not None:
                rows.append(group_row(group))
            # A run's key values change only with its view; the ages tick every second.
            kept = self._overview_values.get(view.name)
            if kept is None or kept[0] is not view:
                kept = self._overview_values[view.name] = (view, overview_values(view))
            selected, attention = view.name == self.current, view.name in self.attention
            rows.append(overview_row(view, selected, attention, now, kept[1]))
        return rows

    def take_announcements(self) -> list[str]:
        """``✖ grpo_b is CRITICAL: non-finite values`` for each run that turned critical since the
        last call (safe to print), then forgets them."""
        texts = [
            critical_sentence(self.run_view(name)) for name in self.became_critical if name in self.store.runs
        ]
        self.became_critical.clear()
        return texts

    def display_name(self, name: str) -> str:
        """What the run called ``name`` is shown as."""
        return self.display_names().get(name, name)

    def rate(self, name: str | None = None) -> float:
        """Live points per second of run ``name`` (default: the one shown) over the last
        `rltop.ui.logic.rates.RATE_WINDOW` seconds."""
        return self.rates.rate(self.current if name is None else name, time.monotonic())

    def _fleet(self, views: list[RunView]) -> list[tuple[str, int]]:
        """`state_counts` of the views, counted again only when a view was rebuilt."""
        counted = self._fleet_counts[0]  # (the views themselves are kept: an id could be reused)
        if len(counted) != len(views) or not all(map(operator.is_, counted, views)):
            self._fleet_counts = (views, state_counts(views))
        return self._fleet_counts[1]

    def header(self, paused_points: int | None, filter_text: str) -> HeaderInfo:
        """The header line's content: the current run, and the state of every run."""
        loading = "" if self.caught_up else f"reading… {self.points_read:,} points"
        run = self.store.runs.get(self.current) if self.current else None
        if run is None:
            return HeaderInfo(loading_text=loading, paused_points=paused_points, filter_text=filter_text)
        view = self.run_view(run.name)
        views = self.run_views()
        age_text, stale = freshness(view, self.clock())
        return HeaderInfo(
            run=view.label,
            kind=view.kind,
            step_text=step_text(view),
            level=None if view.empty else view.level,
            finished=view.finished,
            age_text=age_text,
            stale=stale,
            rate_text=format_rate(self.rate(run.name)) if self.caught_up else "",
            fleet=self._fleet(views) if len(views) > 1 else [],
            paused_points=paused_points,
            loading_text=loading,
            filter_text=filter_text,
            # A run read from another kind than event files says so; the usual choice only in passing.
            source=run.source_label if run.source != "tfevents" else "",
            source_aside=run.source_label if run.source == "tfevents" else "",
        )


def _points_per_run(batch: ChangeBatch) -> dict[str, int]:
    """Run -> the number of scalar points ``batch`` brings it."""
    batch.settle()
    counts: dict[str, int] = {}
    for points in batch.points:
        counts[points.run] = counts.get(points.run, 0) + len(points)
    return counts


def _verdict(health: RunHealth) -> tuple:
    """What the screen shows of a verdict (levels and finding texts, not the exact values)."""
    shown = [(f.level, f.rule, f.tag, f.message, f.advice, f.active) for f in health.findings]
    return (shown, sorted(health.tag_levels.items()))


def _config_text(run: Run) -> str | None:
    entries = run.texts.get(CONFIG_TAG)
    return entries[-1].text if entries else None


def most_recent_run(store: Store, among: list[str] | None = None) -> str | None:
    """The run that changed last (of ``among``, default all), preferring runs that hold scalars."""

    def key(run: Run) -> tuple[bool, float, str]:
        moment = max(run.last_point_wall_time or 0.0, run.last_change_time or 0.0)
        return (bool(run.series), moment, run.name)

    runs = [store.runs[name] for name in among] if among is not None else list(store.runs.values())
    return max(runs, key=key).name if runs else None
