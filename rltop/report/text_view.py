"""The text snapshot as Rich renderables: per run a header, the findings, the grouped metric table.

The same renderables make the terminal text and, through Rich's console export, the SVG and HTML
reports. Every line fits the given width (40 and up) without a broken word: the metric table is
laid out here with exact cell widths instead of letting a Rich table wrap names mid-word; a name
too long for its column gets a line of its own above its values. Every string that comes from a
log goes through `visible` and into a `Text`, so markup and escape sequences stay literal.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.rule import Rule
from rich.style import Style
from rich.table import Table
from rich.text import Text

from rltop.health.findings import Finding, Level
from rltop.model.names import display_message
from rltop.report.compare_report import compare_renderables
from rltop.report.formats import MIN_WIDTH
from rltop.report.snapshot import Snapshot
from rltop.view.chart.spark import NON_FINITE_GLYPH, sparkline_text
from rltop.view.config import config_value
from rltop.view.metric_view import MetricView
from rltop.view.run_view import RunView
from rltop.view.text.humanize import format_staleness, format_utc, plural
from rltop.view.text.marks import LEVEL_NAMES, NOTE_NAME, TREND_MARKS
from rltop.view.text.numbers import format_short
from rltop.view.text.safe import visible
from rltop.view.text.sentences import calm_sentence, empty_sentence, step_text

LEVEL_STYLES = {Level.OK: "green", Level.WARN: "yellow", Level.CRITICAL: "bold red"}
_STATE_STYLES = {"critical": "bold red", "warn": "yellow", "ok": "green", "empty": "yellow"}
_STAT_WIDTH = 8  # format_short's ordinary maximum ("-4.58e-4"); widened when a value needs more
_LEVEL_WIDTH = 5  # "level" header; the labels are at most 4 cells
_MIN_SPARK = 8
_MIN_NAME = 10
# Below this many columns for name + sparkline, min and max are dropped (last stays).
_FULL_STATS_MIN_AVAIL = 30
# The spaces between table cells carry a style of their own that renders as nothing (meta only, no
# escape code): they then stay separate segments, so Rich's SVG export skips them and places every
# cell at its exact column. Merged into "   0.6981", some SVG renderers (rsvg) drop the leading
# no-break spaces and stretch the number instead, and right-aligned columns come out ragged.
_PAD = Style(meta={"rltop": "pad"})


@dataclass(frozen=True)
class _Layout:
    """Cell widths of one run's metric table."""

    name: int
    spark: int
    stats: tuple[str, ...]  # which of "last", "min", "max" are shown
    stat_width: int


def level_text(level: Level) -> Text:
    """The coloured label of a level in a table: ``CRIT``, ``WARN`` or ``ok``."""
    return Text(LEVEL_NAMES[level], style=LEVEL_STYLES[level])


def snapshot_renderables(snapshot: Snapshot, width: int) -> list[RenderableType]:
    """Everything the text view prints for ``snapshot`` at ``width`` columns, top to bottom."""
    width = max(width, MIN_WIDTH)
    parts: list[RenderableType] = [_summary_line(snapshot)]
    if not snapshot.runs:
        parts.append(Text("No runs matched.", style="yellow"))
    if snapshot.comparison is not None:
        parts.append(Rule(style="dim"))
        parts.extend(compare_renderables(snapshot.comparison, width))
    for run in snapshot.runs:
        parts.append(Rule(style="dim"))
        parts.extend(run_renderables(run, width))
    if any(run.rows for run in snapshot.runs):
        parts.append(Text(""))
        parts.append(_legend())
    return parts


def _summary_line(snapshot: Snapshot) -> Text:
    line = Text("rltop snapshot", style="bold")
    _append(line, f" · {plural(len(snapshot.runs), 'run')}")
    for label, count in snapshot.state_counts():
        _append(line, " · ")
        line.append(f"{count} {label}", style=_STATE_STYLES[label])
    _append(line, f" · {format_utc(snapshot.generated_at)}", style="dim")
    return line


def _legend() -> Text:
    marks = "".join(TREND_MARKS[t] for t in ("up", "down", "flat"))
    return Text(
        f"{marks} recent trend · {NON_FINITE_GLYPH}N NaN/Inf points · exact values: --format json",
        style="dim",
    )


def run_renderables(run: RunView, width: int) -> list[RenderableType]:
    """The header, findings and metric table of one run."""
    parts: list[RenderableType] = [_run_title(run), _run_facts(run)]
    if run.headline_config:
        parts.append(_config_line(run))
    if run.source_note:
        parts.append(Text(visible(run.source_note), style="dim"))
    parts.append(Text(""))
    parts.extend(_findings(run))
    if run.rows:
        parts.append(Text(""))
        parts.extend(_metric_table(run, width))
    return parts


def _run_title(run: RunView) -> Text:
    title = Text(run.label, style="bold")
    _pad(title, 2)
    title.append(run.state.upper(), style=_STATE_STYLES[run.state])
    return title


def _run_facts(run: RunView) -> Text:
    facts = Text(style="dim")
    facts.append(f"{run.kind} · ")
    if run.empty or run.last_step is None:
        facts.append("no scalar points")
    else:
        facts.append(f"{step_text(run)} · {plural(len(run.rows), 'metric')} · ")
        facts.append(f"last point {format_utc(run.last_point_wall_time)} ")
        facts.append(f"({format_staleness(run.staleness)})")
    return facts


def _config_line(run: RunView) -> Text:
    # Two spaces between pairs, none inside one: lines wrap between settings, never within one.
    pairs = [f"{visible(key)}={config_value(value)}" for key, value in run.headline_config.items()]
    return Text("config: " + "  ".join(pairs), style="dim")


