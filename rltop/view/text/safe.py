"""Make names and messages from event files safe to show: literal, never interpreted (every front end).

Tag names, run names and config text come from files anyone can write. Shown raw, ``\\x1b]0;...``
would retitle the user's terminal and ``\\u202e`` would reverse the rest of a line; shown through
Rich markup, ``[bold red]`` would restyle it. Human-readable reports therefore pass every such string
through `visible` (control characters become their Python escape, ``\\x1b``; it lives in
`rltop.model.names`, where the alerts use it too) and build Rich `Text` objects, never markup
strings. Markdown adds its own escaping on top (`markdown_code`, `markdown_text`). So do stderr
lines (`rltop.commands.common`) and, unless ``--raw`` is given, the names in CSV and JSON Lines
(`rltop export`, `rltop tail`, ``snapshot -f csv``). The snapshot's JSON document keeps the exact
strings (JSON escapes them).
"""

from __future__ import annotations

import re

from rltop.model.names import visible

__all__ = ["markdown_code", "markdown_text", "visible"]

# Characters that start inline Markdown/GFM syntax or HTML anywhere in a line (emphasis, code, links,
# raw HTML, entities, table pipes, strikethrough, GitHub math). Block syntax (#, -, +) only acts at the
# start of a line, and every line we write starts with our own text.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&$])")


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
