"""A chart's ANSI text as Rich text: `rich.text.Text.from_ansi`'s result, without its cost.

Goal served: the dashboard's CPU while a run logs (issue 28), its grid charts redrawn with every
new point. Rich's decoder tokenises every line with a general regular expression and re-parses
every colour code it meets (a grid chart of 2 KB: about 0.5 ms, the chart's drawing itself takes
about as long). A chart's text holds only SGR codes (``ESC[…m``), a handful of distinct ones: this
decoder splits each line on them and looks each (style, code) pair up once, the new style worked
out by Rich's own decoder, so the spans are Rich's, style for style. Any other escape sequence, or
a carriage return, and the text goes to `Text.from_ansi`.

Switch: `ENABLED` (``RLTOP_PLAIN_CHARTS=1`` turns it off with the chart renderer, read once at
import). ``tests/unit/test_plot_text.py`` checks that both give equal Text on the charts' texts.
"""

from __future__ import annotations

import os
import re

from rich.ansi import AnsiDecoder
from rich.control import strip_control_codes
from rich.style import Style
from rich.text import Span, Text

ENABLED = os.environ.get("RLTOP_PLAIN_CHARTS", "") != "1"
"""Decode charts' texts here (False: with `Text.from_ansi`)."""

_SGR = re.compile(r"\x1b\[([0-9;]*)m")
_LINES = re.compile(r"(?<=\n)")
_after: dict[tuple[Style, str], Style] = {}


def _style_after(style: Style, codes: str) -> Style:
    """The style Rich's decoder holds after ``ESC[codes m`` when it held ``style``."""
    key = (style, codes)
    found = _after.get(key)
    if found is None:
        decoder = AnsiDecoder()
        decoder.style = style
        decoder.decode_line(f"\x1b[{codes}m")
        found = _after[key] = decoder.style
    return found


def text_from_ansi(ansi: str, no_wrap: bool = True) -> Text:
    """``Text.from_ansi(ansi, no_wrap=no_wrap)``."""
    if not _decodable(ansi):
        return Text.from_ansi(ansi, no_wrap=no_wrap)
    return joined(lines_from_ansi(ansi), no_wrap)


def _decodable(ansi: str) -> bool:
    """Decoded here: the switch is on and the text has no escape but SGR codes, and no carriage return."""
    return ENABLED and "\r" not in ansi and ansi.count("\x1b") == len(_SGR.findall(ansi))


def joined(lines: list[Text], no_wrap: bool = True) -> Text:
    """The lines as one Text, as `Text.from_ansi` joins the lines it decodes."""
    joiner = Text("\n", justify=None, overflow=None, no_wrap=no_wrap, end="\n", tab_size=8, style="")
    return joiner.join(lines)


def lines_from_ansi(ansi: str) -> list[Text]:
    """The lines `Text.from_ansi` decodes ``ansi`` into (a text ending with a newline ends with an
    empty line)."""
    if not _decodable(ansi):
        return Text.from_ansi(ansi).split("\n", allow_blank=True)
    style = Style.null()
    lines = []
    for line in _LINES.split(ansi):
        # What Text.append does for each run (control codes stripped, a span for a styled run),
        # the line made at once.
        plain: list[str] = []
        spans: list[Span] = []
        offset = 0
        for index, part in enumerate(_SGR.split(line.rstrip("\n"))):
            if index % 2:
                style = _style_after(style, part)
            elif part:
                part = strip_control_codes(part)
                if style:
                    spans.append(Span(offset, offset + len(part), style))
                plain.append(part)
                offset += len(part)
        lines.append(Text("".join(plain), spans=spans))
    return lines
