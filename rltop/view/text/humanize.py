"""Times, counts and rates as people read them: ``2026-11-29 21:56:48 UTC``, ``34 min ago``, ``3.5 pts/s``.

Reports print UTC so a snapshot pasted into an issue means the same thing to every reader; the
dashboard says how long ago, in steps that change at most every 10 s while nothing happens.
"""

from __future__ import annotations

from rltop.model.durations import format_duration, iso_utc, utc_text

__all__ = [
    "age_text",
    "format_duration",
    "format_rate",
    "format_staleness",
    "format_utc",
    "iso_utc",
    "plural",
]


def format_utc(timestamp: float | None) -> str:
    """``2026-11-29 21:56:48 UTC`` (``–`` for None)."""
    if timestamp is None:
        return "–"
    return utc_text(timestamp, "%Y-%m-%d %H:%M:%S UTC")


def format_staleness(seconds: float | None) -> str:
    """``34 min ago``; a point stamped after the snapshot (clock skew between hosts) says so."""
    if seconds is None:
        return "no point yet"
    if seconds < -1.0:
        return f"{format_duration(-seconds)} in the future (clock skew?)"
    return f"{format_duration(seconds)} ago"


def age_text(seconds: float | None) -> str:
    """``4 s``, then ``10 s``, ``20 s``… then minutes: a live screen changes at most every 10 s when idle."""
    if seconds is None:
        return "–"
    if 10 <= seconds < 60:
        seconds = seconds // 10 * 10
    return format_duration(seconds)


def plural(count: int, noun: str) -> str:
    """``1 run``, ``7 runs``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def format_rate(points_per_second: float) -> str:
    """``0 pts/s``, ``3.5 pts/s``, ``1.2k pts/s``."""
    if points_per_second < 0.05:
        return "0 pts/s"
    if points_per_second < 10:
        return f"{points_per_second:.1f} pts/s"
    if points_per_second < 1000:
        return f"{points_per_second:.0f} pts/s"
    return f"{points_per_second / 1000:.1f}k pts/s"
