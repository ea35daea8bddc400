"""One chart of the dashboard's grid: the detail screen's chart, smaller, in a card's border.

Its border says the metric and its last value; the border colour and subtitle its level, as a
card's do. A click opens the metric's detail screen.
"""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.geometry import Region

from rltop.ui.logic.levels import LEVEL_CLASSES
from rltop.ui.messages import OpenDetail
from rltop.ui.widgets import detail_chart
from rltop.ui.widgets.detail_chart import DetailChart
from rltop.view.text.marks import LEVEL_NAMES


class GridChart(DetailChart):
    """A bordered chart of one metric of the shown run."""

    TICKS = (4, 3)

    def __init__(self, tag: str) -> None:
        super().__init__(classes="grid-chart")
        self.tag = tag
        self._title: tuple[str, str, int] | None = None
        self._border_only = False

    def set_title(self, label: str, value: str, level: int) -> None:
        """The border's texts and the level's colour (a new title repaints the chart's lines: only
        when it changed)."""
        if (label, value, level) == self._title:
            return
        self._title = (label, value, level)
        self._border_only = detail_chart.REUSE_PICTURES  # the plot under the border stays as it is
        try:
            self.border_title = Text.assemble(label, "  ", (value, "bold"))
            self.border_subtitle = Text(LEVEL_NAMES[level]) if level > 0 else None
        finally:
            self._border_only = False
        for key, css in LEVEL_CLASSES.items():
            self.set_class(key == level, css)  # (a new level restyles, and repaints, the whole chart)

    def refresh(self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False):
        """Textual's refresh; a new title or subtitle repaints the border's top and bottom lines."""
        if self._border_only and not regions and repaint and not layout and not recompose:
            offset, outer = self.content_offset, self.outer_size
            regions = (
                Region(-offset.x, -offset.y, outer.width, 1),
                Region(-offset.x, outer.height - 1 - offset.y, outer.width, 1),
            )
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.post_message(OpenDetail(self.tag))

    def on_mouse_move(self, event: events.MouseMove) -> None:
        return  # no cursor on the grid's charts
