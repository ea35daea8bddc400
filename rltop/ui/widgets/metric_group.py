"""A catalogue group of cards: its title line and a grid whose column count the board sets."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Static

from rltop.ui.kept_render import KeptLines

if TYPE_CHECKING:
    from rltop.ui.widgets.metric_card import MetricCard


class MetricGroup(KeptLines, Widget):
    """Title plus cards; hidden by the board when the filter leaves none of its cards."""

    def __init__(self, group: str, cards: list[MetricCard]) -> None:
        super().__init__(classes="metric-group")
        self.group = group
        # The cards of a group never change: a new tag rebuilds the board. Keeping the list (and
        # the grid) here makes them usable before the group is composed and mounted.
        self._cards = list(cards)
        self.grid = GroupGrid(*cards, classes="group-grid")

    def compose(self) -> ComposeResult:
        yield GroupTitle(Text(self.group), classes="group-title")
        yield self.grid

    @property
    def cards(self) -> list[MetricCard]:
        """This group's cards in display order (hidden ones included)."""
        return self._cards

    def set_columns(self, columns: int) -> None:
        """Lay the cards out in ``columns`` equal columns."""
        grid = self.grid
        if grid.styles.grid_size_columns != columns:
            grid.styles.grid_size_columns = columns


class GroupTitle(KeptLines, Static):
    """A group's title line."""


class GroupGrid(KeptLines, Widget):
    """The grid of a group's cards."""
