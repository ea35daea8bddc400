"""The ``/`` tag filter: TensorBoard-style, a case-insensitive regular expression searched in the tag."""

from __future__ import annotations

import re


def compile_tag_filter(text: str) -> re.Pattern[str] | None:
    """Compile the filter; None for an empty filter; raises re.error for a bad one."""
    return re.compile(text, re.IGNORECASE) if text else None


def matches(pattern: re.Pattern[str] | None, tag: str) -> bool:
    """Does ``tag`` pass the filter (everything passes an empty one)?"""
    return pattern is None or pattern.search(tag) is not None
