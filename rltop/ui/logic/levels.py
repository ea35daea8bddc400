"""The CSS side of a health level: the class each widget carries (no numpy here).

Badges, icons and marks are the view's (`rltop.view.text.marks`), shared with the snapshot.
"""

from __future__ import annotations

from rltop.health.findings import Level

LEVEL_CLASSES = {Level.OK: "-ok", Level.WARN: "-warn", Level.CRITICAL: "-crit"}
"""The CSS class each widget carries for its level (colours come from the theme)."""
LEVEL_KEYS = {Level.OK: "ok", Level.WARN: "warn", Level.CRITICAL: "crit"}
"""Suffix of the component classes (``metric-card--crit``...) that colour a level."""
