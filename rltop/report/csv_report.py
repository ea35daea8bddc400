"""The snapshot as CSV: one row per run × tag, for spreadsheets and ``pandas.read_csv``.

Values are exact, as in ``rltop export`` (shortest round-trip text; ``nan``/``inf``/``-inf``;
empty when there is no finite value). Names go through `visible` as in ``rltop export`` (a control
character becomes ``\x1b``, to a terminal, a file or a pipe alike); with ``raw`` they are the exact
strings. Either way `csv_field` quotes a name that holds a comma, a quote or a line break. A run
without scalars still gets one row, with an empty tag and a count of 0, so every run appears.
"""

from __future__ import annotations

from rltop.model.values import format_value
from rltop.report.export import csv_field
from rltop.report.snapshot import Snapshot
from rltop.view.metric_view import MetricView
from rltop.view.text.safe import visible

CSV_COLUMNS = (
    "run", "kind", "run_level", "tag", "group", "count", "first_step", "last_step", "last", "min", "max",
    "mean_last_10pct", "trend", "non_finite", "level",
)  # fmt: skip


def _text(text: str, raw: bool = False) -> str:
    # csv_field("") is '""' (the csv module's marker for a lone empty field): an empty cell is enough.
    return csv_field(text if raw else visible(text)) if text else ""


def _number(value: float | None, single_precision: bool = False) -> str:
    return "" if value is None else format_value(value, single_precision)


def _step(step: int | None) -> str:
    return "" if step is None else str(step)


def _row(row: MetricView, raw: bool) -> list[str]:
    stats = row.stats
    single = row.single_precision
    return [
        _text(row.tag, raw), _text(row.group), str(stats.count),
        _step(stats.first_step), _step(stats.last_step),
        _number(stats.last, single), _number(stats.min, single), _number(stats.max, single),
        _number(stats.mean_last_10pct, single), stats.trend, str(stats.non_finite), row.level.label,
    ]  # fmt: skip


def render_csv(snapshot: Snapshot, raw: bool = False) -> str:
    """Header plus one line per run × tag (ends with a newline); ``raw``: names exactly as they are."""
    lines = [",".join(CSV_COLUMNS)]
    for run in snapshot.runs:
        head = [_text(run.name, raw), _text(run.kind), run.level.label]
        rows = [_row(row, raw) for row in run.rows] or [["", "", "0", "", "", "", "", "", "", "", "0", "ok"]]
        for fields in rows:
            lines.append(",".join(head + fields))
    return "\n".join(lines) + "\n"
