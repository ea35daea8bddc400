"""Seed groups in the snapshot: the JSON ``groups`` list and the Markdown "Seed groups" table.

Per group: how it was found (config or names), its runs and their seeds, its worst level, and for
each key metric the members' last finite values with their mean, sample standard deviation
(n − 1), minimum and maximum (`rltop.view.group_view`).
"""

from __future__ import annotations

from typing import Any

from rltop.model.values import json_number
from rltop.report.snapshot import Snapshot
from rltop.view.group_view import GroupMetric, GroupView
from rltop.view.text.marks import STATE_MARKS
from rltop.view.text.numbers import format_short
from rltop.view.text.safe import markdown_code, markdown_text


def groups_json(snapshot: Snapshot) -> list[dict[str, Any]]:
    """Every seed group as JSON-ready data (see ``schema.json``, ``$defs/group``)."""
    return [group_dict(group) for group in snapshot.groups]


def group_dict(group: GroupView) -> dict[str, Any]:
    """One group: members, seeds, level and the spread of each key metric."""
    return {
        "name": group.name,
        "basis": group.group.basis,
        "runs": [member.name for member in group.members],
        "display_names": [member.display_name for member in group.members],
        "seeds": list(group.group.seeds),
        "level": group.level.label,
        "metrics": {metric.tag: metric_dict(metric) for metric in group.metrics},
    }


def metric_dict(metric: GroupMetric) -> dict[str, Any]:
    """The last values of one metric over the group's runs and their statistics."""
    single = metric.single_precision
    return {
        "name": metric.name,
        "count": metric.count,
        # Statistics of float32 values are computed in float64: their digits are real.
        "mean": json_number(metric.mean),
        "std": json_number(metric.std),
        "min": json_number(metric.min, single),
        "max": json_number(metric.max, single),
        "values": [json_number(value, single) for value in metric.values],
        "steps": list(metric.steps),
    }


def groups_markdown(snapshot: Snapshot) -> list[str]:
    """The "Seed groups" section (no lines when there is no group)."""
    if not snapshot.groups:
        return []
    lines = [
        "## Seed groups",
        "",
        "| group | runs | level | metric | last: mean ± std | min … max |",
        "|---|---|---|---|--:|--:|",
    ]
    for group in snapshot.groups:
        runs = ", ".join(markdown_code(member.display_name) for member in group.members)
        head = f"| {markdown_code(group.name)} | {runs} | {STATE_MARKS[group.level.label]} "
        if not group.metrics:
            lines.append(head + "| | | |")
        for index, metric in enumerate(group.metrics):
            prefix = head if index == 0 else "| | | "
            spread = "–" if metric.min is None else f"{format_short(metric.min)} … {format_short(metric.max)}"
            lines.append(
                f"{prefix}| {markdown_code(metric.name)} | {markdown_text(_spread(metric))} | {spread} |"
            )
    return lines


def _spread(metric: GroupMetric) -> str:
    """``0.41 ± 0.05 (3 runs)``."""
    return f"{metric.spread_text} ({metric.count} run{'s' if metric.count != 1 else ''})"
