"""The text under the detail chart: statistics, how the chart is drawn, findings, config, meaning."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.style import Style
from rich.text import Text

from rltop.health.findings import Level
from rltop.model.catalog import MetricInfo
from rltop.model.series import Series
from rltop.model.stats import series_stats
from rltop.ui.logic.levels import LEVEL_KEYS
from rltop.view.chart.data import Figure
from rltop.view.chart.options import BAND_LABELS, X_LABELS, ChartOptions
from rltop.view.chart.scale import x_text
from rltop.view.config import config_summary, config_value, headline_config
from rltop.view.text.marks import LEVEL_ICONS, LEVEL_NAMES, TREND_MARKS
from rltop.view.text.numbers import format_short
from rltop.view.text.rules import thresholds_sentence
from rltop.view.text.safe import visible

if TYPE_CHECKING:
    from rltop.health.engine import RunHealth
    from rltop.health.settings import Rules
    from rltop.ui.logic.chart_sources import ChartSources

Band = tuple[float | None, float | None, float | None, float | None]
StyleOf = Callable[[str], Style]


def detail_info(
    style: StyleOf,
    series: Series | None,
    health: RunHealth | None,
    tag: str,
    info: MetricInfo,
    options: ChartOptions,
    sources: ChartSources | None,
    figure: Figure | None,
    config: dict | None,
    rules: Rules | None = None,
) -> Text:
    """Everything below the chart, as one text (``style``: the screen's component styles; ``rules``:
    the thresholds in effect, for the rules' own words)."""
    dim, label = style("detail--dim"), style("detail--label")
    text = Text()
    if series is not None and len(series):
        stats = series_stats(series)
        text.append("last ", style=label)
        text.append(f"{format_short(stats.last)} {TREND_MARKS.get(stats.trend, '')}  ")
        for name, value in (("min", stats.min), ("max", stats.max), ("mean last 10%", stats.mean_last_10pct)):
            text.append(f"{name} ", style=label)
            text.append(f"{format_short(value)}  ")
        text.append("points ", style=label)
        text.append(f"{stats.count} (steps {stats.first_step}–{stats.last_step})")
        if stats.non_finite:
            text.append(
                f"  ×{stats.non_finite} non-finite (marked × ∞ at their steps)", style=style("detail--crit")
            )
        text.append("\n")
    text.append(chart_caption(options, sources, figure), style=dim)
    band = health.band(tag) if health is not None else (None, None, None, None)
    if any(bound is not None for bound in band):  # a rule judges the tag (here, with this config)
        words = thresholds_sentence(tag, rules) or band_text(band)
        text.append(f"\nthresholds: {words}", style=dim)
    text.append("\n")
    for finding in health.findings_for(tag) if health is not None else []:
        level = Level(finding.level)
        if level == Level.OK:
            continue
        badge = style(f"detail--{LEVEL_KEYS[level]}")
        text.append(f"\n{LEVEL_ICONS[level]} {LEVEL_NAMES[level]} ", style=badge)
        text.append(visible(finding.message))
        if finding.advice:
            text.append("\n  → " + visible(finding.advice), style=dim)
    settings = "  ·  ".join(
        f"{key} {config_value(value)}" for key, value in headline_config(config_summary(config)).items()
    )
    if settings:
        text.append("\n\nRun config: ", style=label)
        text.append(settings)
    if info.meaning:
        text.append("\n\nWhat it is: ", style=label)
        text.append(visible(info.meaning))
    if info.advice:
        text.append("\nWhat to try: ", style=label)
        text.append(visible(info.advice))
    return text


def chart_caption(options: ChartOptions, sources: ChartSources | None, figure: Figure | None) -> str:
    """``smoothing 0.6 · x: step · last 25 % · log y · 3 points clipped (i: all) · 2 other runs``."""
    parts = [f"smoothing {options.smoothing:g}", f"x: {X_LABELS[options.x_mode]}"]
    if figure is not None:
        if options.window is not None or options.zoom:
            share = f" (last {options.zoom:.0%})" if options.zoom and options.window is None else ""
            low, high = x_text(figure.xlim[0], options.x_mode), x_text(figure.xlim[1], options.x_mode)
            parts.append(f"showing {low}–{high}{share}")
        if figure.cut:
            runs = f"{len(figure.cut)} run{'s' if len(figure.cut) > 1 else ''}"
            parts.append(f"{runs} cut to this run's range (f: every run's range)")
        elif options.fit_all and sources is not None and (sources.others or sources.members):
            parts.append("x spans every run drawn (f: this run's range)")
        if figure.scale.note:
            parts.append(figure.scale.note)
        if figure.clipped:
            parts.append(f"{figure.clipped} outlier point(s) at the edge ↑↓ (i: scale to all)")
        elif not options.ignore_outliers:
            parts.append("scaled to every point (i: ignore outliers)")
    if sources is not None:
        if sources.members:
            parts.append(
                f"seed group {visible(sources.group.name) if sources.group else ''}: mean of "
                f"{len(sources.members)} runs, band {BAND_LABELS[options.band]} (g: runs, b: band)"
            )
        if sources.others:
            parts.append(f"{len(sources.others)} other run(s) overlaid (o: pick)")
        elif sources.candidates and not sources.members:
            others = len(sources.candidates)
            runs = f"{others} other runs log" if others > 1 else "1 other run logs"
            parts.append(f"{runs} this metric (o: overlay)")
    return "  ·  ".join(parts)


def band_text(band: Band) -> str:
    """``warn < 0.9 or ≥ 1.1, critical ≥ 2``: a band in words (as the rules compare: a value at a
    high threshold is beyond it), for a rule the rules table does not word."""
    warn_low, warn_high, crit_low, crit_high = band
    parts = []
    if warn_low is not None or warn_high is not None:
        parts.append("warn " + _range(warn_low, warn_high))
    if crit_low is not None or crit_high is not None:
        parts.append("critical " + _range(crit_low, crit_high))
    return ", ".join(parts)


def _range(low: float | None, high: float | None) -> str:
    if low is not None and high is not None:
        return f"< {format_short(low)} or ≥ {format_short(high)}"
    if low is not None:
        return f"< {format_short(low)}"
    return f"≥ {format_short(high)}"
