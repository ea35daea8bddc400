"""The header: the run shown (level, name, kind, step, freshness), the state of every run, the view.

It changes at every live point (the step, the age), so it draws its text itself (`LineStrips`, as
Textual would draw it) and keeps its component styles until restyled (`KeptComponentStyles`).
"""

from __future__ import annotations

import os

from rich.text import Text
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget

from rltop.ui.kept_styles import KeptComponentStyles
from rltop.ui.line_strips import LineStrips, draws_run_by_run, text_lines
from rltop.ui.logic.header_info import HeaderInfo
from rltop.ui.logic.levels import LEVEL_KEYS
from rltop.view.text.cells import cell_len
from rltop.view.text.fit import fit_path
from rltop.view.text.marks import LEVEL_ICONS, LEVEL_NAMES, state_level
from rltop.view.text.safe import visible
from rltop.view.text.sentences import compact_fleet_parts, fleet_parts

DRAW_OWN_LINES = os.environ.get("RLTOP_PLAIN_HEADER", "") != "1"
"""Goal: a live point costs the header only its text (issue 28's CPU): `render_line` makes the
strips of `render`'s text itself (`LineStrips`) instead of Textual's conversion of the text at
every refresh. Off (``RLTOP_PLAIN_HEADER=1``, read at import): Textual draws the text; the strips
are the same (``tests/app/test_app_header_lines.py``)."""


