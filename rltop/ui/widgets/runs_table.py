"""The runs list: name, trainer kind, step, worst level and staleness of every run."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from rltop.ui.logic.levels import LEVEL_KEYS
from rltop.view.run_view import RunView
from rltop.view.text.fit import fit_path
from rltop.view.text.humanize import age_text
from rltop.view.text.marks import LEVEL_ICONS, LEVEL_NAMES


class RunsTable(DataTable):
    """A DataTable whose every cell is literal `Text` (run names are never markup)."""

    COMPONENT_CLASSES = DataTable.COMPONENT_CLASSES | {
        "runs-table--ok",
        "runs-table--warn",
        "runs-table--crit",
    }

    name_width = 40
    """Cells the run names may take (set by the screen for its width)."""

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = False
        self.add_columns("run", "kind", "step", "health", "updated", "points")

    def show_rows(self, runs: list[RunView], current: str | None, now: float) -> None:
        """Fill the table and put the cursor on ``current``."""
        self.clear()
        for run in runs:
            self.add_row(
                Text(fit_path(run.label, self.name_width)),
                Text(run.kind),
                Text("–" if run.last_step is None else str(run.last_step), justify="right"),
                self._level_text(run),
                Text(age_text(run.age(now)), justify="right"),
                Text(f"{run.points:,}", justify="right"),
                key=run.name,
            )
        names = [run.name for run in runs]
        if current in names:
            self.move_cursor(row=names.index(current))

    def _level_text(self, run: RunView) -> Text:
        if run.empty:
            return Text("empty")
        key = LEVEL_KEYS[run.level]
        return Text(
            f"{LEVEL_ICONS[run.level]} {LEVEL_NAMES[run.level]}",
            style=self.get_component_rich_style(f"runs-table--{key}"),
        )
