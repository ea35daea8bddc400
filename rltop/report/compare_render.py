"""``rltop diff``'s output: the comparison (and the runs grouped by a setting) in one format."""

from __future__ import annotations

import json

from rich.console import Group

from rltop.report.compare_report import (
    compare_json,
    compare_markdown,
    compare_renderables,
    groups_json,
    groups_markdown,
    groups_renderables,
)
from rltop.report.render import _console
from rltop.view.compare.comparison import Comparison
from rltop.view.compare.groups import SettingGroup


def render_comparison(comparison: Comparison, groups: list[SettingGroup], fmt: str, width: int) -> str:
    """Text (plain), Markdown or JSON of the comparison; ``groups``: the runs by a setting, if asked."""
    if fmt == "json":
        data = compare_json(comparison)
        if groups:
            data["group_by"] = groups_json(groups)
        return json.dumps(data, indent=2, ensure_ascii=True, allow_nan=False) + "\n"
    if fmt == "markdown":
        lines = ["# rltop diff", "", *compare_markdown(comparison)]
        if groups:
            lines.extend(["", *groups_markdown(groups)])
        return "\n".join(lines) + "\n"
    console = _console(width, None)
    parts = compare_renderables(comparison, console.width)
    if groups:
        parts.extend(["", *groups_renderables(groups)])
    console.print(Group(*parts))
    text: str = console.file.getvalue()  # type: ignore[attr-defined]
    return "\n".join(line.rstrip() for line in text.split("\n"))
