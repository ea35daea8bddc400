"""Names and paths as text every output can carry, whatever bytes the file system gave.

On Linux a directory name is bytes. Python hands a name that is not valid UTF-8 over as a ``str``
with lone surrogates (U+DC80..U+DCFF, one per undecodable byte: PEP 383), which a strict UTF-8
stdout, a UTF-8 file and JSON all refuse. Discovery therefore turns every run name into its
display form once, here: each undecodable byte becomes the four characters ``\\xNN`` (as Python and
``ls -b`` show it). The raw path is kept only to open files.

Names, tags and messages also come from files anyone can write. Shown raw, ``\\x1b]0;...`` would
retitle the user's terminal and ``\\u202e`` would reverse the rest of a line, on a terminal as in a
chat message. `visible` is the one function that makes such text safe to show: every control,
format, bidi and invisible character becomes its escape. The terminal front ends
(`rltop.view.text.safe`) and every alert channel (`rltop.alerts.payload`) use it.
`display_message` puts display names into a finding's message (a stall names its run by path).
"""

from __future__ import annotations

import re

_SURROGATE = re.compile("[\ud800-\udfff]")

# Characters that must never reach a terminal or a notification as they are (the test suite checks
# this list against Python's Unicode database: every Cc, Cf, Cs, Zl and Zp character is in it):
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


def _escape_surrogate(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte, kept by os.fsdecode (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}"


def display_name(text: str) -> str:
    """``text`` with every undecodable byte (a lone surrogate) written as ``\\xNN``; valid text unchanged."""
    return _SURROGATE.sub(_escape_surrogate, text)


def _escape_char(match: re.Match[str]) -> str:
    char = match.group(0)
    short = _SHORT_ESCAPES.get(char)
    if short is not None:
        return short
    code = ord(char)
    if 0xD800 <= code <= 0xDFFF:
        return _escape_surrogate(match)  # an undecodable byte of a file name: \xNN, as everywhere
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def visible(text: str) -> str:
    """``text`` with every control, format, bidi and invisible character replaced by its escape.

    The one escaping function for every human-facing text (reports, the dashboard, stderr, alerts):
    ``\\x1b``, ``\\u202e``, ``\\U000e0041``, ``\\n``, and ``\\xNN`` for a byte of a name that was not
    UTF-8. Printable text, markup brackets included, is returned unchanged, and so is text that is
    already visible (the function is idempotent): it is the caller's job to show it without
    interpretation (Rich `Text`, never markup; HTML-escaped where a server reads HTML).
    """
    return _UNSAFE.sub(_escape_char, text)


def display_message(message: str, tag: str, metric: str, run: str, run_name: str) -> str:
    """A finding's message in display names: its leading ``tag`` becomes ``metric`` (when given),
    and in a run-wide message (a stall) ``run <path>`` becomes ``run <run_name>``."""
    if tag and metric and message.startswith(tag):
        return metric + message[len(tag) :]
    if not tag and run_name and run and f"run {run} " in message:
        return message.replace(f"run {run} ", f"run {run_name} ", 1)
    return message
