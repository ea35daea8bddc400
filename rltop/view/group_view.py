"""A seed group as every front end shows it: its worst level, and the spread of its key metrics.

For each key metric (the trainer's "Key values", then every metric with a warning or critical
finding in some member) the group gives the last finite value of each member, their mean, sample
standard deviation (n − 1), minimum and maximum: "reward 0.41 ± 0.05 over 3 seeds". The runs
overview shows one line per group above its members; the JSON and Markdown snapshots list the same
numbers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from rltop.health.findings import Level
from rltop.view.fleet import KEY_GROUP
from rltop.view.names import metric_labels
from rltop.view.run_view import RunView
from rltop.view.seed_groups import SeedGroup
from rltop.view.text.marks import LEVEL_ICONS, LEVEL_NAMES
from rltop.view.text.numbers import format_short
from rltop.view.text.safe import visible

SPREAD_LABEL_WIDTH = 16
"""Cells for a metric's name on a group's overview line."""


@dataclass(frozen=True)
class GroupMetric:
    """One metric over the members of a group: their last values and how far apart they are."""

    tag: str
    name: str
    values: tuple[float | None, ...]
    """Each member's last finite value (None: no finite value), in member order."""
    steps: tuple[int | None, ...]
    """The step of each of those values."""
    count: int
    mean: float | None
    std: float | None
    """Sample standard deviation (n − 1); None with fewer than two values."""
    min: float | None
    max: float | None
    single_precision: bool

    @property
    def spread_text(self) -> str:
        """``0.41 ± 0.05`` (or the one value)."""
        if self.mean is None:
            return "–"
        if self.std is None:
            return format_short(self.mean)
        return f"{format_short(self.mean)} ± {format_short(self.std, 3)}"


@dataclass
class GroupView:
    """A seed group with its members' views."""

    group: SeedGroup
    members: list[RunView]
    metrics: list[GroupMetric]

    @property
    def name(self) -> str:
        """The group's name (exact characters)."""
        return self.group.name

    @property
    def label(self) -> str:
        """The name with control characters made visible."""
        return visible(self.group.name)

    @property
    def level(self) -> Level:
        """The worst level of its members that hold points."""
        return worst_level(self.members)

    @property
    def worst(self) -> RunView:
        """The member to look at first (worst level, then the most recent news)."""
        return worst_member(self.members)


def worst_level(members: list[RunView]) -> Level:
    """The worst level of the runs that hold points (OK when none does): a group's level."""
    return max((member.level for member in members if not member.empty), default=Level.OK)


def worst_member(members: list[RunView]) -> RunView:
    """The run of a group to look at first: worst level, then one with points, then the newest."""
    return max(members, key=lambda m: (int(m.level), not m.empty, m.last_point_wall_time or 0.0))


def _last_finite(values: np.ndarray, steps: np.ndarray) -> tuple[float | None, int | None]:
    finite = np.flatnonzero(np.isfinite(values))
    if finite.size == 0:
        return None, None
    return float(values[finite[-1]]), int(steps[finite[-1]])


def key_tags(members: list[RunView]) -> list[str]:
    """The group's key metrics: "Key values" of its members, then tags with a warn/critical finding."""
    tags: list[str] = []
    for member in members:
        for group, rows in member.groups:
            if group == KEY_GROUP:
                tags += [row.tag for row in rows if row.tag not in tags]
    for member in members:
        tags += [f.tag for f in member.findings if f.tag and f.level > Level.OK and f.tag not in tags]
    return tags


def group_metric(tag: str, members: list[RunView]) -> GroupMetric | None:
    """The spread of ``tag`` over the members (None when fewer than two members log it)."""
    rows = [member.metric(tag) for member in members]
    if sum(row is not None for row in rows) < 2:
        return None
    values: list[float | None] = []
    steps: list[int | None] = []
    for row in rows:
        value, step = _last_finite(row.series.values, row.series.steps) if row is not None else (None, None)
        values.append(value)
        steps.append(step)
    finite = np.array([value for value in values if value is not None], dtype=np.float64)
    name = next(row.name for row in rows if row is not None)
    single = all(row.single_precision for row in rows if row is not None)
    if finite.size == 0:
        return GroupMetric(tag, name, tuple(values), tuple(steps), 0, None, None, None, None, single)
    std = float(np.std(finite, ddof=1)) if finite.size > 1 else None
    return GroupMetric(
        tag,
        name,
        tuple(values),
        tuple(steps),
        int(finite.size),
        float(finite.mean()),
        std if std is None or math.isfinite(std) else None,
        float(finite.min()),
        float(finite.max()),
        single,
    )


def build_group_views(groups: list[SeedGroup], views: Mapping[str, RunView]) -> list[GroupView]:
    """One view per group whose members are all known."""
    result = []
    for group in groups:
        members = [views[name] for name in group.runs if name in views]
        if len(members) < 2:
            continue
        metrics = [m for m in (group_metric(tag, members) for tag in key_tags(members)) if m is not None]
        result.append(GroupView(group, members, metrics))
    return result


@dataclass(frozen=True)
class GroupRow:
    """A group's line in the runs overview (compared between repaints like `OverviewRow`)."""

    name: str
    """The member a click shows: the worst one."""
    label: str
    level: Level
    badge: str
    icon: str
    size: int
    values: tuple[tuple[str, str], ...]
    """(metric label, ``mean ± std``) of the first key metrics."""
    selected: bool = False
    attention: bool = False
    kind: str = "seed group"
    """What the group is, in the overview's age column: "seed group", or "setting" (`config_groups`)."""
    short_kind: str = "seeds"
    """The same for narrow lines."""


def group_row(view: GroupView, count: int = 2) -> GroupRow:
    """The overview line of a group: worst level, size, and the spread of its first key metrics."""
    labels = metric_labels([metric.name for metric in view.metrics], SPREAD_LABEL_WIDTH)
    values = tuple((visible(labels[m.name]), m.spread_text) for m in view.metrics[:count])
    level = view.level
    return GroupRow(
        name=view.worst.name,
        label=view.label,
        level=level,
        badge=LEVEL_NAMES[level],
        icon=LEVEL_ICONS[level],
        size=len(view.members),
        values=values,
    )
