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
from rltop.view.compare.comparison import Comparison


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
        with Vertical(id="diff-box"):
            yield Static(id="diff-title")
            yield DiffTable(id="diff-table")
            yield Static(id="diff-folded")
            yield Static(id="diff-summary")

    def on_mount(self) -> None:
        self.update(self.comparison)
        table = self.query_one(DiffTable)
        if table.display:
            table.focus()

    def update(self, comparison: Comparison) -> None:
        """Show ``comparison`` (again, as verdicts change while the screen is open; the cursor stays
        on its run)."""
        self.comparison = comparison
        self.query_one("#diff-title", Static).update(Text(comparison.headline()))
        self.query_one("#diff-folded", Static).update(Text(comparison.folded()))
        line = f"→ {comparison.summary}" if comparison.summary else comparison.no_split()
        summary = self.query_one("#diff-summary", Static)
        summary.update(Text(line))
        summary.display = bool(line)
        table = self.query_one(DiffTable)
        table.display = bool(comparison.diff.rows)
        box = self.query_one("#diff-box")
        box.border_subtitle = "Enter: show · Esc: close" if comparison.diff.rows else "Esc: close"
        if comparison.diff.rows:
            # The box's inner width (as in app.tcss: 95 % of the screen, at most 130, less its
            # border), less what DataTable adds to the table's own gaps (a cell of padding each side
            # of three columns, against two gaps of two) and a scrollbar.
            width = min(MAX_BOX_WIDTH, int(self.app.size.width * BOX_SHARE)) - 2
            table.show(comparison, width - 4)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.dismiss(event.row_key.value)

    def action_cursor(self, direction: int) -> None:
        """j/k move like the arrows."""
        table = self.query_one(DiffTable)
        table.move_cursor(row=table.cursor_row + direction)
