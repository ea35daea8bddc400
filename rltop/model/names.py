"""Names and paths as text every output can carry, whatever bytes the file system gave.

On Linux a directory name is bytes. Python hands a name that is not valid UTF-8 over as a ``str``
with lone surrogates (U+DC80..U+DCFF, one per undecodable byte: PEP 383), which a strict UTF-8
stdout, a UTF-8 file and JSON all refuse. Discovery therefore turns every run name into its
display form once, here: each undecodable byte becomes the four characters ``\\xNN`` (as Python and
``ls -b`` show it). The raw path is kept only to open files.
"""

from __future__ import annotations

import re

_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape_surrogate(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte, kept by os.fsdecode (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}"


def display_name(text: str) -> str:
    """``text`` with every undecodable byte (a lone surrogate) written as ``\\xNN``; valid text unchanged."""
    return _SURROGATE.sub(_escape_surrogate, text)
