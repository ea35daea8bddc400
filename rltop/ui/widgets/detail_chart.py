"""A plotext chart of one metric: the detail screen's, and (subclassed) each chart of the dashboard grid.

The widget draws a `ChartData` (the runs to overlay, the band along the series, the options) as a
`rltop.view.chart.data.Figure` for its size; colours come from the theme (component classes). The
picture is cached per data version, size and theme: nothing is rebuilt while nothing changes. A
cursor (the detail screen's) is a highlighted column over the cached picture, so moving it costs
no redraw. A click or the mouse moving over the plot is turned into an x value (`Pointed`), as
TensorBoard's hover readout follows the mouse.

New data whose picture is the picture on screen (a point of a long series that moves no dot) draws
nothing, and the lines of a picture on screen are kept: a new title on the border, or a restyle,
repaints the chart without turning its text into lines again (`REUSE_PICTURES`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from rich.style import Style
from rich.text import Text
from textual import events
from textual.geometry import Region
from textual.message import Message
from textual.strip import Strip
from textual.visual import Visual, visualize
from textual.widget import Widget

from rltop.health.bands import BandTrack
from rltop.model.series import Series
from rltop.ui.ansi_text import joined
from rltop.ui.chart import RGB, Canvas, band_cells, draw_figure
from rltop.ui.kept_styles import KeptComponentStyles
from rltop.ui.line_strips import LineStrips, draws_run_by_run, text_runs
from rltop.view.chart.data import Figure, FigureMemo, Overlay, build_figure
from rltop.view.chart.options import ChartOptions

OTHER_RUN_CLASSES = tuple(f"detail-chart--other-{i}" for i in range(1, 8))
"""Colours of the other runs overlaid: with this run's own, 8 runs are told apart."""
PALETTE_SLOTS = ("raw", "smooth", "warn", "crit", "axes", "band", "member",
                 *(f"other-{i}" for i in range(1, 8)))  # fmt: skip
REUSE_PICTURES = os.environ.get("RLTOP_PLAIN_CHARTS", "") != "1"
"""Goal served: the dashboard's CPU while a run logs (issue 28), its grid charts redrawn with every
new point. On: new data whose chart text is the text on screen keeps the picture (no repaint); a
new picture repaints only the rows that changed, and makes strips of those rows only (directly, as
Textual makes them, for rows of plain colour runs); a new title repaints the border only; the
theme's colours are looked up once per theme. Off (``RLTOP_PLAIN_CHARTS=1``, read at import): every
new data version or title repaints the whole chart, and every repaint converts the whole picture
(``tests/app/test_app_chart_redraw.py`` compares the frames both ways)."""


class Picture:
    """A chart's picture: its lines (None for a message such as "no points yet"), and the text they
    make, joined when first asked for (Textual's conversion of the whole picture, the cursor)."""

    __slots__ = ("lines", "_text")

    def __init__(self, lines: list[Text] | None, text: Text | None = None) -> None:
        self.lines, self._text = lines, text

    @property
    def text(self) -> Text:
        """The picture as one Text."""
        if self._text is None:
            self._text = joined(self.lines or [])
        return self._text


@dataclass
class ChartData:
    """Everything a chart draws; a new object (or a new version) means redraw."""

    main: Overlay | None = None
    others: list[Overlay] = field(default_factory=list)
    """The other runs' same tag, each with its colour slot."""
    members: list[Overlay] | None = None
    """The seed group drawn as mean and band (the shown run among them), or None."""
    band: BandTrack | None = None
    spans: list[tuple[int, int, str]] = field(default_factory=list)
    options: ChartOptions = field(default_factory=ChartOptions)
    legend: bool = False
    version: tuple = ()

    @property
    def series(self) -> Series | None:
        """The shown run's series."""
        return self.main.series if self.main is not None else None


