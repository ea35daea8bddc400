"""Turn a `Snapshot` into the text of one output format.

Text, SVG and HTML share the Rich renderables of `text_view`: text is printed to an in-memory
console (coloured or not), SVG and HTML are Rich's recorded-console exports of exactly that view,
with the charts of `html_charts` (above it in HTML, below it in SVG).
Markdown, JSON and CSV have their own modules. Every format is rendered to a string first, so a
failure never leaves half a report in the output file.
"""

from __future__ import annotations

import io

from rich.console import Console

from rltop.report.csv_report import render_csv
from rltop.report.formats import DEFAULT_WIDTH, MIN_WIDTH, SNAPSHOT_FORMATS
from rltop.report.html_charts import html_page_template, svg_report
from rltop.report.json_report import render_json
from rltop.report.markdown import render_markdown
from rltop.report.snapshot import Snapshot
from rltop.report.text_view import snapshot_group

EXPORT_TITLE = "rltop snapshot"


def _console(width: int, color_system: str | None, record: bool = False) -> Console:
    """A console that writes to memory at exactly ``width`` columns.

    ``color_system`` None means plain text (no escape code at all); "auto" picks 16, 256 or true
    colours from TERM/COLORTERM. Whether to colour was decided by the caller (tty, NO_COLOR,
    --color), so NO_COLOR, COLUMNS and FORCE_COLOR are not consulted again here.
    """
    return Console(
        file=io.StringIO(),
        width=max(width, MIN_WIDTH),
        force_terminal=color_system is not None,
        color_system=color_system,  # type: ignore[arg-type]
        no_color=False,
        record=record,
        # Everything printed is a Text built by rltop: no markup, emoji codes or highlighting of
        # numbers may restyle strings that came from a log.
        markup=False,
        emoji=False,
        highlight=False,
        legacy_windows=False,
        soft_wrap=False,
    )


def render_text(snapshot: Snapshot, width: int = DEFAULT_WIDTH, color: bool = False) -> str:
    """The text view; ANSI colour codes only when ``color``."""
    console = _console(width, "auto" if color else None)
    console.print(snapshot_group(snapshot, console.width))
    text: str = console.file.getvalue()  # type: ignore[attr-defined]
    if color:
        return text
    # Rich keeps the space before a wrap point and pads grid cells: plain text needs neither.
    return "\n".join(line.rstrip() for line in text.split("\n"))


def render_export(snapshot: Snapshot, fmt: str, width: int = DEFAULT_WIDTH) -> str:
    """A standalone SVG image or HTML page (``fmt`` is "svg" or "html"): the charts of the key
    metrics and of every metric with a finding (`rltop.report.html_charts`), and the text view."""
    # Truecolor: the colours are written into the file, whatever terminal this runs in.
    console = _console(width, "truecolor", record=True)
    console.print(snapshot_group(snapshot, console.width))
    if fmt == "svg":
        return svg_report(snapshot, console.export_svg(title=EXPORT_TITLE))
    return console.export_html(inline_styles=True, code_format=html_page_template(snapshot))


def render(
    snapshot: Snapshot,
    fmt: str = "text",
    width: int = DEFAULT_WIDTH,
    color: bool = False,
    fail_on: str = "critical",
    raw: bool = False,
) -> str:
    """The snapshot in one of `SNAPSHOT_FORMATS` (``color`` and ``width`` matter to text, SVG and HTML).

    ``raw``: CSV keeps names exactly (by default their control characters are escaped).
    """
    if fmt == "text":
        return render_text(snapshot, width, color)
    if fmt in ("svg", "html"):
        return render_export(snapshot, fmt, width)
    if fmt == "markdown":
        return render_markdown(snapshot)
    if fmt == "json":
        return render_json(snapshot, fail_on)
    if fmt == "csv":
        return render_csv(snapshot, raw)
    raise ValueError(f"unknown format {fmt!r} (choose from {', '.join(SNAPSHOT_FORMATS)})")
