"""What the health engine produces: levels and findings. Shared by the UI and the reports."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class Level(IntEnum):
    """Health level; ordered, so ``max(levels)`` is the worst."""

    OK = 0
    WARN = 1
    CRITICAL = 2

    @property
    def label(self) -> str:
        """Lower-case name as shown to users and written to JSON: ok, warn, critical."""
        return self.name.lower()


class Stage(IntEnum):
    """Where a rule's finding sits between cause and consequence; alerts list causes first.

    A NaN makes a run blow up, a blow-up collapses its entropy, and a collapse ends in a stall or
    in updates that change nothing: on a run with all of these, the first alert is the root cause.
    """

    CAUSE = 0  # non-finite values
    BREAKDOWN = 1  # blow-ups, drastic updates, collapses
    SYMPTOM = 2  # what the policy does about it (truncation, groups without signal, hacking)
    CONSEQUENCE = 3  # nothing learned any more, the run stopped
    NOTE = 4  # information: a plateau, a forecast


@dataclass(frozen=True)
class Finding:
    """One judgement of one rule on one tag of one run.

    ``message`` names the metric, the value, the threshold and the step; ``advice`` says what to
    try. ``step`` and ``value`` are those of the point that decided the level.

    A finding describes an *episode*: the stretch from ``first_step`` to ``last_step`` during which the
    rule stayed at warn or worse. ``active`` is False once the metric is back to normal (hysteresis
    cleared): such findings are history; a critical one keeps its tag critical ("latched") until the
    engine is told it was seen. ``title`` is the rule's short human name ("ratio drift").

    One finding covers every episode of its rule on its tag (``episodes`` counts them): ``step`` and
    ``value`` are its most extreme point over all of them (where it peaked). A finding at level OK
    is a note: information, never an alarm ("reward flat since step 1400 at its best").
    """

    level: Level
    rule: str
    run: str
    tag: str
    step: int | None
    value: float | None
    message: str
    advice: str
    first_step: int | None = None
    last_step: int | None = None
    active: bool = True
    title: str = ""
    episodes: int = 1
    stage: Stage = Stage.SYMPTOM
    acknowledged: bool = False  # over, and the user saw every episode of it
    spans: tuple[tuple[int, int], ...] = ()  # (first, last) step of each episode, oldest first
    # What other sources add (the completions the policy wrote at its step), also in ``message``.
    evidence: tuple[str, ...] = ()
    # The other tags of one incident the finding stands for (a NaN reaching six tags is one
    # finding, led by the tag that went non-finite first); ``tag`` leads.
    also: tuple[str, ...] = ()

    def covers(self, tag: str) -> bool:
        """Whether this finding is about ``tag`` (its own tag, or one of the incident's others)."""
        return tag == self.tag or tag in self.also

    @property
    def is_note(self) -> bool:
        """Information rather than an alarm (a plateau, a forecast, a solved task)."""
        return self.level == Level.OK
