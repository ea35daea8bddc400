"""Runs grouped by one setting (learning rate, beta, loss type…), each group with its worst level.

The runs overview can group its lines by a setting that differs between the runs (``b`` cycles
through them): one line per value, ``learning_rate = 0.01 · ✖ CRIT · 2 runs``, then that value's
runs. Seeds are never a setting to group by: runs that differ only in their seed are a seed group
already, and stay one (with its band) inside the group of their shared value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rltop.health.findings import Level
from rltop.view.compare.diff import MISSING, ConfigDiff, sort_value, value_key
from rltop.view.config import config_value
from rltop.view.group_view import GroupRow, group_metric, key_tags, worst_level, worst_member
from rltop.view.names import metric_labels
from rltop.view.run_view import RunView
from rltop.view.seed_groups import SEED_KEYS
from rltop.view.text.marks import LEVEL_ICONS, LEVEL_NAMES
from rltop.view.text.safe import visible

NOT_SET = "not set"
"""What a group of runs whose config lacks the setting (or that logged no config) is called."""


class UnknownSetting(ValueError):
    """A setting to group by that does not differ between the runs (or is a seed)."""


def group_settings(diff: ConfigDiff) -> list[str]:
    """The settings the runs can be grouped by: those that differ, seeds left out."""
    return [row.key for row in diff.rows if row.key not in SEED_KEYS]


def check_setting(diff: ConfigDiff, key: str) -> None:
    """UnknownSetting with a one-line reason unless the runs can be grouped by ``key``."""
    if key in SEED_KEYS:
        raise UnknownSetting(f"{key}: runs that differ only in their seed are grouped already (seed groups)")
    choices = group_settings(diff)
    if key not in choices:
        offered = ", ".join(choices[:8]) + (" …" if len(choices) > 8 else "")
        reason = f"settings that differ: {offered}" if choices else "no setting differs between these runs"
        raise UnknownSetting(f"{visible(key)}: not a setting that differs between the runs ({reason})")


@dataclass
class SettingGroup:
    """The runs that share one value of a setting."""

    key: str
    value: Any
    """`MISSING` for runs without the setting."""
    members: list[RunView]

    @property
    def label(self) -> str:
        """``learning_rate = 0.01`` (control characters made visible)."""
        shown = NOT_SET if self.value is MISSING else config_value(self.value)
        return visible(f"{self.key} = {shown}")

    @property
    def level(self) -> Level:
        """The worst level of the members that hold points."""
        return worst_level(self.members)

    @property
    def worst(self) -> RunView:
        """The member a click on the group's line shows: worst level, then most recent news."""
        return worst_member(self.members)


def group_by_setting(
    views: Sequence[RunView], configs: Mapping[str, Mapping[str, Any] | None], key: str
) -> list[SettingGroup]:
    """The runs in groups of equal ``key``, groups in value order (numbers numerically), members in
    the order given."""
    groups: dict[str, SettingGroup] = {}
    for view in views:
        value = (configs.get(view.name) or {}).get(key, MISSING)
        groups.setdefault(value_key(value), SettingGroup(key, value, [])).members.append(view)
    return sorted(groups.values(), key=lambda group: sort_value(group.value))


def setting_group_row(group: SettingGroup, count: int = 2) -> GroupRow:
    """The overview line of a setting group: its value, worst level, size and the spread of its
    first key metrics over its runs (when two or more log them)."""
    metrics = [m for m in (group_metric(tag, group.members) for tag in key_tags(group.members)) if m]
    labels = metric_labels([metric.name for metric in metrics], 16)
    values = tuple((visible(labels[m.name]), m.spread_text) for m in metrics[:count])
    level = group.level
    return GroupRow(
        name=group.worst.name,
        label=group.label,
        level=level,
        badge=LEVEL_NAMES[level],
        icon=LEVEL_ICONS[level],
        size=len(group.members),
        values=values,
        kind="setting",
        short_kind="set",
    )
