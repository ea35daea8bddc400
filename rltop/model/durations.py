"""Human durations, shared by the watcher, the health messages, the reports and the screen.

Kept free of numpy: the dashboard's first frame imports it before anything heavy.
"""

from __future__ import annotations

import time

MAX_WALL_TIME = 1e11
"""Seconds since the epoch beyond which a wall time is no date (1e11 s is the year 5138): a writer's
bad clock or a user's ``_timestamp`` of 1e30, which no clock can show (``time.gmtime`` raises)."""


def is_date(seconds: float) -> bool:
    """True for a wall time a clock can show (finite, within `MAX_WALL_TIME` of the epoch)."""
    return -MAX_WALL_TIME < seconds < MAX_WALL_TIME


def format_duration(seconds: float) -> str:
    """``12 s``, ``34 min``, ``5 h 3 min``, ``3 d 4 h``: a rounded-down positive duration."""
    if not is_date(seconds):
        return "an unknown time"  # NaN or absurd wall times: never an error
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


def utc_text(timestamp: float, pattern: str) -> str:
    """``timestamp`` (seconds since the epoch) formatted in UTC by ``pattern``; a wall time no clock
    can show (1e30, NaN: a writer's bad clock or a user's ``_timestamp``) is said as a number, never
    raised (``time.gmtime`` raises on them)."""
    try:
        return time.strftime(pattern, time.gmtime(timestamp))
    except (OverflowError, OSError, ValueError):
        return f"{timestamp:g} s (not a date)"


def format_gap(seconds: float) -> str:
    """A gap between points or a cadence, which may be well under a second: ``0.2 s``, ``1.5 s``,
    ``0.05 s`` (two significant digits below 10 s), then as `format_duration`. A run that logs
    every 0.2 s has a usual gap of 0.2 s, not "0 s"."""
    if seconds >= 10:
        return format_duration(seconds)
    if seconds <= 0:
        return "0 s"
    return f"{float(f'{seconds:.2g}'):g} s"


def iso_utc(timestamp: float | None) -> str | None:
    """ISO 8601 in UTC with a ``Z`` (``2026-11-29T21:56:48Z``), for JSON; None stays None."""
    if timestamp is None:
        return None
    return utc_text(timestamp, "%Y-%m-%dT%H:%M:%SZ")
