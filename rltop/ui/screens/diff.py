"""``d``: the runs compared: the settings that differ with each run's verdict, and the split line.

Enter shows the highlighted run on the dashboard; Esc (or ``d``) closes.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from rltop.ui.widgets.diff_table import DiffTable
from rltop.view.compare import Comparison


class DiffScreen(ModalScreen[str | None]):
    """The comparison of every run; dismissed with the run to show (or None)."""

    BINDINGS = [
        Binding("escape,d", "dismiss(None)", "Close"),
        Binding("q", "app.quit", "Quit"),  # a modal screen hides the app's keys: q quits here too
        Binding("j", "cursor(1)", show=False),
        Binding("k", "cursor(-1)", show=False),
    ]

    def __init__(self, comparison: Comparison) -> None:
        super().__init__(id="diff")
        self.comparison = comparison

    def compose(self) -> ComposeResult:
        comparison = self.comparison
        with Vertical(id="diff-box"):
            yield Static(Text(comparison.headline()), id="diff-title")
            if comparison.diff.rows:
                yield DiffTable(id="diff-table")
            yield Static(Text(comparison.folded()), id="diff-folded")
            summary = comparison.summary or "No setting splits the failing runs from the healthy ones."
            yield Static(Text(("→ " if comparison.summary else "") + summary), id="diff-summary")
            yield Static(Text("Enter: show the run  ·  Esc: close"), id="diff-help")

    def on_mount(self) -> None:
        tables = self.query(DiffTable)
        if tables:
            tables.first().show(self.comparison)
            tables.first().focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.dismiss(event.row_key.value)

    def action_cursor(self, direction: int) -> None:
        """j/k move like the arrows."""
        for table in self.query(DiffTable):
            table.move_cursor(row=table.cursor_row + direction)
