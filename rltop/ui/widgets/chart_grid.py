"""The chart grid above the cards on large terminals: the shown run's key values as real charts.

The dashboard decides whether there is a grid and what it holds (`rltop.ui.logic.grid_layout`); this
widget lays out one `GridChart` per metric in equal columns and rows, rebuilding its charts only
when the metrics change and redrawing a chart only when its data does. While a run is training,
new points redraw the charts at most every `REDRAW_EVERY` seconds (a plotext chart of a long
series costs 15–40 ms; the cards and alerts keep their four repaints a second).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.timer import Timer
from textual.widget import Widget

if TYPE_CHECKING:  # the charts draw with numpy and plotext; the dashboard paints before they load
    from rltop.ui.widgets.detail_chart import ChartData
    from rltop.ui.widgets.grid_chart import GridChart


REDRAW_EVERY = 2.0
"""Seconds between two redraws of the charts caused by new points."""


@dataclass
class GridPiece:
    """What one chart of the grid shows."""

    tag: str
    label: str
    value: str
    level: int
    data: ChartData


class ChartGrid(Widget):
    """Charts in ``columns`` x ``rows`` cells of ``row_height`` lines each."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.tags: list[str] = []
        self.shape = (0, 0, 0)
        self._drawn_at = float("-inf")
        self._pending: list[GridPiece] | None = None
        self._timer: Timer | None = None

    @property
    def pending(self) -> bool:
        """New data waits for the next redraw."""
        return self._pending is not None

    @property
    def charts(self) -> list[GridChart]:
        """The charts, in grid order."""
        from rltop.ui.widgets.grid_chart import GridChart

        return list(self.query_children(GridChart))

    async def show(self, pieces: list[GridPiece], shape: tuple[int, int, int]) -> None:
        """Show these charts in a grid of ``shape`` (columns, rows, row height)."""
        from rltop.ui.widgets.grid_chart import GridChart

        tags = [piece.tag for piece in pieces]
        if tags == self.tags and shape == self.shape:
            charts = self.charts
            if all(chart.data.version == piece.data.version for chart, piece in zip(charts, pieces)):
                self._pending = None  # nothing new (the header's clock ticked)
                return
            wait = self._drawn_at + REDRAW_EVERY - time.monotonic()
            if wait > 0:
                for chart, piece in zip(charts, pieces):  # titles are cheap: the last value is now
                    chart.set_title(piece.label, piece.value, piece.level)
                self._pending = pieces
                if self._timer is None:
                    self._timer = self.set_timer(wait, self._draw_pending)
                return
        self._pending = None
        if tags != self.tags:
            self.tags = tags
            with self.app.batch_update():
                await self.remove_children()
                await self.mount_all([GridChart(tag) for tag in tags])
        if shape != self.shape:
            self.shape = shape
            columns, rows, row_height = shape
            self.styles.grid_size_columns = max(1, columns)
            self.styles.grid_size_rows = max(1, rows)
            self.styles.grid_rows = str(row_height)
            self.styles.height = rows * row_height
        self._draw(pieces)

    def _draw(self, pieces: list[GridPiece]) -> None:
        self._drawn_at = time.monotonic()
        for chart, piece in zip(self.charts, pieces):
            chart.set_title(piece.label, piece.value, piece.level)
            chart.show(piece.data)

    def _draw_pending(self) -> None:
        self._timer = None
        pieces, self._pending = self._pending, None
        if pieces is not None and [piece.tag for piece in pieces] == self.tags:
            self._draw(pieces)
