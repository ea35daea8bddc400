"""One line of a veRL console log: Ray's prefixes and colours taken off, a metric line read strictly.

veRL's console logger (``verl/utils/logger/aggregate_logger.py``, ``concat_dict_to_str``) prints one
line per `Tracking.log` call::

    step:12 - actor/entropy:np.float64(0.41) - critic/lr(1e-4):0.100 - val-core/aime_2024/acc/mean@30:0.2

``f"{k}:{pprint.pformat(v)}"`` for every value that is a ``numbers.Number``, joined by ``" - "``
(before veRL 0.5: ``f"{k}:{v:.3f}"``). A value is Python's repr of a number: ``0.123``, ``-0.000``,
``1e-06``, ``nan``, ``inf``, ``True``, ``7``, and with numpy 2 ``np.float64(0.19)``,
``np.float32(0.33)``, ``np.int64(7)``, ``np.float64(nan)``. No value holds a ``:``; keys may
(a data source's name), and hold ``(``, ``)``, ``@``, ``.``, ``/``. So an item is split at its
*last* colon, and a piece between two ``" - "`` without a colon belongs to the next key (a key
holding ``" - "``).

The line is printed inside a Ray actor: the driver shows it behind ``(TaskRunner pid=N)`` (older:
``(main_task pid=N)``; ``, ip=…`` on another node), often in ANSI colours, and Ray glues the
next actor's line to one that did not end (``…'gemma2b',\\x1b[36m(pid=934604)\\x1b[0m …``); a
progress bar may precede it after a carriage return or on the same line (``…3.0s/it]step:2 - …``).
Model completions, warnings and the config dump share the stream and may contain ``step:`` or
"step by step": a line is a metric line only when *every* item is ``key:number`` (`metric_line`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

# Control sequences of terminals: CSI (colours, cursor moves) and OSC (titles, links).
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_PREFIX_BODY = r"\((?:[^()\r\n]{0,200} )?pid=\d+(?:, ip=[^()\s]{1,64})?\)"
_PREFIX = re.compile(_PREFIX_BODY + " ?")  # at the start of a line (colours taken off)
# Ray's prefix in colour anywhere in a line: the start of another actor's line glued to this one.
_COLOURED_PREFIX = re.compile(r"(?:\x1b\[[0-9;]*m)+" + _PREFIX_BODY + r"(?:\x1b\[[0-9;]*m)* ?")
_REPEATED = re.compile(r" \[repeated \d+x across cluster\]")  # Ray's log deduplication, at a line's end
_STEP = re.compile(r"step:(-?\d+)(?: - (.*))?$", re.S)
# (Alternatives that never overlap: a long run of digits that fails to match costs one pass.)
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_SPECIAL = re.compile(r"[+-]?(?:nan|inf|infinity)", re.I)
_CALL = re.compile(r"(?:np|numpy)\.(\w+)\((.*)\)|(Decimal|Fraction)\((.*)\)", re.S)
_NUMPY_BOOL = re.compile(r"(?:np|numpy)\.(True|False)_")
_COMPLEX = re.compile(r"\(?[-+]?[\d.e+-]*[-+]?[\d.e]*j\)?")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

OUT_OF_RANGE = "value too large for a float"
NOT_A_NUMBER = "value not a real number"


@dataclass
class MetricLine:
    """The points of one metric line: its step, (key, value) pairs, and (key, why) left out."""

    step: int
    values: list[tuple[str, float]] = field(default_factory=list)
    odd: list[tuple[str, str]] = field(default_factory=list)


def segments(line: str) -> list[tuple[str, str]]:
    """(Ray prefix, message) of each piece of output in one line of the log, colours taken off.

    The prefix is ``(TaskRunner pid=42)`` (``""`` for a line without one); the message is what the
    process printed (the one space after the prefix taken off). A coloured prefix inside the line
    starts another piece (Ray glued two processes' lines), and a carriage return too (a progress
    bar redrawn: every piece keeps the line's prefix).
    """
    pieces: list[tuple[str, str]] = []
    cuts = (
        [(m.start(), m.end(), m.group()) for m in _COLOURED_PREFIX.finditer(line)] if "pid=" in line else []
    )
    begins = ([(0, 0, "")] if not cuts or cuts[0][0] > 0 else []) + cuts
    for (_, begin, prefix), end in zip(begins, [c[0] for c in begins[1:]] + [len(line)]):
        text = line[begin:end]
        prefix = _strip(prefix).strip()
        if "\x1b" in text:
            text = _strip(text)
        if not prefix:
            found = _PREFIX.match(text)
            if found:
                prefix, text = found.group().strip(), text[found.end() :]
        for part in text.split("\r") if "\r" in text else (text,):
            pieces.append((prefix, part))
    return pieces


def _strip(text: str) -> str:
    return _ANSI.sub("", text)


def metric_line(message: str) -> MetricLine | None:
    """The metric line ``message`` is, or None when it is any other output.

    Strict: ``step:N`` then one or more ``key:value`` items, each value a number as Python or
    numpy print it (a value that is a number no float holds, or a complex number, is kept as odd),
    each key without control characters; a single item's key must not hold spaces (prose such as
    ``step:1 - the answer:42`` is no metric line).
    """
    text = message.strip()
    if not text.startswith("step:"):
        at = text.find("]step:")  # glued to a progress bar
        if at < 0:
            return None
        text = text[at + 1 :]
    if text.endswith("across cluster]"):
        at = text.rfind(" [repeated ")
        if at >= 0 and _REPEATED.fullmatch(text, at):
            text = text[:at].rstrip()
    found = _STEP.match(text)
    if found is None or not found.group(2):
        return None
    digits = found.group(1)
    line = MetricLine(int(digits) if len(digits) <= 40 else 1 << 200)  # (int() refuses 4300 digits)
    if not _items(found.group(2), line):
        return None
    if not line.values or (len(line.values) + len(line.odd) == 1 and _has_space(line.values[0][0])):
        return None
    return line


def looks_like_metric_line(message: str) -> bool:
    """True for output that starts like a metric line (``step:N - …``), read or not."""
    text = message.lstrip()
    return text.startswith("step:") and _STEP.match(text) is not None


def _items(text: str, line: MetricLine) -> bool:
    """Add the ``key:value`` items of ``text`` to ``line``; False when a piece is no item."""
    key_parts: list[str] = []
    for piece in text.split(" - "):
        head, colon, value = piece.rpartition(":")
        parsed = _value(value) if colon else None
        if parsed is None:
            if colon:
                return False  # a value that is no number: not a metric line (strict)
            key_parts.append(piece)  # a key holding " - " (a data source named "a - b")
            continue
        key = " - ".join([*key_parts, head]) if key_parts else head
        key_parts = []
        if not key or key != key.strip() or _CONTROL.search(key):
            return False
        if isinstance(parsed, str):
            line.odd.append((key, parsed))
        else:
            line.values.append((key, parsed))
    return not key_parts


def _value(text: str) -> float | str | None:
    """A printed value as a float, why it is no point (`OUT_OF_RANGE`, `NOT_A_NUMBER`), or None
    when ``text`` is not a value at all."""
    if _NUMBER.fullmatch(text) or _SPECIAL.fullmatch(text):
        return _finite_or_said(text)
    if text in ("True", "False"):
        return 1.0 if text == "True" else 0.0
    call = _CALL.fullmatch(text)
    if call is not None:
        inner = (call.group(2) if call.group(1) is not None else call.group(4)).strip()
        if len(inner) > 1 and inner[0] == inner[-1] and inner[0] in "'\"":
            inner = inner[1:-1]  # np.longdouble('0.1'), Decimal('1.5')
        if _NUMBER.fullmatch(inner) or _SPECIAL.fullmatch(inner):
            return _finite_or_said(inner)
        return NOT_A_NUMBER  # np.complex128(1+2j), Fraction(1, 3)
    found = _NUMPY_BOOL.fullmatch(text)
    if found is not None:
        return 1.0 if found.group(1) == "True" else 0.0
    if len(text) < 100 and "j" in text and _COMPLEX.fullmatch(text):
        return NOT_A_NUMBER
    return None


def _finite_or_said(text: str) -> float | str:
    number = float(text)
    if math.isinf(number) and not _SPECIAL.fullmatch(text):
        return OUT_OF_RANGE  # 1e999 or a 400-digit integer: no float holds it
    return number


def _has_space(key: str) -> bool:
    return any(c.isspace() for c in key)
