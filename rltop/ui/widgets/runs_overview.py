"""The runs overview: one line per run above the alerts, so no run is ever out of sight.

Wide::

    ▶ ✖ CRIT ppo_unstable   step 150   4 s ago   entropy_avg 4.1e-4  rlhf_reward 0.2623
      ● ok   grpo_healthy   step 200   finished 2 h ago   reward 1.891  kl 0.0312

Narrow (one line per run, the columns that fit; a value only with its name)::

    ▶✖ ppo_unstable 150 finished
     ● grpo_healthy 200 4 s

The selected run is marked ``▶``; a run that turned critical since it was last shown is
highlighted until it is. Click a line to show that run. When the runs do not all fit, the window
keeps the selected run and as many critical ones as it can in sight, and a hint line counts what
it leaves out (``↑ +2 CRIT · +1 more above``; a click on it shows the nearest critical run there).
A seed group gets a line of its own above its runs: its worst level, how many runs, and the spread
of its key values (``reward 0.41 ± 0.05``); a click on it shows its worst run. Columns are padded
in terminal cells, so a CJK or emoji name never shifts them, and a long name is shortened to its
share of the width, between words and distinct from the other names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.style import Style
from rich.text import Text
from textual.events import Click
from textual.geometry import Size
from textual.message import Message
from textual.widget import Widget

from rltop.health.findings import Level
from rltop.ui.logic.levels import LEVEL_KEYS
from rltop.view.text.cells import cell_len, pad_cells
from rltop.view.text.fit import fit_paths

if TYPE_CHECKING:  # the rows are built by the session, after numpy is loaded
    from rltop.view.fleet import OverviewRow
    from rltop.view.group_view import GroupRow

    Row = OverviewRow | GroupRow


@dataclass(frozen=True)
class Window:
    """The rows the overview shows, and whether a hint line counts the rows above / below them."""

    first: int
    count: int
    above: bool
    below: bool


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

    def _window(self) -> Window:
        """Which rows to show: the selected run always, and as many critical runs (or runs that
        turned critical) as fit; the runs above and below the window are counted on a hint line."""
        rows, lines = self.rows, self.max_lines
        if len(rows) <= lines:
            return Window(0, len(rows), False, False)
        selected = next((i for i, row in enumerate(rows) if row.selected), 0)
        urgent = [i for i, row in enumerate(rows) if _urgent(row)]
        best: tuple[tuple, Window] | None = None
        for first in range(len(rows)):
            above = first > 0
            count = lines - above
            below = first + count < len(rows)
            count -= below
            if count < 1 or not first <= selected < first + count:
                continue
            window = Window(first, count, above, below)
            inside = sum(first <= i < first + count for i in urgent)
            score = (inside, -abs(first - self._first))  # then: move as little as possible
            if best is None or score > best[0]:
                best = (score, window)
        if best is None:  # one line only: the selected run
            return Window(selected, 1, False, False)
        self._first = best[1].first
        return best[1]

    def _choose_hidden(self, rows: list[Row]) -> None:
        """A click on a hint line: show the nearest critical run it counts (else the nearest run)."""
        row = _nearest(rows)
        if row is not None:
            self.post_message(self.Chosen(row.name))

    def _hint(self, rows: list[Row], arrow: str, where: str) -> Text:
        """``↑ +2 CRIT · +1 WARN · +3 more above``: what the window leaves out on one side."""
        style = self.get_component_rich_style
        crit = sum(row.level == Level.CRITICAL for row in rows)
        warn = sum(row.level == Level.WARN for row in rows)
        rest = len(rows) - crit - warn
        line = Text(f" {arrow} ", no_wrap=True, overflow="crop", end="")
        parts = [
            (f"+{crit} CRIT", style("runs-overview--crit")) if crit else None,
            (f"+{warn} WARN", style("runs-overview--warn")) if warn else None,
            (f"+{rest} more" if crit or warn else f"{rest} more runs", style("runs-overview--dim"))
            if rest
            else None,
        ]
        for index, part in enumerate(part for part in parts if part is not None):
            if index:
                line.append(" · ", style=style("runs-overview--dim"))
            line.append(*part)
        line.append(f" {where}", style=style("runs-overview--dim"))
        return line

    def render(self) -> Text:
        """The lines that fit, columns aligned in cells."""
        width = max(10, self.content_size.width)
        window = self._window()
        first, count = window.first, window.count
        shown = self.rows[first : first + count]
        if not shown:
            return Text()
        narrow = width < NARROW_WIDTH
        longest = max(cell_len(row.label) for row in self.rows)
        if narrow:  # the name gets what the step and age leave, never pushing them off the line
            fixed = (
                2
                + 1
                + max(cell_len(_step(r, True)) for r in shown)
                + 1
                + max(cell_len(_age(r, True)) for r in shown)
            )
            name_width = max(4, min(longest, width - fixed - 1))
        else:
            name_width = min(longest, max(8, int(width * NAME_SHARE)))
        step_width = max(cell_len(_step(row, narrow)) for row in shown)
        age_width = max(cell_len(_age(row, narrow)) for row in shown)
        names = {
            label: pad_cells(fitted, name_width)  # distinct, cut between words
            for label, fitted in fit_paths([row.label for row in self.rows], name_width).items()
        }
        lines = [self._line(row, names[row.label], narrow, width, step_width, age_width) for row in shown]
        if window.above:
            lines.insert(0, self._hint(self.rows[:first], "↑", "above"))
        if window.below:
            lines.append(self._hint(self.rows[first + count :], "↓", "below"))
        text = Text("\n").join(lines)
        text.no_wrap = True
        text.overflow = "crop"
        return text

    def _line(self, row: Row, name: str, narrow: bool, width: int, step_width: int, age_width: int) -> Text:
        style = self.get_component_rich_style
        level_style = (
            style(f"runs-overview--{LEVEL_KEYS[row.level]}")
            if row.level is not None
            else style("runs-overview--dim")
        )
        line = Text(no_wrap=True, overflow="crop", end="")
        line.append("▶" if row.selected else " ", style=style("runs-overview--selected"))
        if narrow:
            line.append(row.icon, style=level_style)
        else:
            line.append(f" {row.icon} {row.badge:<4}", style=level_style)
        line.append(" ")
        line.append(name, style=style("runs-overview--selected") if row.selected else Style())
        line.append(" ")
        line.append(pad_cells(_step(row, narrow), step_width, "right"))
        line.append("  " if not narrow else " ")
        if _is_group(row):
            age_style = style("runs-overview--dim")
        else:
            age_style = (
                style("runs-overview--stale")
                if row.stale
                else (style("runs-overview--dim") if row.muted_age else Style())
            )
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
        window = self._window()
        row = event.y - window.above
        if window.above and event.y == 0:  # a hint: show the nearest run it counts (a critical first)
            self._choose_hidden(self.rows[window.first - 1 :: -1])
        elif window.below and row == window.count:
            self._choose_hidden(self.rows[window.first + window.count :])
        elif 0 <= row < window.count:
            self.post_message(self.Chosen(self.rows[window.first + row].name))


def _nearest(rows: list[Row]) -> Row | None:
    """The first urgent row of ``rows`` (nearest first), else the first one."""
    return next((row for row in rows if _urgent(row)), rows[0] if rows else None)


def _urgent(row: Row) -> bool:
    """A row the window should show: a critical run (or group), or one that just turned critical."""
    return row.level == Level.CRITICAL or row.attention


def _is_group(row: Row) -> bool:
    return not hasattr(row, "step")


def _step(row: Row, narrow: bool) -> str:
    if _is_group(row):
        return f"×{row.size}" if narrow else f"{row.size} run{'s' if row.size != 1 else ''}"
    return row.step.removeprefix("step ") if narrow else row.step


def _age(row: Row, narrow: bool) -> str:
    if _is_group(row):
        return row.short_kind if narrow else row.kind
    return row.short_age if narrow else row.age
