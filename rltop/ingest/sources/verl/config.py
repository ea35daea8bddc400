"""veRL's resolved config, as its console log prints it at start, made flat for the rules.

``TaskRunner.run`` (``verl/trainer/main_ppo.py``; ``main_task`` before) prints
``pprint(OmegaConf.to_container(config, resolve=True))``: a Python dict repr, keys sorted, spread
over many lines (``{'actor_rollout_ref': {'actor': {…``, continuation lines indented), each behind
the actor's Ray prefix, with other processes' lines in between and sometimes glued to one of its
lines (`rltop.ingest.sources.verl.lines.segments` separates them). `ConfigCollector` follows the lines of
the process that began the dict until its brackets close, and `parse_config` reads the text with
a tolerant reader of Python literals (a repr it does not know, ``inf``, a dump cut short: what was
read is kept). The result is flat, with dotted keys (``algorithm.adv_estimator``,
``actor_rollout_ref.actor.optim.lr``), as W&B shows a nested config.
"""

from __future__ import annotations

import ast
import math
import re
from typing import Any

from rltop.ingest.reading import step_fits

MAX_LINES = 20000  # a config dump longer than this is cut (what was read is kept)
MAX_CHARS = 4 << 20
MAX_KEYS = 20000
MAX_DEPTH = 64
# Top-level sections of veRL's PPO config: a dict printed with one of them is the run's config.
SECTIONS = frozenset({"actor_rollout_ref", "algorithm"})

_TOKEN = re.compile(
    r"""(?P<s>[bBrRuU]{0,2}'(?:[^'\\\n]|\\.)*'|[bBrRuU]{0,2}"(?:[^"\\\n]|\\.)*")"""
    r"""|(?P<p>[{}\[\]():,])|(?P<a>[^\s{}\[\]():,'"]+)|(?P<w>\s+)|(?P<x>.)""",
    re.S,
)
_OPEN, _CLOSE = "{[(", "}])"


class ConfigCollector:
    """Gathers the lines of one printed config dict, from one process, until its brackets close."""

    def __init__(self) -> None:
        self.prefix: str | None = None  # the process printing the dict (None: not collecting)
        self._lines: list[str] = []
        self._depth = 0
        self._chars = 0

    def feed(self, prefix: str, message: str) -> dict[str, Any] | None:
        """Take one piece of output; the flat config once a dict of veRL's config has closed."""
        if self.prefix is not None:
            if prefix != self.prefix:
                return None  # another process's output between the dict's lines
            if message.startswith(" ") and len(self._lines) < MAX_LINES and self._chars < MAX_CHARS:
                self._add(message)
                return self._finish() if self._depth <= 0 else None
            found = self._finish()  # the dict was cut short: keep what was printed
            if found is not None:
                return found
        if message.startswith("{'"):
            self.prefix, self._lines, self._depth, self._chars = prefix, [], 0, 0
            self._add(message)
            return self._finish() if self._depth <= 0 else None
        return None

    def peek(self) -> dict[str, Any] | None:
        """The config in the lines gathered so far, the dict still open (the log ends inside it, or
        the rest is not printed yet), or None."""
        return parse_config("\n".join(self._lines)) if self.prefix is not None else None

    def _add(self, line: str) -> None:
        self._lines.append(line)
        self._chars += len(line)
        self._depth += bracket_change(line)

    def _finish(self) -> dict[str, Any] | None:
        text = "\n".join(self._lines)
        self.prefix, self._lines = None, []
        return parse_config(text)


def bracket_change(line: str) -> int:
    """Opening minus closing brackets of ``line`` outside its string literals."""
    change = 0
    for token in _TOKEN.finditer(line):
        if token.lastgroup == "p":
            char = token.group()
            change += (char in _OPEN) - (char in _CLOSE)
    return change


