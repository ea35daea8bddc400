"""The plotext chart of the detail screen; colours come from the theme (component classes)."""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.text import Text
from textual.widget import Widget

from rltop.model.series import Series
from rltop.ui.chart import RGB, ChartSpec, band_lines, render_chart, series_lines, time_ticks
from rltop.view.safe_text import visible
from rltop.view.text_fit import fit_path

OTHER_RUN_CLASSES = tuple(f"detail-chart--other-{i}" for i in range(1, 8))
"""Colours of the other runs overlaid: with this run's own, 8 runs are told apart."""
LEGEND_WIDTH = 28
"""Longest run name in the chart's legend (longer ones are shortened, leading parts first)."""


@dataclass
class ChartData:
    """Everything the chart draws; a new object (or a new version) means redraw."""

    series: Series | None = None
    others: list[tuple[str, Series]] = field(default_factory=list)
    """(display name, series) of the other runs' same tag."""
    band: tuple[float | None, float | None, float | None, float | None] = (None, None, None, None)
    weight: float = 0.6
    x_mode: str = "step"
    run_label: str = ""
    """This run's display name (the legend uses the names of the header and the overview)."""
    version: tuple = ()


class DetailChart(Widget):
    """Renders `ChartData` for the widget's size; rebuilt only when data, size or theme change."""

    COMPONENT_CLASSES = {
        "detail-chart--raw",
        "detail-chart--smooth",
        "detail-chart--warn",
        "detail-chart--crit",
        "detail-chart--axes",
        *OTHER_RUN_CLASSES,
    }

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.data = ChartData()
        self._cache: tuple[tuple, Text] | None = None

    def show(self, data: ChartData) -> None:
        """Draw ``data`` (a repaint only when its version differs)."""
        if data.version != self.data.version:
            self.data = data
            self.refresh()

    def _rgb(self, component: str) -> RGB:
        color = self.get_component_rich_style(component).color
        if color is None:
            return (128, 128, 128)
        triplet = color.get_truecolor()
        return (triplet.red, triplet.green, triplet.blue)

    def render(self) -> Text:
        """The chart as text (cached per data version, size and theme)."""
        width, height = self.content_size.width, self.content_size.height
        data = self.data
        key = (data.version, width, height, self.app.theme, self.app.no_color)
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        text = self._build(width, height)
        self._cache = (key, text)
        return text

    def _build(self, width: int, height: int) -> Text:
        data = self.data
        if data.series is None or not len(data.series):
            return Text("no points yet", style=self.get_component_rich_style("detail-chart--axes"))
        columns = max(10, 2 * width)  # braille: two dots per cell
        lines = []
        for index, (name, series) in enumerate(data.others):
            color = self._rgb(OTHER_RUN_CLASSES[index % len(OTHER_RUN_CLASSES)])
            label = fit_path(visible(name), LEGEND_WIDTH)
            lines += series_lines(series, data.weight, data.x_mode, columns, None, color, label)
        own_label = fit_path(visible(data.run_label), LEGEND_WIDTH) if data.others else None
        own = series_lines(data.series, data.weight, data.x_mode, columns, self._rgb("detail-chart--raw"),
                           self._rgb("detail-chart--smooth"), own_label)
        lines = [*own[:-1], *lines, own[-1]]  # raw below everything, this run's curve on top
        spec = ChartSpec(lines=lines, x_mode=data.x_mode)
        warn, crit = self._rgb("detail-chart--warn"), self._rgb("detail-chart--crit")
        spec.hlines = band_lines(data.band, lines, warn, crit)
        spec.x_ticks = time_ticks(lines, data.x_mode)
        ansi = render_chart(spec, width, height, self._rgb("detail-chart--axes"), legend=bool(data.others))
        # NO_COLOR needs nothing here: Textual's monochrome filter applies to the whole screen.
        return Text.from_ansi(ansi, no_wrap=True)

