"""The rltop Textual app: live store, health verdicts, themes and the keys that work everywhere.

Data flow: the `Watcher` thread reads event files and calls ``on_batch``, which only posts a
`LiveBatch` message. On the UI thread the app applies the batch to its own store (`Session.apply`)
and schedules a repaint by the policy of `rltop.ui.logic.repaint`: new data is judged and drawn
within a quarter of a second, never later because drawing costs CPU (a repaint redraws only what
changed). Nothing repaints while nothing changes, apart from the header's clock text when its
wording changes.

Start-up is ordered for the first frame: this module and the dashboard screen import only Textual
and light rltop modules; numpy, the health engine and the watcher are imported right after the
first frame is painted (`_boot`), so the screen appears at once on any log size and fills in as
the watcher reads the files in the background ("reading… N points" in the header meanwhile).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from rich.text import Text
from textual import events, on
from textual.app import App, SystemCommand
from textual.driver import Driver
from textual.screen import Screen
from textual.timer import Timer

from rltop.ingest.storage import display as display_root
from rltop.ui import themes
from rltop.ui.follow_focus import redirect_key
from rltop.ui.key_bindings import bindings
from rltop.ui.logic.keys import DASHBOARD_KEYS
from rltop.ui.logic.repaint import RepaintSchedule, plan_repaint
from rltop.ui.messages import (
    Acknowledge,
    FilterChanged,
    LiveBatch,
    OpenCompletions,
    OpenDetail,
    ReadProgress,
    WatcherFailed,
)
from rltop.ui.palette import palette_commands
from rltop.ui.screens.dashboard import DashboardScreen
from rltop.ui.widgets.runs_overview import RunsOverview
from rltop.view.chart.options import ChartOptions
from rltop.view.text.safe import visible
from rltop.view.text.sentences import calm_sentence, empty_sentence

if TYPE_CHECKING:
    from rltop.alerts.settings import AlertSettings
    from rltop.health.engine import HealthEngine, RunHealth
    from rltop.health.settings import Rules
    from rltop.ingest.feed import ChangeBatch
    from rltop.model.run import Store
    from rltop.ui.alerting import DashboardAlerts
    from rltop.ui.session import Session
    from rltop.ui.widgets.detail_chart import ChartData

OVERVIEW_TICK = 10.0
"""Seconds between clock-only refreshes of the runs overview when no run is young."""
YOUNG_RUN = 120.0
"""A run whose newest point is younger than this shows its age in seconds (refreshed each tick)."""


class RltopApp(App[int]):
    """``rltop PATH``: the live dashboard."""

    CSS_PATH = "app.tcss"
    TITLE = "rltop"
    BINDINGS = bindings(DASHBOARD_KEYS, "app")  # the key table: the footer shows what ? lists

    def __init__(
        self,
        paths: list[str] | None = None,
        *,
        store: Store | None = None,
        engine: HealthEngine | None = None,
        rules: Rules | None = None,
        poll: float | None = None,
        tags: str | None = None,
        runs: str | None = None,
        theme: str | None = None,
        clock: Callable[[], float] = time.time,
        run: str | None = None,
        follow: str = "worst",
        screenshot_dir: str | None = None,
        alerts: AlertSettings | None = None,
    ) -> None:
        """``paths`` are watched live; with ``store`` (tests, snapshots) that store is shown as is.

        ``follow``: which run to show by itself, "worst", "newest" or a run name (``run`` is the
        same as a name); ``screenshot_dir``: where the screenshot command saves (default: here);
        ``alerts``: hooks, webhooks, bell and title (`rltop.ui.alerting`); None tells nobody.
        """
        super().__init__()
        self.paths = list(paths or ["."])
        self.clock = clock
        self.follow = run or follow
        self.screenshot_dir = screenshot_dir or os.getcwd()
        self._session_args = (store, engine, rules)
        self.session: Session | None = None
        if store is not None:
            self._create_session()
        self._watch_options = None if store is not None else {"poll": poll, "tags": tags, "runs": runs}
        self._alert_settings = alerts
        self._alerts: DashboardAlerts | None = None
        self.chart_options = ChartOptions()
        """How charts are drawn (smoothing, x axis, zoom, log y, overlaid runs...): the detail
        screen's keys change it; every detail screen and the dashboard's chart grid read it."""
        self.paused = False
        self._paused_points = 0
        self.filter_text = ""
        self.waiting_note = ""
        self._follow_said = False
        """``--follow NAME`` matched no run once the first read was complete, and that was said."""
        self._watcher = None
        self._flush_timer: Timer | None = None
        self.repaints = RepaintSchedule(last_whole=time.monotonic())
        """When the next repaint comes (`rltop.ui.logic.repaint`)."""
        self.repaint_count = 0
        """Repaints done so far (tests wait for the one after a batch)."""
        self._last_overview = 0.0  # when the runs overview was last redone
        self._theme_problems: list[str] = []
        self.dashboard = DashboardScreen(
            reading=None if store is not None else [display_root(p) for p in self.paths]
        )
        self._setup_themes(theme)

    def _create_session(self) -> None:
        """Build the store-and-health state (imports numpy and the health engine)."""
        from rltop.health.engine import HealthEngine
        from rltop.ui.session import Session

        store, engine, rules = self._session_args
        self.session = Session(
            store, engine if engine is not None else HealthEngine(rules), self.clock, follow=self.follow
        )

    # -- shortcuts for screens -------------------------------------------------------------------------

    @property
    def store(self) -> Store:
        """The app's own store (applied on the UI thread only)."""
        return self.session.store

    @property
    def health(self) -> dict[str, RunHealth]:
        """run name -> RunHealth."""
        return self.session.health

    def get_default_screen(self) -> Screen:
        return self.dashboard

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver for this terminal; on Linux and macOS one whose input thread sleeps
        until there is input (`rltop.ui.input_driver`: Textual's wakes ten times a second)."""
        driver_class = super().get_driver_class()
        if driver_class.__module__ != "textual.drivers.linux_driver":  # (it imports termios)
            return driver_class
        from rltop.ui import input_driver

        return input_driver.QuietLinuxDriver if input_driver.ENABLED else driver_class

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(themes.VARIABLE_DEFAULTS)

    # -- themes ------------------------------------------------------------------------------------

    def _setup_themes(self, requested: str | None) -> None:
        self._cycle, self._theme_problems = themes.install_themes(self, requested)

    def action_next_theme(self) -> None:
        """``t``: the next rltop (or user) theme."""
        cycle = self._cycle or [self.theme]
        index = cycle.index(self.theme) + 1 if self.theme in cycle else 0
        self.theme = cycle[index % len(cycle)]
        self.notify(f"theme: {self.theme}", timeout=1.5, markup=False)

    # -- life cycle ------------------------------------------------------------------------------------

    def on_mount(self) -> None:
        for problem in self._theme_problems:
            self.notify(visible(problem), severity="warning", markup=False)
        if self.session is None:
            # Let the first frame ("Reading event files under …") reach the terminal before the
            # heavy imports (numpy, the health engine: 0.1 s) block the loop: after the screen's
            # first refresh. (A 30 ms timer often fired first on a busy machine, and the first
            # frame waited for them.)
            self.call_after_refresh(self._start)
        else:
            self._start()

    def _start(self) -> None:
        """The heavy imports, the session, the watcher and the clock."""
        if self.session is None:
            self._create_session()
        if self._alert_settings is not None:
            from rltop.ui.alerting import DashboardAlerts

            self._alerts = DashboardAlerts(self, self._alert_settings)
        if self._watch_options is not None:
            self._start_watcher()
        self.set_interval(1.0, self._tick)
        self._schedule_flush()

    def _start_watcher(self) -> None:
        from rltop.ingest.follow.watcher import Watcher

        def on_batch(batch: ChangeBatch) -> None:  # watcher thread: only post a message
            self.post_message(LiveBatch(batch))

        def on_progress(points: int, runs: int) -> None:  # watcher thread: only post a message
            self.post_message(ReadProgress(points, runs))

        try:
            self._watcher = Watcher(self.paths, on_batch, on_progress=on_progress, **self._watch_options)
            self._watcher.start()
        except (OSError, ValueError) as error:
            self.post_message(WatcherFailed(str(error)))

    def on_unmount(self) -> None:
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.stop(1.0)
        if self._alerts is not None:
            self._alerts.close()

    @on(WatcherFailed)
    def _watcher_failed(self, message: WatcherFailed) -> None:
        self.exit(return_code=2, message=Text(f"rltop: error: {visible(message.reason)}"))

    # -- live data --------------------------------------------------------------------------------------

    @on(LiveBatch)
    def _live_batch(self, message: LiveBatch) -> None:
        from rltop.ingest.feed import FALLBACK, FILE_ERROR, REACHABLE, REMOVED, WAITING

        batch = message.batch
        points = self.session.apply(batch)
        for event in batch.events:
            if event.kind == WAITING:
                self.waiting_note = event.message
            elif event.kind in (FILE_ERROR, FALLBACK):
                self.notify(visible(event.message), severity="warning", markup=False, timeout=8)
            elif event.kind == REMOVED and event.run is not None:
                self.notify(f"run removed: {visible(event.run)}", markup=False, timeout=5)
            elif event.kind == REACHABLE:  # a remote store answers again (its failure was a warning)
                self.notify(visible(event.message), markup=False, timeout=5)
        if self.paused:
            self._paused_points += points
            self._show_header()
            return
        # The first read is complete: the picture it waited for is drawn now, not after the
        # MIN_REPAINT spacing meant for live data (up to 0.25 s of waiting for nothing).
        self._schedule_flush(at_once=batch.caught_up)

    @on(ReadProgress)
    def _read_progress(self, message: ReadProgress) -> None:
        self.session.held = (message.points, message.runs)
        if not self.paused:
            self._schedule_flush()

    def _schedule_flush(self, at_once: bool = False) -> None:
        """A repaint soon: within `MIN_GAP` of the last one for new data (``at_once``: in 10 ms)."""
        delay = self.repaints.request(time.monotonic(), at_once)
        if delay is None:
            return  # the repaint already scheduled comes soon enough
        if self._flush_timer is not None:
            self._flush_timer.stop()
        self._flush_timer = self.set_timer(delay, self._repaint, name="rltop-repaint")

    async def _repaint(self) -> None:
        """Judge what changed and draw it: every part whose data changed, nothing else.

        (Not "_flush": Textual's App._flush(stderr) forwards captured prints; overriding it made
        any print() while the dashboard runs raise TypeError.)
        """
        self._flush_timer = None
        now = time.monotonic()
        self.repaints.begin(now)
        # A repaint timer can fire while the app closes and its widgets are gone: nothing to draw.
        if self.paused or self._exit or self._closing or self.dashboard._closing:
            return
        self.repaint_count += 1
        session = self.session
        if not self.repaints.draws_whole(now, session.caught_up):
            self._show_progress()  # the first read: judge and lay out once, when it is complete
            return
        if session.dirty.runs:
            session.reassess()
        self._observe_alerts()
        structure = session.dirty.structure
        changed_runs = session.dirty.runs | session.dirty.verdicts
        switched = session.choose_run()
        session.dirty.clear()
        self._announce_criticals()
        top = self.screen
        plan = plan_repaint(
            changed_runs, structure, switched, session.current, top.id, getattr(top, "run_name", None)
        )
        if plan.run:
            await self._show_dashboard()  # (the runs overview with it)
        self._show_header(overview=not plan.run)
        if plan.top_screen:
            top.refresh_view()
        elif plan.runs_list and top.id == "diff":
            top.update(session.comparison())  # a verdict changed: the table and the line follow it
        elif plan.runs_list:
            top.update_rows(session.run_views(), session.clock())

    async def _show_dashboard(self, focus_tag: str | None = None) -> None:
        session = self.session
        name = session.current
        if name is None:
            roots = [display_root(p) for p in self.paths]
            if session.caught_up:
                self.dashboard.show_waiting(roots, self.waiting_note)
            else:
                self.dashboard.show_waiting(roots, loading=(session.points_read, session.runs_read))
            return
        view = session.run_view(name)
        if view.empty:
            calm = empty_sentence(", ".join(visible(tag) for tag in view.texts))
        else:
            calm = "✔ " + calm_sentence(len(view.rows))
        self.dashboard.show_overview(self._overview_rows())
        await self.dashboard.show_run(view, calm, focus_tag or self.dashboard.focused_tag)
        self._say_unmatched_follow()

    def _say_unmatched_follow(self) -> None:
        """``--follow NAME`` that no run matches once the first read is complete: said once (the
        worst run is shown meanwhile; a run that matches later still takes over)."""
        session = self.session
        if self._follow_said or not session.caught_up:
            return
        from rltop.ui.session import FOLLOW_MODES  # loaded with the session (numpy): not before it

        wanted = session.follow
        if wanted in FOLLOW_MODES or session.find_run(wanted) is not None:
            return
        self._follow_said = True
        names = sorted(set(session.display_names().values()))
        listed = ", ".join(visible(name) for name in names[:4]) + (", …" if len(names) > 4 else "")
        self.notify(
            f"--follow {visible(wanted)}: no run matches it (yet); showing the worst run until one "
            f"does. Runs: {listed}",
            severity="warning",
            timeout=10,
            markup=False,
        )

    def _show_progress(self) -> None:
        """The first read's progress: points read so far, on the waiting screen or in the header."""
        session = self.session
        if session.current is None:
            roots = [display_root(p) for p in self.paths]
            self.dashboard.show_waiting(roots, loading=(session.points_read, session.runs_read))
        else:
            self._show_header()

    def _announce_criticals(self) -> None:
        """A toast for every run that turned critical (its overview line stays highlighted)."""
        for text in self.session.take_announcements():
            self.notify(text, severity="error", timeout=10, markup=False)

    def _show_header(self, tick: bool = False, overview: bool = True) -> None:
        """The header; and the runs overview, whose ages move with the clock. On a clock tick the
        overview is redone every second only while a run is young (its age counts seconds), else
        every OVERVIEW_TICK seconds: ages in minutes and hours, hundreds of lines. ``overview``:
        False when the caller just redid it."""
        if self.session is None:
            return
        paused = self._paused_points if self.paused else None
        info = self.session.header(paused, self.filter_text)
        watcher = self._watcher
        if watcher is not None and watcher.mode == "polling":
            info.note = f"polling {watcher.poll_interval:g} s"  # NFS/Lustre, or --poll
        self.dashboard.show_header(info)
        if self.session.current is None or self.paused or not overview:
            return
        now = time.monotonic()
        if tick and now - self._last_overview < OVERVIEW_TICK and not self.session.has_young_run(YOUNG_RUN):
            return
        self._last_overview = now
        self.dashboard.show_overview(self._overview_rows())  # ages tick, finished runs

    def _overview_rows(self) -> list:
        """The runs overview's lines; none for a single run (the overview shows from two runs on,
        and the header says everything about one)."""
        session = self.session
        return session.overview_rows() if len(session.store.runs) > 1 else []

    def _observe_alerts(self) -> None:
        """Hand the verdicts to the alerts (hooks, webhooks, bell, title)."""
        if self._alerts is not None and self.session is not None:
            self._alerts.observe(self.session.store, self.session.health, self.session.caught_up)

    async def _tick(self) -> None:
        """Once a second: the header's clock text, and the runs whose stall verdict is due."""
        if self._alerts is not None:
            self._alerts.tick()
            if self.paused:  # the screen is frozen; the alerts are not
                self.session.reassess()
                self._observe_alerts()
        if self.paused:
            return
        stale = self.session.stale_runs() if self.session.caught_up else set()
        if stale:
            changed = self.session.reassess(stale)
            self._observe_alerts()
            if changed:
                self.session.dirty.verdicts.update(changed)
                self._schedule_flush()
        self._show_header(tick=True)

    # -- actions ----------------------------------------------------------------------------------------

    async def _on_key(self, event: events.Key) -> None:
        # Before Textual looks up the key's binding: a key queued for a widget that lost the focus
        # meanwhile (a burst: "/kl", Enter then q) goes on to the widget focused now.
        redirect_key(self.screen, event)

    @on(OpenDetail)
    def _open_detail(self, message: OpenDetail) -> None:
        self.open_detail(message.tag)

    def open_detail(self, tag: str) -> None:
        """Show the detail screen of ``tag`` in the current run."""
        from rltop.ui.screens.detail import DetailScreen  # plotext and the chart code load on first use

        if self.session.current is not None and tag in self.store.runs[self.session.current].series:
            self.push_screen(DetailScreen(self.session.current, tag))

    def open_completions(self, step: int | None, tag: str | None = None, run: str | None = None) -> None:
        """Show the completions of ``run`` (default: the current one) at ``step`` (None: the newest)."""
        from rltop.ui.screens.completions import NO_COMPLETIONS, CompletionsScreen

        name = run or (self.session.current if self.session is not None else None)
        if name is None or name not in self.store.runs:
            return
        index = self.store.runs[name].completions
        if not index and not index.note:  # nothing to show: say so, not a screen of keys that do nothing
            label = visible(self.session.display_name(name))
            self.notify(f"{label}: {NO_COMPLETIONS}", timeout=4, markup=False)
            return
        self.push_screen(CompletionsScreen(name, step, tag))

    @on(OpenCompletions)
    def _open_completions(self, message: OpenCompletions) -> None:
        self.open_completions(message.step, message.tag, message.run)

    def grid_chart(self, run: str, tag: str) -> ChartData:
        """What the dashboard grid's chart of ``tag`` draws: the run alone, with its thresholds."""
        from rltop.ui.logic.chart_sources import metric_sources
        from rltop.ui.widgets.detail_chart import ChartData

        options = ChartOptions(smoothing=self.chart_options.smoothing)
        sources = metric_sources(self.session, run, tag, options, overlay=False)
        if sources is None:
            return ChartData(version=("none", run, tag))
        return ChartData(
            main=sources.main,
            band=sources.band,
            spans=sources.spans,
            options=options,
            version=(run, tag, sources.version(), options.key()),
        )

    @on(Acknowledge)
    def _acknowledge(self, message: Acknowledge) -> None:
        self.acknowledge(message.tag)

    def acknowledge(self, tag: str | None) -> None:
        """Un-latch the criticals of ``tag`` that are over, then repaint."""
        if self.session is None:
            return
        self.session.acknowledge(tag)
        self._schedule_flush()

    def visible_tags(self) -> list[str]:
        """The dashboard's metric order with the filter applied (detail screen's n/N)."""
        return self.dashboard.visible_tags()

    @on(FilterChanged)
    def _filter_changed(self, message: FilterChanged) -> None:
        """The dashboard's filter changed: the header shows it."""
        self.filter_text = message.text
        self._show_header()

    def action_help(self) -> None:
        """``?``."""
        from rltop.ui.screens.help import HelpScreen

        if self.screen.id != "help":
            self.push_screen(HelpScreen())

    def action_runs(self) -> None:
        """``r``: the runs list."""
        from rltop.ui.screens.runs import RunsScreen  # DataTable loads on first use

        if self.screen.id == "runs" or self.session is None or not self.store.runs:
            return

        async def chosen(name: str | None) -> None:
            if name is not None:
                await self.switch_run(name)

        self.push_screen(
            RunsScreen(self.session.run_views(), self.session.current, self.session.clock()), chosen
        )

    def action_config_diff(self) -> None:
        """``d``: the runs compared (from the dashboard or the runs list)."""
        from rltop.ui.screens.diff import DiffScreen  # DataTable loads on first use

        if self.screen.id == "diff" or self.session is None:
            return
        if len(self.store.runs) < 2:
            self.notify("one run: nothing to compare", timeout=3, markup=False)
            return

        async def chosen(name: str | None) -> None:
            if name is not None:
                if self.screen.id == "runs":
                    self.pop_screen()
                await self.switch_run(name)

        self.push_screen(DiffScreen(self.session.comparison()), chosen)

    def action_group_by(self) -> None:
        """``b``: group the runs overview by the next setting that differs (then not at all)."""
        if self.session is None or len(self.store.runs) < 2:
            return
        setting = self.session.next_group_by()
        if setting is None and not self.session.comparison().diff.rows:
            self.notify("no setting differs between the runs", timeout=3, markup=False)
        else:
            said = f"overview grouped by {visible(setting)}" if setting else "overview not grouped"
            self.notify(said, timeout=2, markup=False)
        self.dashboard.show_overview(self._overview_rows())

    async def action_follow_worst(self) -> None:
        """``w``: show the worst run, and follow the worst run again from now on."""
        if self.session is None:
            return
        focus = self.dashboard.focused_tag
        if self.session.follow_worst() is not None:
            await self._show_dashboard(focus)
            self._show_header()
            self.notify("following the worst run", timeout=1.5, markup=False)

    async def action_cycle_run(self, direction: int) -> None:
        """``[`` / ``]``: previous/next run."""
        name = self.session.cycle(direction) if self.session is not None else None
        if name is not None:
            await self.switch_run(name)

    @on(RunsOverview.Chosen)
    async def _run_chosen(self, message: RunsOverview.Chosen) -> None:
        await self.switch_run(message.run)

    async def switch_run(self, name: str) -> None:
        """Show ``name``, keeping the focused metric when the run has it."""
        focus = self.dashboard.focused_tag
        if self.session.select(name):
            await self._show_dashboard(focus)
            self._show_header()

    def action_pause(self) -> None:
        """``p``: freeze / unfreeze the screen (data keeps being read and applied)."""
        self.paused = not self.paused
        self._paused_points = 0
        if not self.paused and self.session is not None:
            self.session.dirty.structure = True
            self._schedule_flush()
        self._show_header()

    def save_screenshot_here(self) -> str | None:
        """Save an SVG of the screen in `screenshot_dir` and say where; the path (None on failure)."""
        try:
            path = os.path.abspath(self.save_screenshot(path=self.screenshot_dir))
        except OSError as error:
            self.notify(
                f"cannot save a screenshot in {visible(self.screenshot_dir)}: "
                f"{visible(error.strerror or str(error))}",
                severity="error",
                markup=False,
            )
            return None
        self.notify(f"screenshot saved: {visible(path)}", timeout=8, markup=False)
        return path

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """The command palette lists rltop's actions next to Textual's own.

        Textual's own "Screenshot" is replaced: it saves into the platform's downloads folder
        (nowhere a user over SSH would look); rltop's saves where `screenshot_dir` says.
        """
        yield from palette_commands(self, screen)
        for command in super().get_system_commands(screen):
            if command.title != "Screenshot":
                yield command
