"""The config diff as a table: one row per run, its verdict, then each setting that differs."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.widgets import DataTable

from rltop.ui.logic.levels import LEVEL_KEYS
from rltop.view.compare.comparison import Comparison


class DiffTable(DataTable):
    """A DataTable of the `Comparison` (every cell literal `Text`: names and values are never markup).

    Every setting that differs gets a column (the table scrolls sideways); a run's verdict is in its
    level's colour."""

    COMPONENT_CLASSES = DataTable.COMPONENT_CLASSES | {
        "diff-table--ok",
        "diff-table--warn",
        "diff-table--crit",
    }

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = False

    def show(self, comparison: Comparison, width: int) -> None:
        """Fill the table (its columns are the comparison's; the verdicts are shortened so that the
        first setting fits ``width`` cells, the others scroll)."""
        row = self.cursor_row
        kept = self.coordinate_to_cell_key((row, 0)).row_key.value if 0 <= row < self.row_count else None
        self.clear(columns=True)
        table = comparison.table(width, scroll=True)
        self.add_columns(*table.header)
        for run, cells, level in zip(comparison.runs, table.rows, table.levels):
            style = Style()
            if level is not None:  # the colour only: the cursor row keeps its own background
                level_style = self.get_component_rich_style(f"diff-table--{LEVEL_KEYS[level]}")
                style = Style(color=level_style.color, bold=level_style.bold)
            self.add_row(
                Text(cells[0]), Text(cells[1], style=style), *(Text(cell) for cell in cells[2:]), key=run.name
            )
        names = [run.name for run in comparison.runs]
        if kept in names:
            self.move_cursor(row=names.index(kept))
