"""Make names and messages from event files safe to show: literal, never interpreted (every front end).

Tag names, run names and config text come from files anyone can write. Shown raw, ``\\x1b]0;...``
would retitle the user's terminal and ``\\u202e`` would reverse the rest of a line; shown through
Rich markup, ``[bold red]`` would restyle it. Human-readable reports therefore pass every such string
through `visible` (control characters become their Python escape, ``\\x1b``) and build Rich `Text`
objects, never markup strings. Markdown adds its own escaping on top (`markdown_code`,
`markdown_text`). So do stderr lines (`rltop.commands.common`) and, unless ``--raw`` is given, the
names in CSV and JSON Lines (`rltop export`, `rltop tail`, ``snapshot -f csv``). The snapshot's JSON
document keeps the exact strings (JSON escapes them).
"""

from __future__ import annotations

import re

from rltop.model.names import display_name

# Characters that must never reach a terminal as they are (the test suite checks this list against
# Python's Unicode database: every Cc, Cf, Cs, Zl and Zp character is in it):
# - C0 controls, DEL, C1 controls (escape sequences: retitling, clearing, moving the cursor);
# - format characters: bidirectional marks, embeddings, overrides and isolates (U+061C, U+200E/F,
#   U+202A-E, U+2066-9), which reorder the rest of a line; zero-width and invisible characters
#   (U+00AD, U+180E, U+200B-D, U+2060-4, U+FEFF); interlinear annotations (U+FFF9-B); the Arabic,
#   Syriac, Kaithi and Egyptian format signs; musical and shorthand format controls; tag
#   characters (U+E0000-E007F), which hide text inside what looks like an emoji or nothing;
# - the line and paragraph separators (U+2028/9): a name must never break "one line each";
# - lone surrogates (bytes of a name that was not UTF-8);
# - invisible letters that render as blank space (Hangul fillers, the combining grapheme joiner,
#   Khmer inherent vowels), with which two different names would look the same.
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\xad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2"
    "\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ud800-\udfff"
    "\ufeff\uffa0\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e007f]"
)
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
    if 0xD800 <= code <= 0xDFFF:
        return display_name(char)  # an undecodable byte of a file name: \xNN, as everywhere
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def visible(text: str) -> str:
    """``text`` with every control, format, bidi and invisible character replaced by its escape.

    The one escaping function for every human-facing line (reports, the dashboard, stderr):
    ``\\x1b``, ``\\u202e``, ``\\U000e0041``, ``\\n``, and ``\\xNN`` for a byte of a name that was not
    UTF-8. Printable text, markup brackets included, is returned unchanged: it is the caller's job
    to print it without interpretation (Rich `Text`, never markup).
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
