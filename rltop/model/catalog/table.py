"""A framework's name table: the metric names it logs, each naming the concept it measures."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Name:
    """One spelling of a concept (a key, without any ``train/``-style prefix); it may reword the
    concept's title, meaning or advice for its framework."""

    key: str
    concept: str
    title: str | None = None
    meaning: str | None = None
    advice: str | None = None


@dataclass(frozen=True)
class Family:
    """Spellings matched by a pattern whose ``f`` group names a member (``rewards/<f>/mean``)."""

    pattern: re.Pattern[str]
    concept: str
    title: str | None = None
    meaning: str | None = None
    advice: str | None = None


@dataclass(frozen=True)
class NameTable:
    """Everything rltop knows of one framework's names.

    ``kinds``: (pattern, trainer kind) of names only one trainer logs, counted to tell the trainer
    from the tags alone ("PPO", "GRPO").
    """

    framework: str
    names: tuple[Name, ...]
    families: tuple[Family, ...] = ()
    kinds: tuple[tuple[re.Pattern[str], str], ...] = ()
