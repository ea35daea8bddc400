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


@dataclass(frozen=True)
class Finding:
    """One judgement of one rule on one tag of one run.

    ``message`` names the metric, the value, the threshold and the step; ``advice`` says what to
    try. ``step`` and ``value`` are those of the point that decided the level.

    A finding describes an *episode*: the stretch from ``first_step`` to ``last_step`` during which the
    rule stayed at warn or worse. ``active`` is False once the metric is back to normal (hysteresis
    cleared): such findings are history; a critical one keeps its tag critical ("latched") until the
    engine is told it was seen. ``title`` is the rule's short human name ("ratio drift").
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
