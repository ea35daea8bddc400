"""Health thresholds as data: each rule's defaults, overridden by TOML rules files.

Every rule declares its own defaults, documentation row and value kind (`rltop.health.rules`, one
registry); this module adds the keys every rule understands, reads rules files and answers
``rules[name]`` with a rule's effective `RuleParams`.

``load_rules()`` starts from the defaults and applies, in order, ``$XDG_CONFIG_HOME/rltop/rules.toml``
(``~/.config/rltop/rules.toml``) when it exists, then the file given with ``--rules``. A rules file
has one table per rule plus ``[general]``::

    [general]
    clear_fraction = 0.8

    [ratio_drift]
    warn = 1.1            # factor either side of 1.0
    persistence = "3/5"   # or [3, 5]

    [grad_norm_spike]
    critical = 100.0      # false switches a level off

Common keys of every rule:

* ``enabled`` -- false switches the rule off.
* ``warn`` / ``critical`` -- thresholds (``false`` in a rules file disables that level); ``extreme``
  where a rule has one: a single point beyond it is critical on its own.
* ``persistence`` -- ``[m, n]``: a level is entered when m of the last n points are beyond it.
  ``critical_persistence`` may differ (defaults to ``persistence``). One point beyond the critical
  threshold is enough for warn (``general.single_point_warn``).
* ``clear_fraction`` / ``clear_points`` -- hysteresis: a level clears only after ``clear_points``
  points in a row (default m) are back within ``clear_fraction`` of its threshold (default 0.8).

Anything wrong (syntax, unknown rule or key, wrong type, inconsistent thresholds) raises
`RulesError` with one line naming the file, the line and the key.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:  # Python >= 3.11
    import tomllib as _toml
except ModuleNotFoundError:  # pragma: no cover - Python 3.10 needs the tomli backport
    try:
        import tomli as _toml  # type: ignore[no-redef]
    except ModuleNotFoundError:
        _toml = None  # type: ignore[assignment]

Persistence = tuple[int, int]

# Keys every threshold rule understands (added to each rule's own defaults).
COMMON: dict[str, Any] = {
    "enabled": True,
    "persistence": (3, 5),
    "critical_persistence": None,
    "clear_fraction": None,
    "clear_points": None,
}
GENERAL: dict[str, Any] = {
    "clear_fraction": 0.8,
    "single_point_warn": True,
}
# Keys whose value may be switched off (None; ``false`` in a rules file).
NULLABLE = frozenset(
    {"warn", "critical", "extreme", "critical_persistence", "clear_fraction", "clear_points"}
)


@dataclass(frozen=True)
class RuleDoc:
    """What a rule watches, how its thresholds read, and the rule of thumb behind its critical level
    (for the rules table, which a test keeps equal to `rltop.health.table.markdown_table`)."""

    title: str
    metrics: str
    direction: str  # "above", "below", "outside" (ratio factor) or "special"
    warn: str
    critical: str
    persistence: str
    why: str  # the rule of thumb behind critical (or why the rule never is)


def _registry():
    """The rules (imported when asked: every rule module imports this one)."""
    from rltop.health import rules

    return rules


class _DefaultSettings(Mapping):
    """Every rule's built-in settings, built from the rules' own defaults when first read."""

    def __init__(self) -> None:
        self._settings: dict[str, dict[str, Any]] | None = None

    def _built(self) -> dict[str, dict[str, Any]]:
        if self._settings is None:
            self._settings = {rule.name: {**COMMON, **rule.defaults} for rule in _registry().EVERY}
        return self._settings

    def __getitem__(self, name: str) -> dict[str, Any]:
        return self._built()[name]

    def __iter__(self):
        return iter(self._built())

    def __len__(self) -> int:
        return len(self._built())


class RulesError(ValueError):
    """A rules file cannot be used; the message is one line naming the file, line and key."""


@dataclass(frozen=True)
class RuleParams:
    """The effective settings of one rule (defaults merged with every rules file)."""

    name: str
    values: Mapping[str, Any]
    general: Mapping[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    @property
    def enabled(self) -> bool:
        """False when a rules file switched the rule off."""
        return bool(self.values.get("enabled", True))

    @property
    def warn(self) -> float | None:
        """Warn threshold (None: no warn level)."""
        return self.values.get("warn")

    @property
    def critical(self) -> float | None:
        """Critical threshold (None: no critical level)."""
        return self.values.get("critical")

    @property
    def extreme(self) -> float | None:
        """Beyond this a single point is critical, with no corroboration (None: no such level)."""
        return self.values.get("extreme")

    @property
    def persistence(self) -> Persistence:
        """(m, n): m of the last n points must be beyond the warn threshold."""
        return self.values["persistence"]

    @property
    def critical_persistence(self) -> Persistence:
        """(m, n) for the critical level (defaults to `persistence`)."""
        return self.values.get("critical_persistence") or self.persistence

    @property
    def clear_fraction(self) -> float:
        """Hysteresis: a level clears once points are back within this share of its threshold."""
        own = self.values.get("clear_fraction")
        return float(self.general["clear_fraction"] if own is None else own)

    def clear_points(self, persistence: Persistence) -> int:
        """How many good points in a row clear a level entered with ``persistence``."""
        own = self.values.get("clear_points")
        return int(persistence[0] if own is None else own)


@dataclass(frozen=True)
class Rules:
    """All rule settings plus the files they came from (empty: built-in defaults only)."""

    settings: Mapping[str, Mapping[str, Any]]
    general: Mapping[str, Any]
    sources: tuple[str, ...] = field(default=())

    def __getitem__(self, name: str) -> RuleParams:
        return RuleParams(name, self.settings[name], self.general)

    @classmethod
    def defaults(cls) -> Rules:
        """The built-in thresholds, no file read (the rules, and numpy with them, are imported at
        the first look: the dashboard paints its first frame before that)."""
        return cls(_DefaultSettings(), dict(GENERAL))

    def merged(self, overrides: Mapping[str, Mapping[str, Any]], source: str) -> Rules:
        """A copy with ``overrides`` (already validated) applied."""
        settings = {name: dict(values) for name, values in self.settings.items()}
        general = dict(self.general)
        for table, values in overrides.items():
            (general if table == "general" else settings[table]).update(values)
        return Rules(settings, general, (*self.sources, source))


def user_rules_path() -> Path:
    """``$XDG_CONFIG_HOME/rltop/rules.toml``, by default ``~/.config/rltop/rules.toml``."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "rltop" / "rules.toml"


