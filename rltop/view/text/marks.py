"""How a level, a run state or a trend is shown: badges, icons and marks shared by every front end.

Levels read without colour too (NO_COLOR, colour blindness): every badge carries a mark or a word.
"""

from __future__ import annotations

from rltop.health.findings import Level

LEVEL_NAMES = {Level.OK: "ok", Level.WARN: "WARN", Level.CRITICAL: "CRIT"}
"""The badge of a level in a table row, a card, an alert or the runs list (at most 4 cells)."""
LEVEL_ICONS = {Level.OK: "●", Level.WARN: "▲", Level.CRITICAL: "✖"}
"""One-cell mark of a level."""
EMPTY_ICON = "○"
"""The mark of a run without any scalar yet (neither healthy nor not)."""

RUN_STATES = ("critical", "warn", "ok", "empty")
"""A run's state, worst first: its level, or "empty" (no scalar yet: nothing to judge)."""
STATE_SHORT = {"critical": "CRIT", "warn": "WARN", "ok": "ok", "empty": "empty"}
"""A state in a count ("3 runs: 1 CRIT 1 WARN")."""
STATE_MARKS = {"critical": "🔴 critical", "warn": "🟡 warn", "ok": "🟢 ok", "empty": "⚪ empty"}
"""A state in Markdown (GitHub renders the emoji in colour)."""

NOTE_ICON, NOTE_NAME = "ℹ", "note"
"""The badge of a note: a finding that is information, never an alarm (a plateau, a forecast)."""


def had_badge(mark: Level) -> str:
    """``had WARN`` / ``had CRIT``: a metric back to normal whose episode was not acknowledged yet."""
    return f"had {LEVEL_NAMES[mark]}" if mark > Level.OK else ""


TREND_MARKS = {"up": "▲", "down": "▼", "flat": "─"}
"""One-cell marks for a trend (`rltop.model.stats.TRENDS`)."""


def state_level(state: str) -> Level | None:
    """The level of a run state (None for "empty")."""
    return {"critical": Level.CRITICAL, "warn": Level.WARN, "ok": Level.OK}.get(state)


def level_badge(level: Level) -> str:
    """``✖ CRIT``, ``▲ WARN``, ``● ok``."""
    return f"{LEVEL_ICONS[level]} {LEVEL_NAMES[level]}"
