"""``r``: the list of runs; Enter switches the dashboard to the highlighted run."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from rltop.ui.widgets.runs_table import RunsTable
from rltop.view.run_view import RunView

MAX_BOX_WIDTH = 130
BOX_SHARE = 0.95
"""The box's width: as in app.tcss (#runs-box)."""
OTHER_COLUMNS_WIDTH = 52
"""Cells of every column but the name (kind, step, health, updated, points, cell padding)."""


class RunsScreen(ModalScreen[str | None]):
    """Pick a run; dismissed with its name (or None on Esc)."""

    BINDINGS = [
        Binding("escape,r", "dismiss(None)", "Close"),
        Binding("d", "app.config_diff", "Diff"),  # the runs compared, from this list too
        # A modal screen hides the app's own keys: q must quit here too, as on every screen.
        Binding("q", "app.quit", "Quit"),
        Binding("j", "cursor(1)", show=False),
        Binding("k", "cursor(-1)", show=False),
    ]

    def __init__(self, rows: list[RunView], current: str | None, now: float) -> None:
        super().__init__(id="runs")
        self.rows = rows
        self.current = current
        self.now = now

    def compose(self) -> ComposeResult:
        with Vertical(id="runs-box"):
            yield Static(Text(f"Runs ({len(self.rows)})  ·  Enter: show  ·  Esc: close"), id="runs-title")
            yield RunsTable(id="runs-table")

    def on_mount(self) -> None:
        table = self.query_one(RunsTable)
        table.name_width = self._name_width()
        table.show_rows(self.rows, self.current, self.now)
        table.focus()

    def _name_width(self) -> int:
        """Cells for the run names: what the box has left after the other columns (a 240-character
        name is shortened, never pushing the other columns off the screen)."""
        box = min(MAX_BOX_WIDTH, int(self.app.size.width * BOX_SHARE)) - 2  # the border
        return max(12, box - OTHER_COLUMNS_WIDTH)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.dismiss(event.row_key.value)

    def action_cursor(self, direction: int) -> None:
        """j/k move like the arrows."""
        table = self.query_one(RunsTable)
        table.move_cursor(row=table.cursor_row + direction)

    def update_rows(self, rows: list[RunView], now: float) -> None:
        """Refresh the list while it is open (new runs, new steps)."""
        table = self.query_one(RunsTable)
        row = table.cursor_row
        selected = self.rows[row].name if 0 <= row < len(self.rows) else self.current
        self.rows, self.now = rows, now
        table.show_rows(rows, selected, now)
