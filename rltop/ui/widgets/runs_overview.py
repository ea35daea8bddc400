"""The runs overview: one line per run above the alerts, so no run is ever out of sight.

Wide::

    ▶ ✖ CRIT ppo_unstable   step 150   4 s ago   entropy_avg 4.1e-4  rlhf_reward 0.2623
      ● ok   grpo_healthy   step 200   finished 2 h ago   reward 1.891  kl 0.0312

Narrow (one line per run, the columns that fit; a value only with its name)::

    ▶✖ ppo_unstable 150 finished
     ● grpo_healthy 200 4 s

The selected run is marked ``▶``; a run that turned critical since it was last shown is
highlighted until it is. Click a line to show that run. A seed group gets a line of its own above
its runs: its worst level, how many runs, and the spread of its key values (``reward 0.41 ± 0.05``);
a click on it shows its worst run. Columns are padded in terminal cells, so a
CJK or emoji name never shifts them, and a long name is shortened to its share of the width.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.style import Style
from rich.text import Text
from textual.events import Click
from textual.geometry import Size
from textual.message import Message
from textual.widget import Widget

from rltop.ui.levels import LEVEL_KEYS
from rltop.view.cells import cell_len, pad_cells
from rltop.view.text_fit import fit_path

if TYPE_CHECKING:  # the rows are built by the session, after numpy is loaded
    from rltop.view.fleet import OverviewRow
    from rltop.view.group_view import GroupRow

    Row = OverviewRow | GroupRow

NAME_SHARE = 0.4
"""At most this part of the width goes to the run names (the facts and values need the rest)."""
NARROW_WIDTH = 70


class RunsOverview(Widget):
    """Every run, one line each; hidden with ``v`` and while there is only one run."""

    COMPONENT_CLASSES = {
        "runs-overview--ok",
        "runs-overview--warn",
        "runs-overview--crit",
        "runs-overview--dim",
        "runs-overview--selected",
        "runs-overview--attention",
        "runs-overview--stale",
    }

    class Chosen(Message):
        """A line was clicked: show that run."""

        def __init__(self, run: str) -> None:
            super().__init__()
            self.run = run

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[Row] = []
        self.max_lines = 4
        self._first = 0

    def show(self, rows: list[Row]) -> None:
        """Show these lines (`rltop.view.fleet.overview_rows`); repaints only when one changed."""
        if rows != self.rows:
            resized = len(rows) != len(self.rows)
            self.rows = rows
            self.refresh(layout=resized)

    def set_max_lines(self, lines: int) -> None:
        """At most this many lines (the rest scrolls to keep the selected run in sight)."""
        lines = max(1, lines)
        if lines != self.max_lines:
            self.max_lines = lines
            self.refresh(layout=True)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return min(len(self.rows), self.max_lines)

    def _window(self) -> tuple[int, int]:
        """The first row shown and how many, keeping the selected run (and the first row) in sight."""
        count = min(len(self.rows), self.max_lines)
        selected = next((i for i, row in enumerate(self.rows) if row.selected), 0)
        first = min(self._first, max(0, len(self.rows) - count))
        if selected < first:
            first = selected
        elif selected >= first + count:
            first = selected - count + 1
        self._first = first
        return first, count

    def render(self) -> Text:
        """The lines that fit, columns aligned in cells."""
        width = max(10, self.content_size.width)
        first, count = self._window()
        shown = self.rows[first : first + count]
        if not shown:
            return Text()
        narrow = width < NARROW_WIDTH
        longest = max(cell_len(row.label) for row in self.rows)
        if narrow:  # the name gets what the step and age leave, never pushing them off the line
            fixed = 2 + 1 + max(cell_len(_step(r, True)) for r in shown) + 1 + max(
                cell_len(_age(r, True)) for r in shown)
            name_width = max(4, min(longest, width - fixed - 1))
        else:
            name_width = min(longest, max(8, int(width * NAME_SHARE)))
        step_width = max(cell_len(_step(row, narrow)) for row in shown)
        age_width = max(cell_len(_age(row, narrow)) for row in shown)
        lines = [self._line(row, width, narrow, name_width, step_width, age_width) for row in shown]
        text = Text("\n").join(lines)
        text.no_wrap = True
        text.overflow = "crop"
        return text

    def _line(self, row: Row, width: int, narrow: bool, name_width: int, step_width: int,
              age_width: int) -> Text:
        style = self.get_component_rich_style
        level_style = style(f"runs-overview--{LEVEL_KEYS[row.level]}") if row.level is not None else style(
            "runs-overview--dim")
        line = Text(no_wrap=True, overflow="crop", end="")
        line.append("▶" if row.selected else " ", style=style("runs-overview--selected"))
        if narrow:
            line.append(row.icon, style=level_style)
        else:
            line.append(f" {row.icon} {row.badge:<4}", style=level_style)
        name = pad_cells(fit_path(row.label, name_width), name_width)
        line.append(" ")
        line.append(name, style=style("runs-overview--selected") if row.selected else Style())
        line.append(" ")
        line.append(pad_cells(_step(row, narrow), step_width, "right"))
        line.append("  " if not narrow else " ")
        if _is_group(row):
            age_style = style("runs-overview--dim")
        else:
            age_style = style("runs-overview--stale") if row.stale else (
                style("runs-overview--dim") if row.muted_age else Style())
        line.append(pad_cells(_age(row, narrow), age_width), style=age_style)
        for label, value in row.values:  # a value without its name would say nothing: both or none
            if line.cell_len + 2 + cell_len(label) + 1 + cell_len(value) > width:
                break
            line.append("  ")
            line.append(label, style=style("runs-overview--dim"))
            line.append(f" {value}")
        if row.attention:
            line.stylize(style("runs-overview--attention"))
        return line

    def on_click(self, event: Click) -> None:
        first, count = self._window()
        index = first + event.y
        if 0 <= event.y < count and index < len(self.rows):
            self.post_message(self.Chosen(self.rows[index].name))


def _is_group(row: Row) -> bool:
    return not hasattr(row, "step")


def _step(row: Row, narrow: bool) -> str:
    if _is_group(row):
        return f"×{row.size}" if narrow else f"{row.size} runs"
    return row.step.removeprefix("step ") if narrow else row.step


def _age(row: Row, narrow: bool) -> str:
    if _is_group(row):
        return "seeds" if narrow else "seed group"
    return row.short_age if narrow else row.age
