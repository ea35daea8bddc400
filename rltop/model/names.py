"""Names and paths as text every output can carry, whatever bytes the file system gave.

On Linux a directory name is bytes. Python hands a name that is not valid UTF-8 over as a ``str``
with lone surrogates (U+DC80..U+DCFF, one per undecodable byte: PEP 383), which a strict UTF-8
stdout, a UTF-8 file and JSON all refuse. Discovery therefore turns every run name into its
display form once, here: each undecodable byte becomes the four characters ``\\xNN`` (as Python and
``ls -b`` show it). The raw path is kept only to open files.

`display_message` puts display names into a finding's message (a stall names its run by path).
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


def display_message(message: str, tag: str, metric: str, run: str, run_name: str) -> str:
    """A finding's message in display names: its leading ``tag`` becomes ``metric`` (when given),
    and in a run-wide message (a stall) ``run <path>`` becomes ``run <run_name>``."""
    if tag and metric and message.startswith(tag):
        return metric + message[len(tag) :]
    if not tag and run_name and run and f"run {run} " in message:
        return message.replace(f"run {run} ", f"run {run_name} ", 1)
    return message
