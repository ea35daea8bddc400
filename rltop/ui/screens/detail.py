"""Enter on a metric: the whole series as a chart to read values off, with what it means and what to do.

Keys: ← → move the cursor point by point (Shift: 10 points; Home/End: first/last point shown; the
mouse too), and the line under the chart reads the exact stored value of every overlaid run at the
cursor's step. ``z``/``Z`` zoom to the last 50/25/10 % of the run and back, ``[``/``]`` zoom in/out
around the cursor, ``l`` log y (symlog when a value is ≤ 0), ``i`` outliers in scaling on/off,
``s``/``S`` smoothing, ``x`` x-axis (step, time since start, wall time), ``o`` the overlay
checklist (the chart draws the run and its seed group until other runs are ticked), ``f`` the x
range of the shown run (longer runs cut, said on the chart) or of every run drawn, ``g`` seed
group as mean and band / separate runs, ``b`` the band (min–max, ±1 std), ``n``/``N``
next/previous metric, ↑/↓ scroll the explanation, Esc back.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from rltop.health.findings import Level
from rltop.model.catalog import MetricInfo, describe
from rltop.ui.key_bindings import bindings
from rltop.ui.logic.chart_sources import ChartSources, metric_sources
from rltop.ui.logic.keys import DETAIL_KEYS
from rltop.ui.logic.levels import LEVEL_KEYS
from rltop.ui.messages import OpenCompletions
from rltop.ui.screens.detail_info import detail_info
from rltop.ui.widgets.chart_readout import ChartReadout
from rltop.ui.widgets.detail_chart import ChartData, DetailChart
from rltop.view.chart.data import chart_extent, figure_range
from rltop.view.chart.options import BAND_KINDS, SMOOTHING_STEPS, X_MODES, ZOOMS, ChartOptions
from rltop.view.chart.readout import build_readout, nearest_point, step_point
from rltop.view.chart.scale import x_values
from rltop.view.names import metric_names
from rltop.view.text.marks import LEVEL_ICONS, LEVEL_NAMES
from rltop.view.text.safe import visible

MIN_WINDOW_POINTS = 4
"""``[`` stops zooming in when the range would hold fewer of the shown run's points."""


class DetailScreen(Screen):
    """The chart and the explanation of one tag of one run."""

    BINDINGS = bindings(DETAIL_KEYS)
    COMPONENT_CLASSES = {"detail--ok", "detail--warn", "detail--crit", "detail--dim", "detail--label"}

    def __init__(self, run: str, tag: str) -> None:
        super().__init__(id="detail")
        self.run_name = run
        self.tag = tag
        self.cursor_x: float | None = None
        """Where the cursor is (None: on the newest point shown, following the run as it grows)."""
        self.sources: ChartSources | None = None
        # Kept as attributes: they can be filled before every nested widget is mounted.
        self._title = Static(id="detail-title")
        self._chart = DetailChart(id="chart")
        self._readout = ChartReadout(id="detail-readout")
        self._info = Static(id="detail-info")
        # Not focusable: every key belongs to the screen (arrows would scroll sideways otherwise).
        self._info_scroll = VerticalScroll(self._info, id="detail-info-scroll", can_focus=False)

    @property
    def chart(self) -> DetailChart:
        """The chart widget."""
        return self._chart

    @property
    def readout(self) -> ChartReadout:
        """The line under the chart."""
        return self._readout

    @property
    def options(self) -> ChartOptions:
        """The app's chart settings (shared by every detail screen and the grid)."""
        return self.app.chart_options

    def compose(self) -> ComposeResult:
        yield self._title
        yield self._chart
        yield self._readout
        yield self._info_scroll
        yield Footer()

    def on_mount(self) -> None:
        self.refresh_view()

    def on_screen_resume(self) -> None:
        self.refresh_view()

    def show_tag(self, run: str, tag: str) -> None:
        """Switch to another tag (or run) on the same screen."""
        self.run_name, self.tag = run, tag
        self.cursor_x = None
        self.options.window = None
        self.refresh_view()

    # -- keys ----------------------------------------------------------------------------------------

    def action_completions(self) -> None:
        """``e``: what the policy wrote at the cursor's step (or the nearest logged step)."""
        index = self._cursor_index()
        step = int(self.sources.main.series.steps[index]) if index is not None else None
        self.post_message(OpenCompletions(step, self.tag, self.run_name))

    def action_scroll_info(self, lines: int) -> None:
        """Arrows/j/k scroll the explanation below the chart."""
        self._info_scroll.scroll_relative(y=lines, animate=False)

    def action_step_metric(self, direction: int) -> None:
        """``n``/``N``: the next/previous metric in the dashboard's order (filter applied)."""
        tags = self.app.visible_tags()
        if not tags:
            return
        index = tags.index(self.tag) + direction if self.tag in tags else 0
        self.show_tag(self.run_name, tags[index % len(tags)])

    def action_smoothing(self, direction: int) -> None:
        """``s``/``S``: next/previous smoothing weight."""
        steps = list(SMOOTHING_STEPS)
        index = min(range(len(steps)), key=lambda i: abs(steps[i] - self.options.smoothing))
        self.options.smoothing = steps[(index + direction) % len(steps)]
        self.refresh_view()

    def action_x_axis(self) -> None:
        """``x``: step -> time since start -> wall time (runs aligned by step or by relative time)."""
        options = self.options
        options.x_mode = X_MODES[(X_MODES.index(options.x_mode) + 1) % len(X_MODES)]
        options.window = None
        self.cursor_x = None
        self.refresh_view()

    def action_log_y(self) -> None:
        """``l``: log y (symlog when a value is ≤ 0) on/off."""
        self.options.log_y = not self.options.log_y
        self.refresh_view()

    def action_outliers(self) -> None:
        """``i``: ignore outliers in scaling (1st–99th percentile) on/off."""
        self.options.ignore_outliers = not self.options.ignore_outliers
        self.refresh_view()

    def action_group(self) -> None:
        """``g``: a seed group as mean and band, or its runs one by one."""
        self.options.group = not self.options.group
        self.refresh_view()

    def action_band(self) -> None:
        """``b``: the group's band from its lowest to its highest run, or its mean ± 1 std."""
        self.options.band = BAND_KINDS[(BAND_KINDS.index(self.options.band) + 1) % len(BAND_KINDS)]
        self.refresh_view()

    def action_zoom(self, direction: int) -> None:
        """``z``/``Z``: all -> last 50 % -> 25 % -> 10 % (and back)."""
        options = self.options
        index = ZOOMS.index(options.zoom) if options.window is None and options.zoom in ZOOMS else 0
        options.zoom = ZOOMS[(index + direction) % len(ZOOMS)]
        options.window = None
        self.refresh_view()

    def action_zoom_cursor(self, factor: float) -> None:
        """``[``/``]``: half / twice the x range, centred on the cursor."""
        sources, options = self.sources, self.options
        if sources is None:
            return
        overlays = self._overlays(sources)
        shown = figure_range(sources.main, overlays, options)
        full = chart_extent(sources.main, overlays, options)
        index = self._cursor_index()
        if shown is None or full is None or index is None:
            return
        centre = float(x_values(sources.main.series, options.x_mode)[index])
        width = (shown[1] - shown[0]) * factor
        if width >= full[1] - full[0]:
            options.window, options.zoom = None, None
        else:
            low = min(max(full[0], centre - width / 2), full[1] - width)
            xs = x_values(sources.main.series, options.x_mode)
            inside = ((xs >= low) & (xs <= low + width)).sum()
            if factor < 1 and inside < MIN_WINDOW_POINTS:
                return
            options.window, options.zoom = (low, low + width), None
        self.cursor_x = centre
        self.refresh_view()

    def action_cursor(self, points: int) -> None:
        """← → (Shift: 10 points): move the cursor along the shown run's points."""
        index = self._cursor_index()
        if index is None:
            return
        mode = self.options.x_mode
        shown = figure_range(self.sources.main, self._overlays(self.sources), self.options)
        low, high = shown if shown is not None else (float("-inf"), float("inf"))
        for _ in range(abs(points)):
            index = step_point(self.sources.main.series, mode, index, 1 if points > 0 else -1, low, high)
        self._place_cursor(index)

    def action_cursor_end(self, direction: int) -> None:
        """Home/End: the first/last point shown."""
        sources = self.sources
        if sources is None:
            return
        shown = figure_range(sources.main, self._overlays(sources), self.options)
        if shown is None:
            return
        edge = shown[0] if direction < 0 else shown[1]
        index = nearest_point(sources.main.series, self.options.x_mode, edge)
        if index is not None:
            self._place_cursor(index)

    def action_pick_runs(self) -> None:
        """``o``: the checklist of the runs to overlay."""
        from rltop.ui.screens.overlay_picker import OverlayPicker

        sources = self.sources
        if sources is None or not sources.candidates:
            self.notify("no other run logs this metric", timeout=2, markup=False)
            return
        run = self.run_name

        def chosen(ticked: frozenset[str] | None) -> None:
            if ticked is not None:
                self.options.overlays[run] = ticked
                self.refresh_view()

        group = frozenset(sources.group.runs) if sources.group is not None else frozenset()
        label = self.app.session.display_name(run)
        self.app.push_screen(OverlayPicker(label, sources.candidates, sources.picked, group), chosen)

    def action_fit(self) -> None:
        """``f``: the x range of the shown run (longer runs cut) or of every run drawn."""
        options = self.options
        options.fit_all = not options.fit_all
        options.window = None
        self.refresh_view()

    @on(DetailChart.Pointed)
    def _pointed(self, event: DetailChart.Pointed) -> None:
        event.stop()
        if self.sources is not None:
            index = nearest_point(self.sources.main.series, self.options.x_mode, event.x)
            if index is not None:
                self._place_cursor(index)

    # -- cursor ----------------------------------------------------------------------------------------

    @staticmethod
    def _overlays(sources: ChartSources | None) -> list:
        """The runs drawn besides the shown one."""
        if sources is None:
            return []
        return [*sources.others, *(sources.members or [])[1:]]

    def _cursor_index(self) -> int | None:
        """The shown run's point under the cursor, kept inside the range shown."""
        sources = self.sources
        if sources is None or not len(sources.main.series):
            return None
        mode = self.options.x_mode
        shown = figure_range(sources.main, self._overlays(sources), self.options)
        if shown is None:
            return None
        x = shown[1] if self.cursor_x is None else min(max(self.cursor_x, shown[0]), shown[1])
        index = nearest_point(sources.main.series, mode, x)
        if index is not None:
            point = float(x_values(sources.main.series, mode)[index])
            if not shown[0] <= point <= shown[1]:  # the nearest point lies outside: the edge one
                index = nearest_point(sources.main.series, mode, shown[0] if point < shown[0] else shown[1])
        return index

    def _place_cursor(self, index: int) -> None:
        series = self.sources.main.series
        xs = x_values(series, self.options.x_mode)
        # The newest point keeps "following": new points move the cursor along.
        self.cursor_x = None if index == len(series) - 1 else float(xs[index])
        self._show_cursor()

    def _show_cursor(self) -> None:
        sources = self.sources
        index = self._cursor_index()
        if sources is None or index is None:
            self._chart.set_cursor(None)
            self._readout.show(None, {}, self.options.x_mode)
            return
        mode = self.options.x_mode
        self._chart.set_cursor(float(x_values(sources.main.series, mode)[index]))
        main = sources.main
        drawn = [*(sources.members or [])[1:], *sources.others]
        readout = build_readout(
            (main.run, main.label, main.series, main.color if not sources.members else "member"),
            [(o.run, o.label, o.series, o.color) for o in drawn],
            mode,
            index,
        )
        group = {member.run for member in sources.members} if sources.members else None
        self._readout.show(readout, self._chart.palette(), mode, group)

    # -- drawing ---------------------------------------------------------------------------------------

    def refresh_view(self) -> None:
        """Redraw from the app's current store, health and chart settings."""
        app = self.app
        run = app.store.runs.get(self.run_name)
        health = app.health.get(self.run_name)
        level = Level(health.tag_levels.get(self.tag, Level.OK)) if health is not None else Level.OK
        info = describe(self.tag)
        label = metric_names(run.series).get(self.tag, self.tag) if run is not None else self.tag
        self._show_title(info, label, level)
        options = self.options
        sources = metric_sources(app.session, self.run_name, self.tag, options)
        self.sources = sources
        if sources is None:
            self._chart.show(ChartData(version=("none", self.run_name, self.tag)))
        else:
            self._chart.show(
                ChartData(
                    main=sources.main,
                    others=sources.others,
                    members=sources.members,
                    band=sources.band,
                    spans=sources.spans,
                    options=options,
                    legend=bool(sources.others or sources.members),
                    version=(self.run_name, self.tag, sources.version(), options.key()),
                )
            )
        self._show_cursor()
        series = sources.main.series if sources is not None else None
        config = run.config if run is not None else None
        self.call_after_refresh(self._show_info, series, health, info, config)

    def _show_info(self, series, health, info: MetricInfo, config: dict | None) -> None:
        # After the chart's next paint: the caption says what the figure clipped and how it scaled.
        self._info.update(
            detail_info(
                self.get_component_rich_style,
                series,
                health,
                self.tag,
                info,
                self.options,
                self.sources,
                self._chart.figure,
                config,
                self.app.session.engine.rules,
            )
        )

    def _show_title(self, info: MetricInfo, label: str, level: Level) -> None:
        style = self.get_component_rich_style(f"detail--{LEVEL_KEYS[level]}")
        title = Text(no_wrap=True, overflow="ellipsis")
        title.append(f"{LEVEL_ICONS[level]} {LEVEL_NAMES[level]} ", style=style)
        title.append(visible(label), style="bold")
        if info.title and info.title != info.key:
            title.append(f"  {visible(info.title)}", style=self.get_component_rich_style("detail--dim"))
        title.append(
            f"  {visible(self.app.session.display_name(self.run_name))}",
            style=self.get_component_rich_style("detail--dim"),
        )
        self._title.update(title)
