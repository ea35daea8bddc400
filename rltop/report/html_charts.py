"""The charts of the HTML and SVG snapshots: per run its key metrics and every metric with a finding,
per seed group its key metrics as a mean with a band, drawn like the dashboard draws them.

`html_report` puts them above the text view in one self-contained page (inline SVG and CSS, no
script, no font, no link: it opens offline); `svg_report` lays them out below the text view in one
SVG document. Both use `rltop.view.chart.data.build_figure` (the dashboard's chart model) and
`rltop.report.svg_chart`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from html import escape

from rltop.health.bands import BandTracker
from rltop.health.findings import Level
from rltop.report.snapshot import Snapshot
from rltop.report.svg_chart import DARK, LIGHT, ChartBox, svg_chart
from rltop.view.chart.data import Overlay, build_figure
from rltop.view.chart.options import ChartOptions
from rltop.view.chart.tags import chart_tags
from rltop.view.run_view import RunView
from rltop.view.text.marks import LEVEL_NAMES, STATE_SHORT
from rltop.view.text.numbers import format_short
from rltop.view.text.safe import visible

LEVEL_KEYS = {Level.OK: "ok", Level.WARN: "warn", Level.CRITICAL: "crit"}
CHARTS_PER_ROW = 3
"""Columns of charts in the SVG report (the HTML page flows them to the window's width)."""
GAP = 12


def _charts(snapshot: Snapshot, palette: Mapping[str, str], box: ChartBox) -> list[tuple[str, list[str]]]:
    """(section heading, chart SVGs) per run, then per seed group."""
    if snapshot.store is None:
        return []
    tracker = BandTracker(snapshot.rules)
    options = ChartOptions()
    columns = 2 * box.plot_width
    sections = []
    counter = 0
    for view in snapshot.runs:
        run = snapshot.store.runs.get(view.name)
        charts = []
        for tag in chart_tags(view, notes=True) if run is not None and not view.empty else []:
            metric = view.metric(tag)
            counter += 1
            spans = [
                (first, last, "crit" if f.level == Level.CRITICAL else "warn")
                for f in metric.findings
                if f.level > Level.OK
                for first, last in f.spans
            ]
            figure = build_figure(
                Overlay(view.name, view.display_name, metric.series, "smooth"),
                [],
                options,
                columns,
                tracker.track(run, tag, view.kind),
                spans,
            )
            charts.append(
                svg_chart(
                    figure,
                    metric.name,
                    _last(metric.stats.last, metric.stats.count),
                    LEVEL_KEYS[metric.level],
                    palette,
                    f"c{counter}",
                    box,
                    figure.scale.note,
                )
            )
        if charts:
            sections.append((f"{view.label} · {_state(view)}", charts))
    for group in snapshot.groups:
        charts = []
        for metric in group.metrics:
            members = [
                Overlay(m.name, m.display_name, m.metric(metric.tag).series, "member")
                for m in group.members
                if m.metric(metric.tag) is not None
            ]
            counter += 1
            figure = build_figure(members[0], [], options, columns, members=members)
            charts.append(
                svg_chart(
                    figure,
                    metric.name,
                    metric.spread_text,
                    LEVEL_KEYS[group.level],
                    palette,
                    f"c{counter}",
                    box,
                    f"mean of {len(members)}, band min–max",
                )
            )
        if charts:
            sections.append(
                (f"seed group {group.label} · {len(group.members)} runs · {LEVEL_NAMES[group.level]}", charts)
            )
    return sections


def _last(value: float | None, count: int) -> str:
    return f"last {format_short(value)}" if count else "no points"


def _state(view: RunView) -> str:
    return STATE_SHORT[view.state]


HTML_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>rltop snapshot</title>
<style>
{stylesheet}
body {{ color: {foreground}; background-color: {background}; margin: 16px;
  font-family: Menlo, 'DejaVu Sans Mono', Consolas, monospace; }}
h1 {{ font-size: 18px; margin: 0 0 8px 0; }}
h2 {{ font-size: 14px; margin: 18px 0 6px 0; }}
.charts {{ display: flex; flex-wrap: wrap; gap: 12px; }}
.charts svg {{ flex: none; }}
pre {{ font-family: inherit; }}
</style>
</head>
<body>
<h1>rltop snapshot</h1>
{charts}
<h2>Verdict</h2>
<pre><code style="font-family:inherit">{code}</code></pre>
</body>
</html>
"""


def html_page_template(snapshot: Snapshot) -> str:
    """Rich's ``export_html`` template with the charts in place (``{code}`` is the text view)."""
    parts = []
    for heading, charts in _charts(snapshot, LIGHT, ChartBox()):
        parts.append(f'<h2>{escape(heading)}</h2>\n<div class="charts">{"".join(charts)}</div>')
    # The charts' own braces must survive str.format: Rich fills the template with it.
    body = "\n".join(parts).replace("{", "{{").replace("}", "}}")
    return HTML_PAGE.replace("{charts}", body)


_VIEWBOX = re.compile(r'<svg class="rich-terminal" viewBox="0 0 ([\d.]+) ([\d.]+)"')


def svg_report(snapshot: Snapshot, text_svg: str) -> str:
    """One SVG document: the text view (Rich's export) on top, the charts below it."""
    match = _VIEWBOX.search(text_svg)
    if match is None:
        return text_svg
    text_width, text_height = float(match.group(1)), float(match.group(2))
    box = ChartBox()
    sections = _charts(snapshot, DARK, box)
    width = max(text_width, CHARTS_PER_ROW * box.width + (CHARTS_PER_ROW + 1) * GAP)
    y = text_height + GAP
    placed = []
    for heading, charts in sections:
        placed.append(
            f'<text x="{GAP}" y="{y + 14:.1f}" style="font-family:monospace;font-size:14px;'
            f'font-weight:bold" fill="{DARK["text"]}">{escape(visible(heading))}</text>'
        )
        y += 24
        for index, chart in enumerate(charts):
            column, row = index % CHARTS_PER_ROW, index // CHARTS_PER_ROW
            x = GAP + column * (box.width + GAP)
            top = y + row * (box.height + GAP)
            placed.append(chart.replace("<svg ", f'<svg x="{x}" y="{top:.1f}" ', 1))
        y += -(-len(charts) // CHARTS_PER_ROW) * (box.height + GAP)
    height = y + GAP if sections else text_height
    placed_text = (
        f'<svg class="rich-terminal" x="0" y="0" width="{text_width}" height="{text_height}" '
        f'viewBox="0 0 {text_width} {text_height}"'
    )
    inner = text_svg.replace(match.group(0), placed_text, 1)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}">'
        f'<rect width="100%" height="100%" fill="{DARK["background"]}"/>{inner}{"".join(placed)}</svg>\n'
    )
