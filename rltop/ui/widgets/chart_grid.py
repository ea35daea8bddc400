"""The chart grid above the cards on large terminals: the shown run's key values as real charts.

The dashboard decides whether there is a grid and what it holds (`rltop.ui.logic.grid_layout`); this
widget lays out one `GridChart` per metric in equal columns and rows, rebuilding its charts only
when the metrics change. Every repaint hands each chart its newest data, as the cards get theirs:
a chart whose picture is the same (a new point that moves no dot) draws nothing
(`rltop.ui.widgets.detail_chart`), and drawing one is cheap (`rltop.ui.plot_text`), so the charts
are never held back behind the cards. (They were, up to 2 s, while a plotext chart of a long series
cost 15–40 ms.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.widget import Widget

if TYPE_CHECKING:  # the charts draw with numpy and plotext; the dashboard paints before they load
    from rltop.ui.widgets.detail_chart import ChartData
    from rltop.ui.widgets.grid_chart import GridChart


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

    @property
    def charts(self) -> list[GridChart]:
        """The charts, in grid order."""
        from rltop.ui.widgets.grid_chart import GridChart

        return list(self.query_children(GridChart))

    async def show(self, pieces: list[GridPiece], shape: tuple[int, int, int]) -> None:
        """Show these charts in a grid of ``shape`` (columns, rows, row height)."""
        from rltop.ui.widgets.grid_chart import GridChart

        tags = [piece.tag for piece in pieces]
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
        for chart, piece in zip(self.charts, pieces):
            chart.set_title(piece.label, piece.value, piece.level)
            chart.show(piece.data)  # (nothing to do when its data version is the one drawn)
