"""Which difference goes with the failure: a setting whose values split the runs into failing and not.

Given the config diff and each run's verdict, look for an *outcome* (the run went critical; a rule
such as entropy collapse went critical on it; the same at warn or worse) that splits the runs judged
so far into a failing side and a healthy one, and a setting that separates the two sides cleanly:

- a number: every failing run lies above (or below) every healthy one (``learning_rate ≥ 0.01``);
- anything else: no value is shared by a failing and a healthy run (``loss_type = bnpo``).

A run in between (a warning when the outcome is critical) makes the split unclean, as do runs with
the same value on both sides (seeds that disagree). Seeds and settings only some runs have are never
candidates. The sentence says what goes with what, never why: "2 runs with learning_rate ≥ 0.01
went critical on entropy collapse; 3 with learning_rate ≤ 0.001 did not". When several settings
split the runs the same way, it names them all: the data cannot tell them apart.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rltop.health.findings import Finding, Level
from rltop.view.compare.diff import ConfigDiff, DiffRow, sort_value, value_key
from rltop.view.config import config_value
from rltop.view.run_view import RunView
from rltop.view.seed_groups import SEED_KEYS
from rltop.view.text.safe import visible

MAX_NAMED = 4
"""Settings named in the line when several split the runs alike (the JSON lists every one)."""


@dataclass(frozen=True)
class Outcome:
    """A way to call a run failing: which runs fail, which are healthy, which are neither."""

    phrase: str
    """What the failing runs did: ``went critical on entropy collapse``."""
    judge: Callable[[RunView], bool | None]
    """True: failing; False: healthy; None: in between (the split is then not clean)."""


@dataclass(frozen=True)
class Split:
    """A setting (or several, splitting alike) that separates the failing runs from the healthy ones."""

    keys: tuple[str, ...]
    outcome: str
    failing: tuple[str, ...]
    healthy: tuple[str, ...]
    failing_text: str
    """``learning_rate ≥ 0.01``: the failing side, as the sentence says it."""
    healthy_text: str

    @property
    def sentence(self) -> str:
        """The one line: what goes with the failure (escaped for a terminal)."""
        failing, healthy = len(self.failing), len(self.healthy)
        line = (
            f"{failing} run{'s' if failing != 1 else ''} with {self.failing_text} {self.outcome}; "
            f"{healthy} with {self.healthy_text} did not"
        )
        if len(self.keys) > 1:
            others = ", ".join(self.keys[1:MAX_NAMED])
            more = f" and {len(self.keys) - MAX_NAMED} more" if len(self.keys) > MAX_NAMED else ""
            line += f" ({others}{more} split{'s' if len(self.keys) == 2 else ''} them the same way)"
        return visible(line)


def rule_level(run: RunView, rule: str) -> Level:
    """How far ``rule`` went on ``run``, as the run's level counts it: active findings, and criticals
    that are over but not acknowledged (they latch); notes never count."""
    levels = [Level(f.level) for f in run.findings if f.rule == rule and _counts(f)]
    return max(levels, default=Level.OK)


def _counts(finding: Finding) -> bool:
    return not finding.is_note and (
        finding.active or (finding.level == Level.CRITICAL and not finding.acknowledged)
    )


def outcomes(runs: Sequence[RunView]) -> list[Outcome]:
    """The outcomes to try, in order: the run's level (critical, then warn or worse), then each rule
    that went critical on some run (most runs first), then each rule at warn or worse."""
    titles = {f.rule: f.title or f.rule for run in runs for f in run.findings if _counts(f)}
    found = [_level_outcome(Level.CRITICAL, runs), _level_outcome(Level.WARN, runs)]
    for level in (Level.CRITICAL, Level.WARN):
        reached = Counter(rule for run in runs for rule in titles if rule_level(run, rule) >= level)
        for rule, _ in sorted(reached.items(), key=lambda item: (-item[1], item[0])):
            found.append(_rule_outcome(rule, titles[rule], level))
    return found


def _level_outcome(level: Level, runs: Sequence[RunView]) -> Outcome:
    failing = [run for run in runs if run.level >= level]
    titles = Counter(
        f.title or f.rule for run in failing for f in run.findings if _counts(f) and f.level >= level
    )
    named = ", ".join(title for title, _ in titles.most_common(2))
    phrase = "went critical" if level == Level.CRITICAL else "raised warnings"

    def judge(run: RunView) -> bool | None:
        return True if run.level >= level else (False if run.level == Level.OK else None)

    return Outcome(f"{phrase} ({named})" if named else phrase, judge)


def _rule_outcome(rule: str, title: str, level: Level) -> Outcome:
    phrase = f"went critical on {title}" if level == Level.CRITICAL else f"raised {title} (warn or worse)"

    def judge(run: RunView) -> bool | None:
        reached = rule_level(run, rule)
        return True if reached >= level else (False if reached == Level.OK else None)

    return Outcome(phrase, judge)


def find_split(diff: ConfigDiff, views: Sequence[RunView]) -> Split | None:
    """The first outcome of `outcomes` that some differing setting splits cleanly (None: none does,
    or there are not two judged runs to compare). Empty runs are not judged: they are left out."""
    by_name = {view.name: view for view in views}
    judged = [name for name in diff.runs if name in by_name and not by_name[name].empty]
    candidates = [row for row in diff.rows if row.key not in SEED_KEYS and row.everywhere]
    if len(judged) < 2 or not candidates or len({by_name[name].kind for name in judged}) > 1:
        return None  # (a PPO and a GRPO run differ in every default of their trainers: no recipe)
    index = {name: position for position, name in enumerate(diff.runs)}
    for outcome in outcomes([by_name[name] for name in judged]):
        verdicts = {name: outcome.judge(by_name[name]) for name in judged}
        if None in verdicts.values() or len(set(verdicts.values())) < 2:
            continue
        failing = tuple(name for name in judged if verdicts[name])
        healthy = tuple(name for name in judged if not verdicts[name])
        sides = [
            _side_texts(row, [row.values[index[n]] for n in failing], [row.values[index[n]] for n in healthy])
            for row in candidates
        ]
        clean = [
            (row, texts)
            for row, texts in zip(candidates, sides)
            if texts is not None and _enough(row, len(failing), len(healthy), len(judged))
        ]
        if clean:
            failing_text, healthy_text = clean[0][1]
            keys = tuple(row.key for row, _ in clean)
            return Split(keys, outcome.phrase, failing, healthy, failing_text, healthy_text)
    return None


def _enough(row: DiffRow, failing: int, healthy: int, judged: int) -> bool:
    """Whether a clean split is more than one run's own value: a side of one run counts only when the
    setting is an ordered sweep (a number with three values or more: that run is at its end) or
    when just two runs are compared. Else any setting one healthy run happens to have alone (its
    save_steps) would "go with" the failure of all the others."""
    if min(failing, healthy) > 1 or judged == 2:
        return True
    return row.numeric and len({value_key(value) for value in row.values}) >= 3


def _side_texts(row: DiffRow, failing: list[Any], healthy: list[Any]) -> tuple[str, str] | None:
    """(failing side, healthy side) as the sentence says them, or None when ``row`` does not split."""
    key = row.key
    if row.numeric and len({value_key(v) for v in failing + healthy}) > 2:
        if min(failing) > max(healthy):
            return f"{key} ≥ {config_value(min(failing))}", f"{key} ≤ {config_value(max(healthy))}"
        if max(failing) < min(healthy):
            return f"{key} ≤ {config_value(max(failing))}", f"{key} ≥ {config_value(min(healthy))}"
        return None  # a number that splits only as a set (low and high fail) says nothing ordered
    if {value_key(v) for v in failing} & {value_key(v) for v in healthy}:
        return None
    return f"{key} {_choices(failing)}", f"{key} {_choices(healthy)}"


def _choices(values: list[Any]) -> str:
    """``= 0.04`` or ``= 0.04 or 0.1``: the distinct values of one side, in order."""
    distinct: dict[str, Any] = {}
    for value in sorted(values, key=sort_value):
        distinct.setdefault(value_key(value), value)
    shown = [config_value(value) for value in distinct.values()]
    return "= " + (
        " or ".join(shown) if len(shown) <= 3 else ", ".join(shown[:3]) + f" … ({len(shown)} values)"
    )