class HeaderBar(KeptComponentStyles, Widget):
    """Renders a `HeaderInfo` into one line that always fits, never cutting a word."""

    COMPONENT_CLASSES = {
        "header-bar--ok",
        "header-bar--warn",
        "header-bar--crit",
        "header-bar--run",
        "header-bar--dim",
        "header-bar--stale",
        "header-bar--flag",
    }

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.info = HeaderInfo()
        self._line_strips = LineStrips(self)
        self._drawn: tuple[HeaderInfo, Size, list[Strip] | None] | None = None
        """(info, size, its strips; None: drawn by Textual) of the last frame (`DRAW_OWN_LINES`)."""

    def show(self, info: HeaderInfo) -> None:
        """Display ``info`` (repaints only when the text would change)."""
        if info != self.info:
            self.info = info
            self._drawn = None
            self.refresh()

    def notify_style_update(self) -> None:
        self._drawn = None
        self._line_strips.forget()
        super().notify_style_update()

    def render_line(self, y: int) -> Strip:
        """Line ``y`` of the header: `render`'s text made into strips as Textual would make them."""
        strips = self._own_strips() if DRAW_OWN_LINES and draws_run_by_run(self) else None
        if strips is None:
            return super().render_line(y)
        if y < len(strips):
            return strips[y]
        return Strip.blank(self.size.width, self.visual_style.rich_style)

    def _own_strips(self) -> list[Strip] | None:
        """The strips of the current text and size (None where Textual must draw it: see `text_lines`)."""
        size = self.size
        drawn = self._drawn
        if drawn is None or drawn[0] is not self.info or drawn[1] != size:
            lines = text_lines(self.render(), size.width)
            strip = self._line_strips.strip
            strips = None if lines is None else [strip(line, y) for y, line in enumerate(lines)]
            drawn = self._drawn = (self.info, size, strips)
        return drawn[2]

    def render(self) -> Text:
        """Assemble the parts that fit the current width, most important first."""
        info = self.info
        width = self.content_size.width or 80
        style = self.get_component_rich_style
        parts: list[Part] = []  # lower priority number = kept longer
        short: dict[int, Text] = {}  # index in parts -> a shorter form, tried before dropping parts
        if info.kind and info.kind != "unknown":
            parts.append((3, Text(info.kind, style=style("header-bar--dim"))))
        # A live run's freshness matters more than its step; a finished run's step says it all.
        if info.step_text:
            step_style = style("header-bar--dim") if info.finished else ""
            if info.finished:
                short[len(parts)] = Text("finished", style=step_style)
            parts.append((1 if info.finished else 2, Text(info.step_text, style=step_style)))
        if info.age_text:
            age_style = "header-bar--stale" if info.stale else "header-bar--dim" if info.finished else ""
            parts.append(
                (2 if info.finished else 1, Text(info.age_text, style=style(age_style) if age_style else ""))
            )
        if info.loading_text:
            parts.append((1, Text(info.loading_text, style=style("header-bar--flag"))))
        if info.paused_points is not None:
            parts.append((0, Text(f"PAUSED +{info.paused_points}", style=style("header-bar--flag"))))
        if info.filter_text:
            # Kept long: without it, cards the filter hides would look missing.
            parts.append((1, Text(f"/{visible(info.filter_text)}/", style=style("header-bar--flag"))))
        if info.rate_text:
            parts.append((5, Text(info.rate_text, style=style("header-bar--dim"))))
        if info.note:
            parts.append((6, Text(visible(info.note), style=style("header-bar--dim"))))
        if info.source:
            parts.append((3, Text(visible(info.source), style=style("header-bar--dim"))))
        run = info.run or ""
        line = Text(no_wrap=True, overflow="crop")
        if info.level is not None:
            key = LEVEL_KEYS[info.level]
            line.append(
                f"{LEVEL_ICONS[info.level]} {LEVEL_NAMES[info.level].upper()}",
                style=style(f"header-bar--{key}"),
            )
            line.append(" ")
        fleet = self._fleet(info.fleet, width)
        if self.content_size.height >= 2:
            # Narrow layout: the run has the first line to itself; below, every run, then the rest.
            if run:
                line.append(fit_path(run, max(1, width - line.cell_len)), style=style("header-bar--run"))
            second = Text(no_wrap=True, overflow="crop")
            second.append_text(fleet)
            room = width - (fleet.cell_len + len(SEPARATOR) if fleet else 0)
            for index, (_, text) in enumerate(_fit(parts, room + 1, short)):
                second.append(SEPARATOR if index == 0 and fleet else " " if index else "")
                second.append_text(text)
            return Text("\n").join([line, second])
        run_min = min(cell_len(run), 16)
        fleet_room = fleet.cell_len + len(SEPARATOR) if fleet else 0
        kept = _fit(parts, width - line.cell_len - run_min - (1 if run else 0) - fleet_room, short)
        run_room = width - line.cell_len - sum(text.cell_len + 1 for _, text in kept) - fleet_room
        if run:
            line.append(fit_path(run, max(1, run_room)), style=style("header-bar--run"))
        for _, text in kept:
            if len(line):
                line.append(" ")
            line.append_text(text)
        if fleet:
            line.append(SEPARATOR)
            line.append_text(fleet)
        aside = visible(info.source_aside)
        if aside and len(kept) == len(parts) and line.cell_len + 1 + cell_len(aside) <= width:
            line.append(" " + aside, style=style("header-bar--dim"))
        return line

    def _fleet(self, fleet: list[tuple[str, int]], width: int) -> Text:
        """The state of every run, in words when they fit half the line, else compact ("" for one run)."""
        if not fleet:
            return Text()
        words = self._fleet_text(fleet)
        return words if words.cell_len <= width // 2 else self._fleet_text(fleet, compact=True)

    def _fleet_text(self, fleet: list[tuple[str, int]], compact: bool = False) -> Text:
        """``2 runs: 1 CRIT 1 WARN`` (compact: ``2 runs ✖1 ▲1``), each count in its level's colour."""
        style = self.get_component_rich_style
        text = Text()
        for state, part in compact_fleet_parts(fleet) if compact else fleet_parts(fleet):
            if len(text):
                text.append(" ")
            level = state_level(state)
            text.append(
                part, style=style(f"header-bar--{LEVEL_KEYS[level]}") if level else style("header-bar--dim")
            )
        return text


SEPARATOR = " · "
"""Between the run's own facts and the state of every run."""
Part = tuple[int, Text]
"""(priority, text) of one part of the header."""


def _fit(parts: list[Part], room: int, short: dict[int, Text] | None = None) -> list[Part]:
    """The parts that fit ``room``: the least important one (highest number, rightmost first) is
    shortened (``short``: index -> a shorter form) or else dropped, until the rest fits."""
    kept: dict[int, Part] = dict(enumerate(parts))
    short = dict(short or {})
    while kept and sum(text.cell_len + 1 for _, text in kept.values()) > max(0, room):
        least = max(kept, key=lambda i: (kept[i][0], i))
        shorter = [i for i in short if i in kept]
        if shorter:
            candidate = max(shorter, key=lambda i: (kept[i][0], i))
            if kept[candidate][0] >= kept[least][0]:
                kept[candidate] = (kept[candidate][0], short.pop(candidate))
                continue
        del kept[least]
    return [kept[i] for i in sorted(kept)]
