"""Enter on a metric: the whole series as a chart, with what it means and what to do about it.

Keys: ``s``/``S`` smoothing up/down (TensorBoard's debiased EMA, default 0.6), ``x`` x-axis (step,
time since start, wall time), ``o`` other runs on/off, ``n``/``N`` (or →/←) next/previous metric,
↑/↓ scroll the explanation, Esc back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from rltop.health.findings import Level
from rltop.model.catalog import MetricInfo, describe
from rltop.model.series import Series
from rltop.model.stats import series_stats
from rltop.ui.chart_options import X_LABELS
from rltop.ui.levels import LEVEL_KEYS
from rltop.ui.widgets.detail_chart import ChartData, DetailChart
from rltop.view.config import config_summary, config_value, headline_config
from rltop.view.marks import LEVEL_ICONS, LEVEL_NAMES, TREND_MARKS
from rltop.view.metric_view import series_version
from rltop.view.names import metric_names
from rltop.view.numbers import format_short
from rltop.view.safe_text import visible

if TYPE_CHECKING:
    from rltop.health.engine import RunHealth

Band = tuple[float | None, float | None, float | None, float | None]


class DetailScreen(Screen):
    """The chart and the explanation of one tag of one run."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("s", "app.smoothing(1)", "Smoothing"),
        Binding("S", "app.smoothing(-1)", "Less smoothing", show=False),
        Binding("x", "app.x_axis", "X axis"),
        Binding("o", "app.toggle_overlay", "Other runs"),
        Binding("n,right,l", "step_metric(1)", "Next", key_display="n"),
        Binding("N,left,h", "step_metric(-1)", "Previous", show=False),
        Binding("up,k", "scroll_info(-1)", "Scroll up", show=False),
        Binding("down,j", "scroll_info(1)", "Scroll down", show=False),
        Binding("pageup", "scroll_info(-5)", show=False),
        Binding("pagedown", "scroll_info(5)", show=False),
    ]
    COMPONENT_CLASSES = {"detail--ok", "detail--warn", "detail--crit", "detail--dim", "detail--label"}

    def __init__(self, run: str, tag: str) -> None:
        super().__init__(id="detail")
        self.run_name = run
        self.tag = tag
        # Kept as attributes: they can be filled before every nested widget is mounted.
        self._title = Static(id="detail-title")
        self._chart = DetailChart(id="chart")
        self._info = Static(id="detail-info")
        # Not focusable: every key belongs to the screen (arrows would scroll sideways otherwise).
        self._info_scroll = VerticalScroll(self._info, id="detail-info-scroll", can_focus=False)

    @property
    def chart(self) -> DetailChart:
        """The chart widget."""
        return self._chart

    def compose(self) -> ComposeResult:
        yield self._title
        yield self._chart
        yield self._info_scroll
        yield Footer()

    def on_mount(self) -> None:
        self.refresh_view()

    def on_screen_resume(self) -> None:
        self.refresh_view()

    def show_tag(self, run: str, tag: str) -> None:
        """Switch to another tag (or run) on the same screen."""
        self.run_name, self.tag = run, tag
        self.refresh_view()

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

    def refresh_view(self) -> None:
        """Redraw from the app's current store, health and chart settings."""
        app = self.app
        run = app.store.runs.get(self.run_name)
        series = run.series.get(self.tag) if run is not None else None
        health = app.health.get(self.run_name)
        level = Level(health.tag_levels.get(self.tag, Level.OK)) if health is not None else Level.OK
        info = describe(self.tag)
        label = metric_names(run.series).get(self.tag, self.tag) if run is not None else self.tag
        self._show_title(info, label, level)
        others = []
        if app.overlay_runs and series is not None:
            for name in app.store.sorted_names():
                other = app.store.runs[name].series.get(self.tag)
                if name != self.run_name and other is not None and len(other):
                    others.append((app.session.display_name(name), other))
        band = health.band(self.tag) if health is not None else (None, None, None, None)
        version = (
            self.run_name, self.tag, series_version(series) if series is not None else None,
            tuple((name, series_version(s)) for name, s in others), band, app.smoothing, app.x_mode,
        )
        self._chart.show(ChartData(
            series=series, others=others, band=band, weight=app.smoothing, x_mode=app.x_mode,
            run_label=app.session.display_name(self.run_name), version=version,
        ))
        self._show_info(series, health, info, band, len(others), run.config if run is not None else None)

    def _show_title(self, info: MetricInfo, label: str, level: Level) -> None:
        style = self.get_component_rich_style(f"detail--{LEVEL_KEYS[level]}")
        title = Text(no_wrap=True, overflow="ellipsis")
        title.append(f"{LEVEL_ICONS[level]} {LEVEL_NAMES[level]} ", style=style)
        title.append(visible(label), style="bold")
        if info.title and info.title != info.key:
            title.append(f"  {visible(info.title)}", style=self.get_component_rich_style("detail--dim"))
        title.append(f"  {visible(self.app.session.display_name(self.run_name))}",
                     style=self.get_component_rich_style("detail--dim"))
        self._title.update(title)

    def _show_info(
        self,
        series: Series | None,
        health: RunHealth | None,
        info: MetricInfo,
        band: Band,
        other_count: int,
        config: dict | None,
    ) -> None:
        app = self.app
        dim = self.get_component_rich_style("detail--dim")
        label = self.get_component_rich_style("detail--label")
        text = Text()
        if series is not None and len(series):
            stats = series_stats(series)
            text.append("last ", style=label)
            text.append(f"{format_short(stats.last)} {TREND_MARKS.get(stats.trend, '')}  ")
            shown = (("min", stats.min), ("max", stats.max), ("mean last 10%", stats.mean_last_10pct))
            for name, value in shown:
                text.append(f"{name} ", style=label)
                text.append(f"{format_short(value)}  ")
            text.append("points ", style=label)
            text.append(f"{stats.count} (steps {stats.first_step}–{stats.last_step})")
            if stats.non_finite:
                crit = self.get_component_rich_style("detail--crit")
                text.append(f"  ×{stats.non_finite} non-finite", style=crit)
            text.append("\n")
        text.append(f"smoothing {app.smoothing:g}  ·  x: {X_LABELS[app.x_mode]}", style=dim)
        if other_count:
            text.append(f"  ·  {other_count} other run(s) overlaid", style=dim)
        bounds = _band_text(band)
        if bounds:
            text.append(f"  ·  thresholds: {bounds}", style=dim)
        text.append("\n")
        findings = health.findings_for(self.tag) if health is not None else []
        for finding in findings:
            finding_level = Level(finding.level)
            if finding_level == Level.OK:
                continue
            text.append(f"\n{LEVEL_ICONS[finding_level]} {LEVEL_NAMES[finding_level]} ",
                        style=self.get_component_rich_style(f"detail--{LEVEL_KEYS[finding_level]}"))
            text.append(visible(finding.message))
            if finding.advice:
                text.append("\n  → " + visible(finding.advice), style=dim)
        settings = _headline_config(config)
        if settings:
            text.append("\n\nRun config: ", style=label)
            text.append(settings)
        if info.meaning:
            text.append("\n\nWhat it is: ", style=label)
            text.append(visible(info.meaning))
        if info.advice:
            text.append("\nWhat to try: ", style=label)
            text.append(visible(info.advice))
        self._info.update(text)


def _headline_config(config: dict | None) -> str:
    """``learning_rate 0.01 · num_ppo_epochs 16 …``: the settings the advice refers to."""
    settings = headline_config(config_summary(config))
    return "  ·  ".join(f"{key} {config_value(value)}" for key, value in settings.items())


def _band_text(band: Band) -> str:
    warn_low, warn_high, crit_low, crit_high = band
    parts = []
    if warn_low is not None or warn_high is not None:
        parts.append("warn " + _range(warn_low, warn_high))
    if crit_low is not None or crit_high is not None:
        parts.append("critical " + _range(crit_low, crit_high))
    return ", ".join(parts)


def _range(low: float | None, high: float | None) -> str:
    if low is not None and high is not None:
        return f"< {format_short(low)} or > {format_short(high)}"
    if low is not None:
        return f"< {format_short(low)}"
    return f"> {format_short(high)}"