class DetailChart(KeptComponentStyles, Widget):
    """Renders `ChartData` for the widget's size; rebuilt only when data, size or theme change."""

    COMPONENT_CLASSES = {
        "detail-chart--raw", "detail-chart--smooth", "detail-chart--warn", "detail-chart--crit",
        "detail-chart--axes", "detail-chart--band", "detail-chart--member", "detail-chart--cursor",
        *OTHER_RUN_CLASSES,
    }  # fmt: skip
    TICKS = (6, 5)
    """About how many (x, y) ticks per axis; the grid's small charts ask for fewer."""

    class Pointed(Message):
        """The mouse clicked or moved over the plot at ``x``."""

        def __init__(self, x: float) -> None:
            super().__init__()
            self.x = x

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.data = ChartData()
        self.cursor_x: float | None = None
        self.figure: Figure | None = None
        self.canvas: Canvas | None = None
        self._cache: tuple[tuple, Picture] | None = None
        self._drawn: tuple[object, tuple, Picture] | None = None
        """(the drawing's key, band cells, the picture made of them): a new build with the same
        drawing and band is the same picture."""
        self._strips: tuple[Picture, tuple, list[Strip]] | None = None
        """(picture, what else the strips depend on, the strips Textual made of it)."""
        self._kept_rows: dict = {}
        """The last drawing's lines by their cells: a new point redraws a few rows of a long series."""
        self._memo = FigureMemo()
        """The shown run's smoothed curves, extended at each new point of a live run."""
        self._line_strips = LineStrips(self)
        """A changed row mostly redraws the same colours at the same places (`REUSE_PICTURES`)."""

    def show(self, data: ChartData) -> None:
        """Draw ``data`` (a repaint only when its version differs, and only when its picture does)."""
        if data.version == self.data.version:
            return
        self.data = data
        if not REUSE_PICTURES or self._cache is None or not self.size.area:
            self.refresh()  # not drawn yet: drawn when it is laid out
            return
        before = (self._cache[1], self._cursor_column())
        picture = self._picture()
        if picture is before[0] and self._cursor_column() == before[1]:
            return
        rows = self._changed_rows(picture, before[0]) if self._cursor_column() == before[1] else None
        if rows is None:
            self.refresh()
        elif rows:
            width = self.size.width
            self.refresh(*(Region(0, row, width, 1) for row in rows))

    def _changed_rows(self, picture: Picture, before: Picture) -> list[int] | None:
        """The rows of ``picture`` that differ from ``before`` (None: not known, all of them)."""
        lines, old = picture.lines, before.lines
        if lines is None or old is None or len(lines) != len(old):
            return None
        return [row for row, (line, was) in enumerate(zip(lines, old)) if line is not was and line != was]

    def set_cursor(self, x: float | None) -> None:
        """Highlight the column of ``x`` (None: no cursor)."""
        if x != self.cursor_x:
            self.cursor_x = x
            self.refresh()

    def palette(self) -> dict[str, RGB]:
        """Colour slot -> RGB from the theme."""
        return {slot: self._rgb(f"detail-chart--{slot}") for slot in PALETTE_SLOTS}

    def component_style(self, component: str) -> Style:
        """A component's Rich style: kept until the chart is restyled (`KeptComponentStyles`; 14 of
        them at every redraw), or Textual's own lookup with the chart shortcuts off."""
        if REUSE_PICTURES:
            return self.get_component_rich_style(component)
        return Widget.get_component_rich_style(self, component)

    def notify_style_update(self) -> None:
        self._line_strips.forget()
        super().notify_style_update()

    def _rgb(self, component: str) -> RGB:
        color = self.component_style(component).color
        if color is None:
            return (128, 128, 128)
        triplet = color.get_truecolor()
        return (triplet.red, triplet.green, triplet.blue)

    def render(self) -> Text:
        """The chart as text (cached per data version, size and theme), with the cursor column."""
        text = self._picture().text
        column = self._cursor_column()
        return text if column is None else self._with_cursor(text, column)

    def render_line(self, y: int) -> Strip:
        """Line ``y`` of the content: Textual's own strips, kept while the picture, the cursor
        column, the size and the style are the ones they were made for; a new picture makes strips
        of the lines that differ from the last one's only."""
        if not REUSE_PICTURES:
            return super().render_line(y)
        picture = self._picture()
        frame = (self._cursor_column(), self.size, self.visual_style, self.styles.content_align,
                 self.text_selection)  # fmt: skip
        kept = self._strips
        if kept is None or kept[0] is not picture or kept[1] != frame:
            kept = self._strips = (picture, frame, self._made_strips(picture, frame, kept))
        strips = kept[2]
        return strips[y] if y < len(strips) else Strip.blank(self.size.width, self.visual_style.rich_style)

    def _made_strips(
        self, picture: Picture, frame: tuple, kept: tuple[Picture, tuple, list[Strip]] | None
    ) -> list[Strip]:
        """What `Widget.render_line` draws of ``picture``: Textual's conversion of the whole content,
        or, for a new picture in the same frame without a cursor, of the lines that changed only
        (each line is converted on its own, at its own row: the others are left blank for it)."""
        width = self.size.width
        column = frame[0]
        lines, before = picture.lines, None if kept is None else kept[0].lines
        reuse = (
            kept is not None and kept[1] == frame and column is None and lines is not None
            and before is not None and len(lines) == len(before)
            and all(line.cell_len <= width for line in lines)
        )  # fmt: skip
        if not reuse:
            return self._converted(
                picture.text if column is None else self._with_cursor(picture.text, column)
            )
        strips = list(kept[2])
        changed = [y for y in self._changed_rows(picture, kept[0]) or [] if y < len(strips)]
        direct = draws_run_by_run(self)
        rest = []
        for y in changed:
            strip = self._line_strip(lines[y], y, width) if direct else None
            if strip is None:
                rest.append(y)
            else:
                strips[y] = strip
        if rest:
            masked = joined([line if y in rest else Text() for y, line in enumerate(lines)])
            made = self._converted(masked)
            if len(made) != len(strips):
                return self._converted(picture.text)
            for y in rest:
                strips[y] = made[y]
        return strips

    def _converted(self, text: Text) -> list[Strip]:
        """Textual's strips of ``text`` as the widget's content (what `Widget.render_line` draws)."""
        width, height = self.size
        return Visual.to_strips(self, visualize(self, text, markup=self._render_markup), width, height,
                                self.visual_style)  # fmt: skip

    def _line_strip(self, line: Text, y: int, width: int) -> Strip | None:
        """Textual's strip of one line of a picture at row ``y``, made as Textual makes it
        (`LineStrips`), for a line of colour runs exactly as wide as the chart; None for any other."""
        runs = text_runs(line) if line.cell_len == width else None
        return None if runs is None else self._line_strips.strip(runs, y)

    def _picture(self) -> Picture:
        """The picture without the cursor, for the current data, size and theme."""
        width, height = self.content_size.width, self.content_size.height
        key = (self.data.version, width, height, self.app.theme, self.app.no_color)
        if self._cache is None or self._cache[0] != key:
            self._cache = (key, self._build(width, height))
        return self._cache[1]

    def _cursor_column(self) -> int | None:
        if self.cursor_x is None or self.canvas is None:
            return None
        return self.canvas.column(self.cursor_x)

    def _build(self, width: int, height: int) -> Picture:
        data = self.data
        self.figure, self.canvas = None, None
        if data.main is None or not len(data.main.series):
            return Picture(None, Text("no points yet", style=self.component_style("detail-chart--axes")))
        columns = max(10, 2 * width)  # braille: two dots per cell
        figure = build_figure(data.main, data.others, data.options, columns, data.band, data.spans,
                              data.members, self.TICKS, self._memo)  # fmt: skip
        drawing = draw_figure(figure, width, height, self.palette(), data.legend, self._kept_rows)
        canvas = drawing.canvas
        self.figure, self.canvas = figure, canvas
        cells = tuple(band_cells(figure, canvas)) if canvas is not None and figure.areas else ()
        band_color = self.component_style("detail-chart--band").color if cells else None
        drawn, made_of = self._drawn, (drawing.key, (cells, band_color))
        if REUSE_PICTURES and drawn is not None and drawn[:2] == made_of:
            return drawn[2]  # the same picture: the one on screen stays
        # NO_COLOR needs nothing here: Textual's monochrome filter applies to the whole screen.
        lines = drawing.lines
        if cells:
            band = Style(bgcolor=band_color)
            lines = [line.copy() for line in lines]  # (the drawing's lines are kept for the next one)
            for row, start, end in cells:
                if row < len(lines):
                    lines[row].stylize(band, start, end)
        picture = Picture(lines)
        self._drawn = (*made_of, picture)
        return picture

    @staticmethod
    def _joined(lines: list[Text]) -> Text:
        joined = Text("\n").join(lines)
        joined.no_wrap = True
        return joined

    def _with_cursor(self, text: Text, column: int) -> Text:
        canvas = self.canvas
        assert canvas is not None
        style = self.component_style("detail-chart--cursor") or Style(reverse=True)
        lines = text.split("\n", allow_blank=True)
        for row in range(canvas.top, min(canvas.bottom, len(lines) - 1) + 1):
            lines[row].stylize(style, column, column + 1)
        return self._joined(lines)

    def _plot_x(self, event: events.MouseEvent) -> float | None:
        """The x value under the mouse, or None outside the plot area."""
        offset = event.get_content_offset(self)
        canvas = self.canvas
        if offset is None or canvas is None or not canvas.top <= offset.y <= canvas.bottom:
            return None
        return canvas.x_at(offset.x)

    def on_click(self, event: events.Click) -> None:
        self._point(event)

    def on_mouse_move(self, event: events.MouseMove) -> None:
        self._point(event)

    def _point(self, event: events.MouseEvent) -> None:
        x = self._plot_x(event)
        if x is not None:
            self.post_message(self.Pointed(x))
