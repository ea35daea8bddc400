"""Make names and messages from event files safe to show: literal, never interpreted (every front end).

Tag names, run names and config text come from files anyone can write. Shown raw, ``\\x1b]0;...``
would retitle the user's terminal and ``\\u202e`` would reverse the rest of a line; shown through
Rich markup, ``[bold red]`` would restyle it. Human-readable reports therefore pass every such string
through `visible` (control characters become their Python escape, ``\\x1b``) and build Rich `Text`
objects, never markup strings. Markdown adds its own escaping on top (`markdown_code`,
`markdown_text`). Data formats (JSON, CSV) keep the exact strings and rely on their own quoting.
"""

from __future__ import annotations

import re

# C0 controls, DEL and C1 controls; bidirectional overrides/isolates and zero-width characters,
# which change how the *rest* of a line is displayed; the line and paragraph separators.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")
_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# Characters that start inline Markdown/GFM syntax or HTML anywhere in a line (emphasis, code, links,
# raw HTML, entities, table pipes, strikethrough, GitHub math). Block syntax (#, -, +) only acts at the
# start of a line, and every line we write starts with our own text.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&$])")


def _escape_char(match: re.Match[str]) -> str:
    char = match.group(0)
    short = _SHORT_ESCAPES.get(char)
    if short is not None:
        return short
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with every control, bidi and zero-width character replaced by its escape (``\\x1b``).

    Printable text, markup brackets included, is returned unchanged: it is the caller's job to
    print it without interpretation (Rich `Text`, never markup).
    """
    return _UNSAFE.sub(_escape_char, text)


def markdown_text(text: str) -> str:
    """Prose for a Markdown table cell or paragraph: visible, punctuation escaped, one line."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", visible(text))


def markdown_code(text: str, in_table: bool = True) -> str:
    """A Markdown code span showing ``text`` literally (in a GFM table cell when ``in_table``).

    The fence is one backtick longer than the longest backtick run inside (CommonMark), padded
    with spaces when the text starts or ends with a backtick. In a table ``|`` is escaped even
    inside the span: GFM splits table cells before it parses code spans, and drops the backslash.
    """
    shown = visible(text)
    if in_table:
        shown = shown.replace("|", "\\|")
    longest = max((len(run) for run in re.findall("`+", shown)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if shown.startswith("`") or shown.endswith("`") or not shown.strip() else ""
    return f"{fence}{pad}{shown}{pad}{fence}"