def _findings(run: RunView) -> list[RenderableType]:
    if not run.findings:
        if run.empty:
            return [Text(empty_sentence(", ".join(visible(t) for t in run.texts)), style="yellow")]
        return [Text(calm_sentence(len(run.rows)), style="green")]
    counts = [
        f"{sum(1 for f in run.findings if f.level == level)} {level.label}"
        for level in (Level.CRITICAL, Level.WARN)
        if any(f.level == level for f in run.findings)
    ]
    if run.notes:
        counts.append(f"{len(run.notes)} {'note' if len(run.notes) == 1 else 'notes'}")
    over = sum(1 for f in run.findings if not f.active and not f.is_note)
    if over:
        counts.append(f"{over} over")
    grid = Table.grid(padding=(0, 1))
    grid.add_column(width=4, no_wrap=True)
    grid.add_column(ratio=1, overflow="fold")
    for finding in run.findings:
        badge = Text(NOTE_NAME, style="dim") if finding.is_note else level_text(finding.level)
        grid.add_row(badge, _finding_body(finding, run.display_name))
    return [Text(f"Findings ({', '.join(counts)})", style="bold"), grid]


def _finding_body(finding: Finding, run_name: str) -> Text:
    body = Text()
    if finding.title:
        body.append(visible(finding.title), style="bold")
        if not finding.active and not finding.is_note:
            # The episode is over (the metric recovered); the message says when.
            _append(body, " (over)", style="dim")
        _append(body, ": ")
    body.append(visible(display_message(finding.message, finding.tag, "", finding.run, run_name)))
    if finding.advice:
        body.append("\n")
        body.append(f"→ {visible(finding.advice)}", style="dim")
    return body


def _layout(rows: list[MetricView], width: int) -> _Layout:
    """Column widths: stats keep their width, the rest is shared by name and sparkline."""
    cells = [format_short(getattr(row.stats, stat)) for row in rows for stat in ("last", "min", "max")]
    stat_width = max([_STAT_WIDTH, *(len(c) for c in cells)])
    stats: tuple[str, ...] = ("last", "min", "max")
    fixed = 1 + len(stats) * (stat_width + 1) + 2 + 1 + _LEVEL_WIDTH
    if width - fixed < _FULL_STATS_MIN_AVAIL:
        stats = ("last",)
        fixed = 1 + (stat_width + 1) + 2 + 1 + _LEVEL_WIDTH
    available = width - fixed
    # At least as wide as the column's own title, or the header line would wrap.
    longest = max(len("metric"), *(Text(_name(row)).cell_len for row in rows))
    name = min(longest, max(_MIN_NAME, available // 2))
    name = min(name, available - _MIN_SPARK)
    return _Layout(name=name, spark=available - name, stats=stats, stat_width=stat_width)


def _name(row: MetricView) -> str:
    suffix = f" {NON_FINITE_GLYPH}{row.stats.non_finite}" if row.stats.non_finite else ""
    return visible(row.name) + suffix


def _metric_table(run: RunView, width: int) -> list[RenderableType]:
    layout = _layout(run.rows, width)
    lines: list[RenderableType] = [_header(layout)]
    for group, rows in run.groups:
        lines.append(Text(group, style="bold underline"))
        for row in rows:
            lines.extend(_metric_lines(row, layout))
    return lines


def _header(layout: _Layout) -> Text:
    header = Text(style="dim")
    header.append("metric".ljust(layout.name) + " " + "history".ljust(layout.spark))
    for stat in layout.stats:
        header.append(" " + stat.rjust(layout.stat_width))
    header.append("   " + "level")
    return header


def _metric_lines(row: MetricView, layout: _Layout) -> list[Text]:
    style = LEVEL_STYLES[row.level]
    name = Text(_name(row), style="" if row.level == Level.OK else style)
    if row.stats.non_finite:
        suffix = len(f" {NON_FINITE_GLYPH}{row.stats.non_finite}")
        name.stylize("red", len(name) - suffix)
    lines = []
    line = Text()
    if name.cell_len > layout.name:
        # A long name gets its own line (folded only if longer than the whole width).
        lines.append(name)
        _pad(line, layout.name)
    else:
        line.append_text(name)
        _pad(line, layout.name - name.cell_len)
    spark = sparkline_text(row.values, layout.spark, row.band)
    _pad(line, 1)
    line.append(spark, style=style)
    _pad(line, layout.spark - len(spark))
    for stat in layout.stats:
        value = getattr(row.stats, stat)
        cell = format_short(value)
        finite = value is not None and value == value and abs(value) != float("inf")
        _pad(line, 1 + layout.stat_width - len(cell))
        line.append(cell, style="" if finite or value is None else "red")
    _pad(line, 1)
    line.append(TREND_MARKS[row.stats.trend], style="dim")
    _pad(line, 1)
    line.append_text(level_text(row.level))
    lines.append(line)
    return lines


def _pad(line: Text, cells: int) -> None:
    """Append ``cells`` spaces as a segment of their own (see `_PAD`)."""
    if cells > 0:
        line.append(" " * cells, style=_PAD)


def _append(line: Text, text: str, style: str = "") -> None:
    """Append ``text`` with its leading and trailing spaces as `_pad` segments."""
    core = text.strip(" ")
    start = text.index(core) if core else len(text)
    _pad(line, start)
    if core:
        line.append(core, style=style)
    _pad(line, len(text) - start - len(core))


def snapshot_group(snapshot: Snapshot, width: int) -> Group:
    """All of `snapshot_renderables` as one Rich `Group`."""
    return Group(*snapshot_renderables(snapshot, width))
