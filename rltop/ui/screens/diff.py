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

from rltop.ui.screens.runs import BOX_SHARE, MAX_BOX_WIDTH
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
        with Vertical(id="diff-box") as box:
            box.border_subtitle = "Enter: show · Esc: close" if comparison.diff.rows else "Esc: close"
            yield Static(Text(comparison.headline()), id="diff-title")
            if comparison.diff.rows:
                yield DiffTable(id="diff-table")
            yield Static(Text(comparison.folded()), id="diff-folded")
            if comparison.summary or comparison.no_split():
                line = f"→ {comparison.summary}" if comparison.summary else comparison.no_split()
                yield Static(Text(line), id="diff-summary")

    def on_mount(self) -> None:
        tables = self.query(DiffTable)
        if tables:
            # The box's inner width (as in app.tcss: 95 % of the screen, at most 130, less its border),
            # less what DataTable adds to the table's own gaps (a cell of padding each side of three
            # columns, against two gaps of two) and a scrollbar.
            box = min(MAX_BOX_WIDTH, int(self.app.size.width * BOX_SHARE)) - 2
            tables.first().show(self.comparison, box - 4)
            tables.first().focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.dismiss(event.row_key.value)

    def action_cursor(self, direction: int) -> None:
        """j/k move like the arrows."""
        for table in self.query(DiffTable):
            table.move_cursor(row=table.cursor_row + direction)
