"""Times and counts as people read them in a report header: ``2026-11-29 21:56:48 UTC``, ``34 min ago``.

Reports print UTC so a snapshot pasted into an issue means the same thing to every reader.
"""

from __future__ import annotations

import json
import time
from typing import Any

from rltop.model.durations import format_duration, iso_utc
from rltop.report.safe_text import visible

__all__ = ["config_value", "format_duration", "format_staleness", "format_utc", "iso_utc", "plural"]


def format_utc(timestamp: float | None) -> str:
    """``2026-11-29 21:56:48 UTC`` (``–`` for None)."""
    if timestamp is None:
        return "–"
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(timestamp))


def format_staleness(seconds: float | None) -> str:
    """``34 min ago``; a point stamped after the snapshot (clock skew between hosts) says so."""
    if seconds is None:
        return "no point yet"
    if seconds < -1.0:
        return f"{format_duration(-seconds)} in the future (clock skew?)"
    return f"{format_duration(seconds)} ago"


def plural(count: int, noun: str) -> str:
    """``1 run``, ``7 runs``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def config_value(value: Any) -> str:
    """A config value as written on the command line: strings as they are (made visible), others as JSON."""
    return visible(value) if isinstance(value, str) else json.dumps(value)
