"""``rltop export``/``rltop tail`` lines: every point as CSV or JSON Lines, values exact.

Columns/keys: ``run,tag,step,wall_time,value,session``. ``session`` is the session folder a point
was read from (``Dec01_07-56-27_vm``: a resumed run has one per ``trainer.train()`` call). Values
are the shortest text that reads back to
the stored number (`rltop.model.values`). In JSON Lines non-finite values are the strings
``"nan"``, ``"inf"`` and ``"-inf"`` (JSON has no NaN; strings keep every line valid for ``jq``).
Names go through `visible` (``\x1b`` for a control character) unless ``raw``: a terminal shows
the lines sooner or later (``| jq -r``, ``| less``), and control characters are never data.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator

import numpy as np

from rltop.model.run import Store
from rltop.model.series import Points, Series
from rltop.model.values import format_steps, format_values
from rltop.report.csv_bytes import series_csv
from rltop.view.text.safe import visible

CSV_HEADER = "run,tag,step,wall_time,value,session"
EXPORT_FORMATS = ("csv", "jsonl")
_NON_FINITE = {"nan", "inf", "-inf"}


def csv_field(text: str) -> str:
    """One CSV field, quoted only when it must be (commas, quotes, line breaks)."""
    buffer = io.StringIO()
    # The csv module quotes a field only for characters of its line terminator (and delimiter and
    # quote): "\r\n" makes it quote both kinds of line break.
    csv.writer(buffer, lineterminator="\r\n").writerow([text])
    return buffer.getvalue()[:-2]


def format_points(
    run: str,
    tag: str,
    points: Points,
    single: bool,
    fmt: str,
    raw: bool = False,
    sessions: list[str] | str = "",
) -> Iterator[str]:
    """Lines (without newline) for some points of one series, in the given order.

    ``sessions``: the session of each point, or one session for all of them. Control, format and
    bidi characters in the names (a tag named ``\x1b]0;...`` would retitle the terminal that shows
    them) become escapes such as ``\x1b``; ``raw`` keeps the exact names (JSON still escapes them
    its own way, ``\u001b``).
    """
    if not raw:
        run, tag = visible(run), visible(tag)
        sessions = visible(sessions) if isinstance(sessions, str) else [visible(s) for s in sessions]
    steps = format_steps(points.steps)
    walls = format_values(points.wall_times, single_precision=False)
    values = format_values(points.values, single_precision=single)
    labels = [sessions] * len(steps) if isinstance(sessions, str) else sessions
    if fmt == "csv":
        prefix = f"{csv_field(run)},{csv_field(tag)},"
        fields = {label: csv_field(label) for label in set(labels)}
        for step, wall, value, label in zip(steps, walls, values, labels):
            yield f"{prefix}{step},{wall},{value},{fields[label]}"
        return
    head = f'{{"run": {json.dumps(run)}, "tag": {json.dumps(tag)}, "step": '
    quoted = {label: json.dumps(label) for label in set(labels)}
    for step, wall, value, label in zip(steps, walls, values, labels):
        shown = f'"{value}"' if value in _NON_FINITE else value
        wall = f'"{wall}"' if wall in _NON_FINITE else wall  # a broken clock's NaN: JSON has no NaN
        yield f'{head}{step}, "wall_time": {wall}, "value": {shown}, "session": {quoted[label]}}}'


def sorted_points(series: Series) -> Points:
    """All points of a series sorted by step (stable: equal steps keep their arrival order)."""
    points = series.points()
    if points.steps.size < 2 or bool(np.all(points.steps[1:] >= points.steps[:-1])):
        return points
    order = np.argsort(points.steps, kind="stable")
    single = points.single_precision
    return Points(points.steps[order], points.wall_times[order], points.values[order], single)


def export_lines(store: Store, fmt: str, raw: bool = False) -> Iterable[str]:
    """Every point of every run, sorted by run, tag and step; CSV starts with its header."""
    if fmt == "csv":
        yield CSV_HEADER
    for name in store.sorted_names():
        run = store.runs[name]
        for tag in sorted(run.series):
            series = run.series[tag]
            points = sorted_points(series)
            yield from format_points(
                name, tag, points, series.single_precision, fmt, raw, run.session_labels(points.steps)
            )


def export_csv_chunks(store: Store, raw: bool = False) -> Iterator[bytes]:
    """The CSV export as blocks of UTF-8 bytes: the header, then one block per series.

    Byte for byte the lines of `export_lines` (``"\n"`` after each), built column-wise: a series
    from one session is formatted at once (`rltop.report.csv_bytes`); one whose points come from
    several sessions goes line by line.
    """
    yield (CSV_HEADER + "\n").encode()
    for name in store.sorted_names():
        run = store.runs[name]
        for tag in sorted(run.series):
            series = run.series[tag]
            points = sorted_points(series)
            label = run.single_session(points.steps)
            if label is None:
                labels = run.session_labels(points.steps)
                lines = format_points(name, tag, points, series.single_precision, "csv", raw, labels)
                yield "".join(line + "\n" for line in lines).encode()
                continue
            shown_run, shown_tag, shown_label = (
                (name, tag, label) if raw else (visible(name), visible(tag), visible(label))
            )
            prefix = f"{csv_field(shown_run)},{csv_field(shown_tag)},".encode()
            suffix = f",{csv_field(shown_label)}".encode()
            yield series_csv(
                prefix, points.steps, points.wall_times, points.values, series.single_precision, suffix
            )
