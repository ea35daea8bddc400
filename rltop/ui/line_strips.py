"""Lines of styled text made into Textual strips, as Textual makes them of a Rich `Text`, cheaper.

A widget that returns a Rich `Text` from ``render`` has it converted by Textual at every refresh:
the text becomes `Content`, each span's style a Textual style, each run of a line a segment whose
style is the widget's style plus (the widget's style plus the span's), with the run's position
for text selection. The cards and the header redraw at every live point (issue 28's CPU goal), so
they draw their lines themselves through `LineStrips`, which makes the same segments with the same
styles and keeps what does not change between two frames: each span style's Textual form, and the
Rich style of each (style, column, row).
"""

from __future__ import annotations

import os

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip
from textual.style import Style as VisualStyle
from textual.widget import Widget

from rltop.view.text.cells import cell_len

REUSE_STYLES = os.environ.get("RLTOP_PLAIN_CARDS", "") != "1"
"""Shortcut for issue 28's CPU goal (a repaint costs what changed): the Rich style made for each
(style, column, row) of a widget's lines is kept, so a redrawn line reuses them instead of building
a Rich style per run of text (a redrawn numbers line mostly has its runs where they were). The
screen is the same as without (``tests/app/test_app_card_redraw.py`` compares them frame by frame).
Off (``RLTOP_PLAIN_CARDS=1``, read at import): every run's style is made anew, as Textual makes it."""

Line = list[tuple[str, Style | None]]
"""One line: (text, Rich style or None for the widget's own) runs."""
_EMPTY: Line = [("", None)]


class LineStrips:
    """Makes a widget's lines into strips; `forget` when the widget is restyled."""

    def __init__(self, widget: Widget) -> None:
        self.widget = widget
        self._visual_styles: dict[Style, VisualStyle] = {}
        self._base: VisualStyle | None = None
        self._combined: dict[Style | None, VisualStyle] = {}
        """A run's style (None: unstyled) on the widget's style `_base` (`REUSE_STYLES`)."""
        self._offset_styles: dict[tuple[VisualStyle, int, int], Style] = {}
        """Rich style of (style, x, y), as `VisualStyle.rich_style_with_offset` makes it (`REUSE_STYLES`)."""

    def forget(self) -> None:
        """The widget was restyled (focus, level, theme): its styles are made anew."""
        self._visual_styles.clear()
        self._combined.clear()
        self._offset_styles.clear()

    def strip(self, line: Line, y: int) -> Strip:
        """The strip of line ``y``, styled as Textual styles a Rich Text's spans: every segment's
        style is the base style plus (base plus its span's style), with its offset for selection."""
        base = self.widget.visual_style
        if base is not self._base:  # (Textual keeps the widget's style until it is restyled)
            self._base = base
            self._combined.clear()
        segments = []
        x = 0
        for part, style in line or _EMPTY:  # (an empty line is one empty run, as Textual draws it)
            if REUSE_STYLES:
                combined = self._combined.get(style)
                if combined is None:
                    combined = self._combined[style] = self._combine(base, style)
                key = (combined, x, y)
                rich = self._offset_styles.get(key)
                if rich is None:
                    rich = self._offset_styles[key] = combined.rich_style_with_offset(x, y)
            else:
                rich = self._combine(base, style).rich_style_with_offset(x, y)
            segments.append(Segment(part, rich))
            x += len(part)
        return Strip(segments, sum(cell_len(part) for part, _ in line))

    def _combine(self, base: VisualStyle, style: Style | None) -> VisualStyle:
        if style is None:
            return base + base
        visual = self._visual_styles.get(style)
        if visual is None:
            theme = self.widget.app.ansi_theme
            visual = self._visual_styles[style] = VisualStyle.from_rich_style(style, theme)
        return base + (base + visual)


def draws_run_by_run(widget: Widget) -> bool:
    """Whether Textual would draw ``widget``'s text run by run from its left edge, as `LineStrips`
    does (no text selected in it, no alignment)."""
    styles = widget.styles
    return (
        widget.text_selection is None
        and styles.content_align == ("left", "top")
        and styles.text_align in ("left", "start")
    )


def text_runs(line: Text) -> Line | None:
    """The runs of one line of Rich text, or None where Textual would draw it otherwise than run by
    run (overlapping spans, which it combines; a style by name; a style of the whole text)."""
    if line.style:
        return None
    plain = line.plain
    runs: Line = []
    at = 0
    for span in line.spans:
        start, end, style = span
        if start < at or not isinstance(style, Style):
            return None
        if end <= start:
            continue
        if start > at:
            runs.append((plain[at:start], None))
        runs.append((plain[start:end], style))
        at = end
    if at < len(plain):
        runs.append((plain[at:], None))
    return runs


def text_lines(text: Text, width: int) -> list[Line] | None:
    """`text_runs` of each line of ``text``; None also for a line wider than ``width`` (Textual wraps it)."""
    lines = []  # (each line keeps the text's own style: `text_runs` refuses it)
    for line in text.split("\n", allow_blank=True):
        runs = text_runs(line) if line.cell_len <= width else None
        if runs is None:
            return None
        lines.append(runs)
    return lines
