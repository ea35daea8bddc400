"""The runs list: name, trainer kind, step, worst level and staleness of every run."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.widgets import DataTable

from rltop.health.findings import Level
from rltop.report.safe_text import visible
from rltop.ui.levels import LEVEL_ICONS, LEVEL_KEYS, LEVEL_NAMES


@dataclass
class RunRow:
    """One line of the runs list."""

    name: str
    kind: str
    step: int | None
    level: Level | None  # None: no scalars yet (empty run)
    age_text: str
    points: int


class RunsTable(DataTable):
    """A DataTable whose every cell is literal `Text` (run names are never markup)."""

    COMPONENT_CLASSES = DataTable.COMPONENT_CLASSES | {
        "runs-table--ok",
        "runs-table--warn",
        "runs-table--crit",
    }

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = False
        self.add_columns("run", "kind", "step", "health", "updated", "points")

    def show_rows(self, rows: list[RunRow], current: str | None) -> None:
        """Fill the table and put the cursor on ``current``."""
        self.clear()
        for row in rows:
            self.add_row(
                Text(visible(row.name)),
                Text(row.kind),
                Text("–" if row.step is None else str(row.step), justify="right"),
                self._level_text(row.level),
                Text(row.age_text, justify="right"),
                Text(f"{row.points:,}", justify="right"),
                key=row.name,
            )
        names = [row.name for row in rows]
        if current in names:
            self.move_cursor(row=names.index(current))

    def _level_text(self, level: Level | None) -> Text:
        if level is None:
            return Text("empty")
        key = LEVEL_KEYS[level]
        return Text(f"{LEVEL_ICONS[level]} {LEVEL_NAMES[level]}", style=self.get_component_rich_style(
            f"runs-table--{key}"))
