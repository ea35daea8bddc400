"""Times and counts as people read them in a report header: ``2026-11-29 21:56:48 UTC``, ``34 min ago``.

Reports print UTC so a snapshot pasted into an issue means the same thing to every reader.
"""

from __future__ import annotations

import json
import time
from typing import Any

from rltop.report.safe_text import visible


def format_utc(timestamp: float | None) -> str:
    """``2026-11-29 21:56:48 UTC`` (``–`` for None)."""
    if timestamp is None:
        return "–"
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(timestamp))


def iso_utc(timestamp: float | None) -> str | None:
    """ISO 8601 in UTC with a ``Z`` (``2026-11-29T21:56:48Z``), for JSON; None stays None."""
    if timestamp is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(timestamp))


def format_duration(seconds: float) -> str:
    """``12 s``, ``34 min``, ``5 h 3 min``, ``3 d 4 h``: a rounded-down positive duration."""
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes = seconds // 60
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h" if hours else f"{days} d"


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
