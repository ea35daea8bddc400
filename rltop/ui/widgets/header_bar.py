"""The one-line header: run, trainer kind, step, freshness, rate and the state of the view."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.widget import Widget

from rltop.health.findings import Level
from rltop.report.safe_text import visible
from rltop.ui.formatting import elide_name
from rltop.ui.levels import LEVEL_ICONS, LEVEL_KEYS, LEVEL_NAMES


@dataclass
class HeaderInfo:
    """Everything the header line can show; parts are dropped right to left when space runs out."""

    run: str | None = None
    kind: str = ""
    step: int | None = None
    level: Level | None = None
    age_text: str = ""
    stale: bool = False
    rate_text: str = ""
    run_position: tuple[int, int] | None = None
    paused_points: int | None = None
    loading_text: str = ""
    filter_text: str = ""
    note: str = ""
    source: str = ""  # what the run is read from, when not event files ("from trainer_state.json")
    source_aside: str = ""  # a choice worth a word, shown only where the whole line has room to spare


class HeaderBar(Widget):
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

    def show(self, info: HeaderInfo) -> None:
        """Display ``info`` (repaints only when the text would change)."""
        if info != self.info:
            self.info = info
            self.refresh()

    def render(self) -> Text:
        """Assemble the parts that fit the current width, most important first."""
        info = self.info
        width = self.content_size.width or 80
        style = self.get_component_rich_style
        parts: list[tuple[int, Text]] = []  # (priority, text); lower priority number = kept longer
        if info.level is not None:
            key = LEVEL_KEYS[info.level]
            badge = f"{LEVEL_ICONS[info.level]} {LEVEL_NAMES[info.level].upper()}"
            parts.append((0, Text(badge, style=style(f"header-bar--{key}"))))
        if info.kind and info.kind != "unknown":
            parts.append((3, Text(info.kind, style=style("header-bar--dim"))))
        if info.step is not None:
            parts.append((2, Text(f"step {info.step}")))
        if info.age_text:
            parts.append((1, Text(info.age_text, style=style("header-bar--stale") if info.stale else "")))
        if info.loading_text:
            parts.append((1, Text(info.loading_text, style=style("header-bar--flag"))))
        if info.paused_points is not None:
            parts.append((0, Text(f"PAUSED +{info.paused_points}", style=style("header-bar--flag"))))
        if info.filter_text:
            parts.append((4, Text(f"/{visible(info.filter_text)}/", style=style("header-bar--flag"))))
        if info.rate_text:
            parts.append((5, Text(info.rate_text, style=style("header-bar--dim"))))
        if info.run_position is not None and info.run_position[1] > 1:
            index, count = info.run_position
            parts.append((4, Text(f"run {index}/{count}", style=style("header-bar--dim"))))
        if info.note:
            parts.append((6, Text(visible(info.note), style=style("header-bar--dim"))))
        if info.source:
            parts.append((3, Text(visible(info.source), style=style("header-bar--dim"))))
        run = visible(info.run) if info.run else ""
        badge = parts[0] if info.level is not None else None
        others = [part for part in parts if part is not badge]
        line = Text(no_wrap=True, overflow="crop")
        if badge is not None:
            line.append_text(badge[1])
            line.append(" ")
        if self.content_size.height >= 2:
            # Narrow layout: the run has the first line to itself, the rest goes below.
            if run:
                line.append(elide_name(run, max(1, width - len(line))), style=style("header-bar--run"))
            second = Text(no_wrap=True, overflow="crop")
            for _, text in _fit(others, width + 1):
                if len(second):
                    second.append(" ")
                second.append_text(text)
            return Text("\n").join([line, second])
        run_min = min(len(run), 16)
        kept = _fit(others, width - len(line) - run_min - (1 if run else 0))
        run_room = width - len(line) - sum(len(text) + 1 for _, text in kept)
        if run:
            line.append(elide_name(run, max(1, run_room)), style=style("header-bar--run"))
        for _, text in kept:
            if len(line):
                line.append(" ")
            line.append_text(text)
        aside = visible(info.source_aside)
        if aside and len(kept) == len(others) and len(line) + 1 + len(aside) <= width:
            line.append(" " + aside, style=style("header-bar--dim"))
        return line


def _fit(parts: list[tuple[int, Text]], room: int) -> list[tuple[int, Text]]:
    """Drop the least important parts (highest number, rightmost first) until the rest fits ``room``."""
    kept = list(parts)
    while kept and sum(len(text) + 1 for _, text in kept) > max(0, room):
        kept.pop(max(range(len(kept)), key=lambda i: (kept[i][0], i)))
    return kept
