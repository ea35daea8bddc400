"""The alert strip's lines: one per metric, what matters now first.

A metric's findings (its current episode, its worst past one, several rules) fold into one
`AlertView`: the most severe *live* one leads, the others are counted ("2 episodes"). Live means
active, or a critical episode that is over but not acknowledged yet (latched: the tag is still
critical). What is over and seen is history: shown after everything live, muted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rltop.health.findings import Finding, Level
from rltop.model.names import display_message


@dataclass(frozen=True)
class AlertView:
    """One line of the alert strip: a metric (or a run-wide rule such as stall) and its findings."""

    finding: Finding
    """The finding the line shows: the most severe live one, else the most severe past one."""
    others: tuple[Finding, ...]
    """The metric's other warn/critical findings, folded into this line."""
    live: bool
    metric: str
    """The metric's display name ("" for a run-wide finding)."""
    run_name: str = ""
    """The run's display name: a run-wide message (a stall) says it instead of the run's path."""

    @property
    def key(self) -> tuple[str, str]:
        """What identifies "the same alert" across updates: the tag (or the rule of a run-wide one)."""
        return (self.finding.tag, "" if self.finding.tag else self.finding.rule)

    @property
    def level(self) -> Level:
        """The level of the finding shown."""
        return Level(self.finding.level)

    @property
    def is_note(self) -> bool:
        """Information, never an alarm (a plateau, a forecast, groups that are solved)."""
        return self.finding.is_note

    @property
    def episodes(self) -> int:
        """How many episodes the line stands for (the engine folds a rule's episodes per tag)."""
        return sum(f.episodes for f in (self.finding, *self.others))

    @property
    def fold_note(self) -> str:
        """``(3 episodes)`` when one rule found several episodes, ``(2 findings)`` for several rules."""
        rules = {self.finding.rule, *(f.rule for f in self.others)}
        if len(rules) > 1:
            return f"({1 + len(self.others)} findings)"
        return f"({self.episodes} episodes)" if self.episodes > 1 else ""

    @property
    def message(self) -> str:
        """The finding's message in display names: its leading tag becomes the metric's name, the
        run's path (in a run-wide message such as a stall) the run's."""
        finding = self.finding
        return display_message(finding.message, finding.tag, self.metric, finding.run, self.run_name)


def is_live(finding: Finding, tag_levels: Mapping[str, Level]) -> bool:
    """Active, or a critical that is over but still latched (its tag is still critical)."""
    if finding.active:
        return True
    return Level(finding.level) == Level.CRITICAL and tag_levels.get(finding.tag) == Level.CRITICAL


def build_alerts(
    findings: Sequence[Finding],
    tag_levels: Mapping[str, Level],
    names: Mapping[str, str],
    run_name: str = "",
) -> list[AlertView]:
    """The alert lines of a run: live ones worst first, then history worst first (engine order kept),
    then the notes (information, one line each)."""
    grouped: dict[tuple[str, str], list[Finding]] = {}
    notes = []
    for finding in findings:
        if finding.is_note:
            notes.append(AlertView(finding, (), False, names.get(finding.tag, finding.tag), run_name))
        else:
            grouped.setdefault((finding.tag, "" if finding.tag else finding.rule), []).append(finding)
    alerts = []
    for members in grouped.values():
        live = [f for f in members if is_live(f, tag_levels)]
        lead = max(live or members, key=lambda f: int(f.level))  # max keeps the first of equals
        others = tuple(f for f in members if f is not lead)
        alerts.append(AlertView(lead, others, bool(live), names.get(lead.tag, lead.tag), run_name))
    order = {id(f): index for index, f in enumerate(findings)}
    return sorted(alerts, key=lambda a: (not a.live, -int(a.level), order[id(a.finding)])) + notes
