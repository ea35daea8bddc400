"""The snapshot as GitHub-flavoured Markdown: a heading per run, findings and metrics as GFM tables.

Meant to be pasted into issues, pull requests and chat. Names are code spans and prose is
backslash-escaped (`rltop.view.text.safe`), so a tag called ``[x](y)|<b>`` renders literally and
never breaks a table. Sparklines are `MARKDOWN_SPARK_WIDTH` glyphs wide.
"""

from __future__ import annotations

from rltop.health.findings import Finding, Level
from rltop.model.names import display_message
from rltop.report.compare_report import compare_markdown
from rltop.report.group_report import groups_markdown
from rltop.report.snapshot import Snapshot
from rltop.view.chart.spark import sparkline_text
from rltop.view.config import config_value
from rltop.view.metric_view import MetricView
from rltop.view.run_view import RunView
from rltop.view.text.humanize import format_staleness, format_utc, plural
from rltop.view.text.marks import STATE_MARKS, TREND_MARKS
from rltop.view.text.numbers import format_short
from rltop.view.text.safe import markdown_code, markdown_text
from rltop.view.text.sentences import calm_sentence, empty_sentence, step_text

MARKDOWN_SPARK_WIDTH = 24


def _level_mark(level: Level) -> str:
    return STATE_MARKS[Level(level).label]


def _finding_mark(finding: Finding) -> str:
    """The level of a finding, or ``ℹ️ note`` for information (never an alarm)."""
    return "ℹ️ note" if finding.is_note else _level_mark(finding.level)


def render_markdown(snapshot: Snapshot) -> str:
    """The whole snapshot as one Markdown document (ends with a newline)."""
    counts = ", ".join(f"{count} {state}" for state, count in snapshot.state_counts())
    lines = [
        "# rltop snapshot",
        "",
        f"{plural(len(snapshot.runs), 'run')}{' (' + counts + ')' if counts else ''} · "
        f"generated {format_utc(snapshot.generated_at)}",
    ]
    if snapshot.comparison is not None:
        lines.extend(["", *compare_markdown(snapshot.comparison)])
    if snapshot.groups:
        lines.extend(["", *groups_markdown(snapshot)])
    for run in snapshot.runs:
        lines.append("")
        lines.extend(run_markdown(run))
    return "\n".join(lines) + "\n"


def run_markdown(run: RunView) -> list[str]:
    """Heading, facts, findings table and one metric table per group for one run."""
    mark = STATE_MARKS[run.state]
    lines = [f"## {markdown_code(run.display_name, in_table=False)} · {mark}", ""]
    if run.empty or run.last_step is None:
        lines.append(f"{run.kind} · no scalar points")
    else:
        lines.append(
            f"{run.kind} · {step_text(run)} · {plural(len(run.rows), 'metric')} · last point "
            f"{format_utc(run.last_point_wall_time)} ({format_staleness(run.staleness)})"
        )
    if run.headline_config:
        pairs = " ".join(
            markdown_code(f"{key}={config_value(value)}", in_table=False)
            for key, value in run.headline_config.items()
        )
        lines.extend(["", f"Config: {pairs}"])
    if run.source_note:
        lines.extend(["", f"Source: {markdown_text(run.source_note)}"])
    lines.append("")
    lines.extend(_findings(run))
    for group, rows in run.groups:
        lines.extend(["", f"**{markdown_text(group)}**", ""])
        lines.extend(_metric_table(rows))
    return lines


def _findings(run: RunView) -> list[str]:
    if not run.findings:
        if run.empty:
            return [empty_sentence(", ".join(markdown_code(t, in_table=False) for t in run.texts))]
        return [calm_sentence(len(run.rows))]
    lines = ["| level | finding | metric | steps | details | advice |", "|---|---|---|---|---|---|"]
    for finding in run.findings:
        over = "" if finding.active or finding.is_note else " (over)"
        title = markdown_text(finding.title or finding.rule) + over
        tag = markdown_code(finding.tag) if finding.tag else ""
        message = display_message(finding.message, finding.tag, "", finding.run, run.display_name)
        lines.append(
            f"| {_finding_mark(finding)} | {title} | {tag} | {_steps(finding)} "
            f"| {markdown_text(message)} | {markdown_text(finding.advice)} |"
        )
    return lines


def _steps(finding: Finding) -> str:
    """``1–16`` for an episode, ``150`` for a single step, empty when unknown."""
    first = finding.step if finding.first_step is None else finding.first_step
    last = finding.step if finding.last_step is None else finding.last_step
    if first is None or last is None:
        return ""
    return str(first) if first == last else f"{first}–{last}"


def _metric_table(rows: list[MetricView]) -> list[str]:
    lines = ["| metric | history | last | min | max | trend | level |", "|---|---|--:|--:|--:|:-:|---|"]
    for row in rows:
        stats = row.stats
        spark = sparkline_text(row.values, MARKDOWN_SPARK_WIDTH, row.band)
        name = markdown_code(row.name)
        if stats.non_finite:
            name += f" ({stats.non_finite} NaN/Inf)"
        lines.append(
            f"| {name} | {spark} | {format_short(stats.last)} | {format_short(stats.min)} "
            f"| {format_short(stats.max)} | {TREND_MARKS[stats.trend]} | {_level_mark(row.level)} |"
        )
    return lines