def parse_config(text: str) -> dict[str, Any] | None:
    """The flat config in ``text`` (a printed dict), None when it is no veRL config."""
    tokens = [(t.lastgroup, t.group()) for t in _TOKEN.finditer(text) if t.lastgroup != "w"]
    if not tokens or tokens[0] != ("p", "{"):
        return None
    document, _ = _value(tokens, 0, 0)
    if not isinstance(document, dict) or not SECTIONS & set(document):
        return None
    flat: dict[str, Any] = {}
    _flatten(document, "", flat)
    return flat


def _value(tokens: list[tuple[str, str]], at: int, depth: int) -> tuple[Any, int]:
    """The literal starting at ``tokens[at]`` and the index after it (tolerant: never raises)."""
    if at >= len(tokens):
        return None, at
    kind, text = tokens[at]
    if kind == "p" and text in _OPEN and depth < MAX_DEPTH:
        return _container(tokens, at, depth)
    parts: list[tuple[str, str]] = []
    while at < len(tokens):
        kind, text = tokens[at]
        if kind == "p" and text in ",:}])":
            break
        if kind == "p" and text in _OPEN:  # a call in a repr (set(), Foo(x=1)): kept as text
            end, level = at, 0
            while end < len(tokens):
                level += (
                    (tokens[end][1] in _OPEN) - (tokens[end][1] in _CLOSE) if tokens[end][0] == "p" else 0
                )
                end += 1
                if level <= 0:
                    break
            parts.extend(tokens[at:end])
            at = end
            continue
        parts.append((kind, text))
        at += 1
    return _scalar(parts), at


def _container(tokens: list[tuple[str, str]], at: int, depth: int) -> tuple[Any, int]:
    opener = tokens[at][1]
    closer = _CLOSE[_OPEN.index(opener)]
    at += 1
    items: list[Any] = []
    pairs: dict[Any, Any] = {}
    while at < len(tokens):
        kind, text = tokens[at]
        if kind == "p" and text == closer:
            at += 1
            break
        if kind == "p" and text in ",:":
            at += 1
            continue
        if kind == "p" and text in _CLOSE:  # a bracket that does not match: the dump is damaged
            at += 1
            break
        value, at = _value(tokens, at, depth + 1)
        if opener == "{" and at < len(tokens) and tokens[at] == ("p", ":"):
            item, at = _value(tokens, at + 1, depth + 1)
            key = value if isinstance(value, (str, int, float, bool)) or value is None else str(value)
            pairs[key] = item
        elif opener != "{":
            items.append(value)
    return (pairs if opener == "{" else items), at


def _scalar(parts: list[tuple[str, str]]) -> Any:
    """One value: a (concatenated) string, a number, True/False/None, or else its text."""
    if not parts:
        return None
    if all(kind == "s" for kind, _ in parts):
        return "".join(_string(text) for _, text in parts)
    if len(parts) == 1 and parts[0][0] == "a":
        text = parts[0][1]
        if text in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[text]
        try:
            number = ast.literal_eval(text) if len(text) <= 100 else text
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return text  # inf, nan, an identifier
        return number if isinstance(number, (int, float)) else text
    return "".join(text for _, text in parts)


def _string(token: str) -> str:
    try:
        value = ast.literal_eval(token)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return token.strip("'\"")
    return value if isinstance(value, str) else value.decode("utf-8", "replace")


def _flatten(value: Any, prefix: str, flat: dict[str, Any]) -> None:
    """Dotted keys for nested dicts (and dicts inside lists: ``key.0.name``); lists of plain values kept."""
    if len(flat) >= MAX_KEYS:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            _flatten(item, f"{prefix}.{key}" if prefix else str(key), flat)
        return
    if isinstance(value, list):
        if all(_plain(item) for item in value):
            flat[prefix] = value
            return
        for index, item in enumerate(value):
            _flatten(item, f"{prefix}.{index}", flat)
        return
    if _plain(value):
        flat[prefix] = value


def _plain(value: Any) -> bool:
    """A value a rule can use: a string, a bool, None, a finite float, an integer of int64's range."""
    if value is None or isinstance(value, (str, bool)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, int) and step_fits(value)
