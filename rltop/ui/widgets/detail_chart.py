"""A plotext chart of one metric: the detail screen's, and (subclassed) each chart of the dashboard grid.

The widget draws a `ChartData` (the runs to overlay, the band along the series, the options) as a
`rltop.view.chart.data.Figure` for its size; colours come from the theme (component classes). The
picture is cached per data version, size and theme: nothing is rebuilt while nothing changes. A
cursor (the detail screen's) is a highlighted column over the cached picture, so moving it costs
no redraw. A click or the mouse moving over the plot is turned into an x value (`Pointed`), as
TensorBoard's hover readout follows the mouse.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.style import Style
from rich.text import Text
from textual import events
from textual.message import Message
from textual.widget import Widget

from rltop.health.bands import BandTrack
from rltop.model.series import Series
from rltop.ui.chart import RGB, Canvas, band_cells, render_figure
from rltop.view.chart.data import Figure, Overlay, build_figure
from rltop.view.chart.options import ChartOptions

OTHER_RUN_CLASSES = tuple(f"detail-chart--other-{i}" for i in range(1, 8))
"""Colours of the other runs overlaid: with this run's own, 8 runs are told apart."""
PALETTE_SLOTS = ("raw", "smooth", "warn", "crit", "axes", "band", "member",
                 *(f"other-{i}" for i in range(1, 8)))  # fmt: skip


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


class DetailChart(Widget):
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
        self._cache: tuple[tuple, Text] | None = None

    def show(self, data: ChartData) -> None:
        """Draw ``data`` (a repaint only when its version differs)."""
        if data.version != self.data.version:
            self.data = data
            self.refresh()

    def set_cursor(self, x: float | None) -> None:
        """Highlight the column of ``x`` (None: no cursor)."""
        if x != self.cursor_x:
            self.cursor_x = x
            self.refresh()

    def palette(self) -> dict[str, RGB]:
        """Colour slot -> RGB from the theme."""
        return {slot: self._rgb(f"detail-chart--{slot}") for slot in PALETTE_SLOTS}

    def _rgb(self, component: str) -> RGB:
        color = self.get_component_rich_style(component).color
        if color is None:
            return (128, 128, 128)
        triplet = color.get_truecolor()
        return (triplet.red, triplet.green, triplet.blue)

    def render(self) -> Text:
        """The chart as text (cached per data version, size and theme), with the cursor column."""
        width, height = self.content_size.width, self.content_size.height
        key = (self.data.version, width, height, self.app.theme, self.app.no_color)
        if self._cache is None or self._cache[0] != key:
            self._cache = (key, self._build(width, height))
        text = self._cache[1]
        if self.cursor_x is None or self.canvas is None:
            return text
        return self._with_cursor(text, self.canvas.column(self.cursor_x))

    def _build(self, width: int, height: int) -> Text:
        data = self.data
        self.figure, self.canvas = None, None
        if data.main is None or not len(data.main.series):
            return Text("no points yet", style=self.get_component_rich_style("detail-chart--axes"))
        columns = max(10, 2 * width)  # braille: two dots per cell
        figure = build_figure(
            data.main, data.others, data.options, columns, data.band, data.spans, data.members, self.TICKS
        )
        ansi, canvas = render_figure(figure, width, height, self.palette(), data.legend)
        self.figure, self.canvas = figure, canvas
        # NO_COLOR needs nothing here: Textual's monochrome filter applies to the whole screen.
        text = Text.from_ansi(ansi, no_wrap=True)
        if canvas is None or not figure.areas:
            return text
        band = Style(bgcolor=self.get_component_rich_style("detail-chart--band").color)
        lines = text.split("\n", allow_blank=True)
        for row, start, end in band_cells(figure, canvas):
            if row < len(lines):
                lines[row].stylize(band, start, end)
        return self._joined(lines)

    @staticmethod
    def _joined(lines: list[Text]) -> Text:
        joined = Text("\n").join(lines)
        joined.no_wrap = True
        return joined

    def _with_cursor(self, text: Text, column: int) -> Text:
        canvas = self.canvas
        assert canvas is not None
        style = self.get_component_rich_style("detail-chart--cursor") or Style(reverse=True)
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
