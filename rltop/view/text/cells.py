"""Terminal cells of a string: CJK and most emoji take two, combining marks none.

Names from logs may hold any character; columns only line up when text is measured and padded in
cells, not in characters. This follows the same Unicode data as Rich and Textual (East Asian Width
W/F = 2 cells, combining and format characters = 0), without importing them: the view layer stays
free of screen libraries.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

_ZERO_WIDTH_CATEGORIES = frozenset({"Mn", "Me", "Mc", "Cf"})


@lru_cache(maxsize=4096)
def char_cells(char: str) -> int:
    """Cells one character takes: 0, 1 or 2 (controls 0: they are escaped before display anyway)."""
    code = ord(char)
    if code < 0x300:  # ASCII and Latin: the common case, without a table lookup
        return 0 if code < 0x20 or 0x7F <= code < 0xA0 else 1
    category = unicodedata.category(char)
    if category in _ZERO_WIDTH_CATEGORIES or category in ("Zl", "Zp"):
        return 0
    if 0x1F3FB <= code <= 0x1F3FF:  # skin-tone modifiers join the emoji before them
        return 0
    if category == "Cn":
        return 1
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def cell_len(text: str) -> int:
    """Cells ``text`` takes on a terminal."""
    if text.isascii():
        return len(text)
    return sum(char_cells(char) for char in text)


def cut_cells(text: str, cells: int) -> str:
    """The longest prefix of ``text`` that fits ``cells`` (a wide character is never split)."""
    if cell_len(text) <= cells:
        return text
    used = 0
    for index, char in enumerate(text):
        used += char_cells(char)
        if used > cells:
            return text[:index]
    return text


def cut_cells_left(text: str, cells: int) -> str:
    """The longest suffix of ``text`` that fits ``cells``."""
    if cell_len(text) <= cells:
        return text
    used = 0
    for index in range(len(text) - 1, -1, -1):
        used += char_cells(text[index])
        if used > cells:
            return text[index + 1 :]
    return text


def pad_cells(text: str, cells: int, align: str = "left") -> str:
    """``text`` padded with spaces to ``cells`` (left- or right-aligned); longer text is left as is."""
    missing = cells - cell_len(text)
    if missing <= 0:
        return text
    return text + " " * missing if align == "left" else " " * missing + text
