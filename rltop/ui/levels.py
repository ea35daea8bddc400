"""How a health level is shown: badge, icon and CSS class (shared by every widget; no numpy here)."""

from __future__ import annotations

from rltop.health.findings import Level

LEVEL_NAMES = {Level.OK: "ok", Level.WARN: "WARN", Level.CRITICAL: "CRIT"}
"""The badge of a level, as cards, rows and the runs list show it."""
LEVEL_CLASSES = {Level.OK: "-ok", Level.WARN: "-warn", Level.CRITICAL: "-crit"}
"""The CSS class each widget carries for its level (colours come from the theme)."""
LEVEL_KEYS = {Level.OK: "ok", Level.WARN: "warn", Level.CRITICAL: "crit"}
"""Suffix of the component classes (``metric-card--crit``...) that colour a level."""
LEVEL_ICONS = {Level.OK: "●", Level.WARN: "▲", Level.CRITICAL: "✖"}
"""One-cell mark of a level, so levels read without colour too (NO_COLOR, colour blindness)."""