def load_rules(path: str | None = None) -> Rules:
    """Defaults, then the user's rules file if present, then ``path`` (RulesError on any problem)."""
    rules = Rules.defaults()
    user = user_rules_path()
    if user.is_file():
        rules = rules.merged(parse_rules_file(user), str(user))
    if path is not None:
        given = Path(path)
        if not given.is_file():
            raise RulesError(f"rules file {path}: not found")
        rules = rules.merged(parse_rules_file(given), str(given))
    return rules


def parse_rules_file(path: Path) -> dict[str, dict[str, Any]]:
    """Read and validate one rules file; return {table: {key: value}} in internal form."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise RulesError(f"rules file {path}: cannot read it ({error})") from None
    return parse_rules_text(text, str(path))


def parse_rules_text(text: str, source: str = "<rules>") -> dict[str, dict[str, Any]]:
    """Validate the TOML ``text`` of a rules file named ``source`` (for messages)."""
    if _toml is None:  # pragma: no cover - only on Python 3.10 without tomli
        raise RulesError(f"rules file {source}: reading TOML on Python 3.10 needs 'pip install tomli'")
    try:
        data = _toml.loads(text)
    except _toml.TOMLDecodeError as error:
        raise RulesError(_syntax_message(text, source, error)) from None
    result: dict[str, dict[str, Any]] = {}
    for table, values in data.items():
        line = _line_of(text, table, None)
        if table != "general" and table not in _registry().BY_NAME:
            known = ", ".join(["general", *_registry().BY_NAME])
            raise RulesError(f"{source}:{line}: unknown rule [{table}] (known: {known})")
        if not isinstance(values, dict):
            raise RulesError(f"{source}:{line}: {table} must be a table ([{table}]), not a value")
        result[table] = {key: _checked(table, key, value, text, source) for key, value in values.items()}
        if table != "general":
            _check_order(table, result[table], text, source)
    return result


def _checked(table: str, key: str, value: Any, text: str, source: str) -> Any:
    """One value converted to its internal type, or RulesError naming table.key and its line."""
    rule = None if table == "general" else _registry().BY_NAME[table]
    defaults = GENERAL if rule is None else {**COMMON, **rule.defaults}
    where = f"{source}:{_line_of(text, table, key)}: {table}.{key}"
    if key not in defaults:
        raise RulesError(f"{where}: unknown key (known: {', '.join(defaults)})")
    default = defaults[key]
    if value is False and (key in NULLABLE or key.partition("_")[2] in NULLABLE):  # sequence_critical
        return None
    if key.endswith("persistence"):
        return _persistence(value, where)
    if isinstance(default, bool) or key == "enabled":
        if not isinstance(value, bool):
            raise RulesError(f"{where}: expected true or false, got {value!r}")
        return value
    if (isinstance(default, int) and not isinstance(default, bool)) or key == "clear_points":
        least = 0 if key == "warmup" else 1
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise RulesError(f"{where}: expected a whole number >= {least}, got {value!r}")
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        hint = " or false" if key in NULLABLE else ""
        raise RulesError(f"{where}: expected a number{hint}, got {value!r}")
    if key == "clear_fraction" and not 0 < value <= 1:
        raise RulesError(f"{where}: must be in (0, 1], got {value!r}")
    kind = rule.value_kind if rule is not None else ""
    if kind == "share" and key in ("warn", "critical", "extreme") and not 0 <= value <= 1:
        raise RulesError(f"{where}: is a share between 0 and 1 (0.25 = 25 %), got {value!r}")
    if kind == "multiple" and key in ("warn", "critical") and value <= 1:
        raise RulesError(f"{where}: is a multiple of the recent median (5 = 5x): above 1, got {value!r}")
    negative_default = isinstance(default, (int, float)) and default < 0
    if value < 0 and key not in ("warn", "critical") and not negative_default:
        raise RulesError(f"{where}: must not be negative, got {value!r}")
    return float(value)


def _persistence(value: Any, where: str) -> Persistence:
    """``"3/5"`` or ``[3, 5]`` -> (3, 5) with 1 <= m <= n <= 1000."""
    pair: Any = value
    if isinstance(value, str):
        found = re.fullmatch(r"\s*(\d+)\s*(?:/|of)\s*(\d+)\s*", value)
        pair = (int(found.group(1)), int(found.group(2))) if found else None
    if (
        isinstance(pair, (list, tuple))
        and len(pair) == 2
        and all(isinstance(x, int) and not isinstance(x, bool) for x in pair)
        and 1 <= pair[0] <= pair[1] <= 1000
    ):
        return int(pair[0]), int(pair[1])
    raise RulesError(f'{where}: expected "m/n" or [m, n] with 1 <= m <= n <= 1000, got {value!r}')


def _check_order(table: str, values: dict[str, Any], text: str, source: str) -> None:
    """Warn and critical must not be swapped (the rule says what that means for it)."""
    rule = _registry().BY_NAME[table]
    merged = {**COMMON, **rule.defaults, **values}
    warn, critical = merged.get("warn"), merged.get("critical")
    if warn is None or critical is None:
        return
    problem = rule.swapped(warn, critical)
    if problem:
        key = "critical" if "critical" in values else "warn"
        line = _line_of(text, table, key)
        raise RulesError(f"{source}:{line}: {table}.{key}: {problem} (warn {warn}, critical {critical})")


_HEADER = re.compile(r"\s*\[\s*([^\]]+?)\s*\]")
_KEY = re.compile(r"\s*([A-Za-z0-9_.\-\"']+)\s*=")


def _line_of(text: str, table: str, key: str | None) -> int | str:
    """1-based line of ``key`` in ``[table]`` (of the table itself when key is None); "?" if unknown."""
    current: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header:
            current = header.group(1).strip().strip("\"'")
            if key is None and current == table:
                return number
            continue
        assignment = _KEY.match(line)
        if not assignment:
            continue
        name = assignment.group(1).strip("\"'")
        if current is None and (name == table or name.startswith(table + ".")):
            # A top-level value or dotted key: "ratio_drift = 3", "ratio_drift.warn = 1.1".
            if key is None or name == f"{table}.{key}":
                return number
        elif current == table and name == key:
            return number
    return "?"


def _syntax_message(text: str, source: str, error: Exception) -> str:
    """One line for a TOML syntax error, naming the line and, when we can tell, the key."""
    message = str(error)
    found = re.search(r"line (\d+)", message)
    line = int(found.group(1)) if found else None
    detail = re.sub(r"\s*\(at line \d+, column \d+\)", "", message).strip() or "invalid TOML"
    key = ""
    if line is not None:
        lines = text.splitlines()
        if 0 < line <= len(lines):
            assignment = _KEY.match(lines[line - 1])
            if assignment:
                key = f" (key {assignment.group(1)})"
    return f"{source}:{line if line is not None else '?'}: invalid TOML{key}: {detail}"
