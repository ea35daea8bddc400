"""The runs compared, in the snapshot and ``rltop diff``: text (Rich), Markdown and JSON.

All three draw the `rltop.view.compare.comparison.Comparison`: the settings that differ, each run's verdict
beside its values, what was folded away, and the line of what goes with the failure.
"""

from __future__ import annotations

import math
from typing import Any

from rich.console import RenderableType
from rich.text import Text

from rltop.health.findings import Level
from rltop.model.values import json_number
from rltop.view.compare.comparison import GAP, Comparison
from rltop.view.compare.diff import MISSING
from rltop.view.compare.groups import SettingGroup
from rltop.view.text.cells import cell_len, pad_cells
from rltop.view.text.humanize import plural
from rltop.view.text.marks import level_badge
from rltop.view.text.safe import markdown_code, markdown_text, visible

MAX_LISTED = 12
"""Settings named on the "also differ" line (the JSON has every one)."""
MARKDOWN_SETTINGS = 8
"""Setting columns of the Markdown table."""
_LEVEL_STYLES = {Level.OK: "green", Level.WARN: "yellow", Level.CRITICAL: "bold red"}


def compare_renderables(comparison: Comparison, width: int) -> list[RenderableType]:
    """The "Compare" block of the text report: headline, table, what was folded, the summary."""
    parts: list[RenderableType] = [Text("Compare: " + comparison.headline(), style="bold")]
    if comparison.diff.rows:
        table = comparison.table(width)
        parts.append(_table_line(table.header, table.widths, style="dim"))
        for cells, level in zip(table.rows, table.levels):
            line = _table_line(cells, table.widths)
            if level is not None:  # the verdict column in the level's colour
                start = table.widths[0] + GAP
                line.stylize(_LEVEL_STYLES[level], start, start + cell_len(cells[1]))
            parts.append(line)
        if table.left_out:
            parts.append(Text(also_differ(table.left_out, "not shown at this width"), style="dim"))
    parts.append(Text(comparison.folded(), style="dim"))
    if comparison.summary:
        parts.append(Text("→ " + comparison.summary, style="bold"))
    elif comparison.no_split():
        parts.append(Text(comparison.no_split(), style="dim"))
    return parts


def also_differ(keys: list[str], why: str) -> str:
    """``also differ (117, not shown at this width; JSON lists all): beta, epsilon, … +105``."""
    shown = ", ".join(visible(key) for key in keys[:MAX_LISTED])
    more = f", … +{len(keys) - MAX_LISTED}" if len(keys) > MAX_LISTED else ""
    return f"also differ ({len(keys)}, {why}; JSON lists all): {shown}{more}"


def _table_line(cells: list[str], widths: list[int], style: str = "") -> Text:
    padded = [pad_cells(cell, cell_width) for cell, cell_width in zip(cells, widths)]
    return Text((" " * GAP).join(padded).rstrip(), style=style, no_wrap=True, overflow="crop")


def compare_markdown(comparison: Comparison) -> list[str]:
    """The "Compare" section: a table of runs by differing settings with each verdict, then the line."""
    lines = ["## Compare", "", markdown_text(comparison.headline()), ""]
    if comparison.diff.rows:
        keys = [row.key for row in comparison.diff.rows[:MARKDOWN_SETTINGS]]
        lines.append("| run | verdict | " + " | ".join(markdown_code(key) for key in keys) + " |")
        lines.append("|---|---|" + "---|" * len(keys))
        for run in comparison.runs:
            cells = [markdown_code(comparison.cell(run.name, key)) for key in keys]
            lines.append(
                f"| {markdown_code(run.display_name)} | {markdown_text(comparison.verdict(run.name))} | "
                + " | ".join(cells)
                + " |"
            )
        lines.append("")
        rest = [row.key for row in comparison.diff.rows[MARKDOWN_SETTINGS:]]
        if rest:
            lines.extend([markdown_text(also_differ(rest, "not in the table")), ""])
    lines.append(markdown_text(comparison.folded()))
    if comparison.summary:
        lines.extend(["", f"**{markdown_text(comparison.summary)}**"])
    return lines


def compare_json(comparison: Comparison | None) -> dict[str, Any]:
    """``config_diff``, ``config_summary`` and ``config_compare`` (see ``schema.json``)."""
    if comparison is None:
        return {"config_diff": {}, "config_summary": None, "config_compare": None}
    diff, split = comparison.diff, comparison.split
    return {
        "config_diff": {key: {run: _json_value(value) for run, value in values.items()}
                        for key, values in comparison.as_json().items()},
        "config_summary": comparison.summary,
        "config_compare": {
            "runs": list(diff.runs),
            "verdicts": {run.name: comparison.verdict(run.name) for run in comparison.runs},
            "equal": diff.equal,
            "ignored": list(diff.ignored),
            "without_config": list(diff.without_config),
            "seed_group": diff.seed_group.name if diff.seed_group is not None else None,
            "split": None if split is None else {
                "settings": list(split.keys), "outcome": split.outcome,
                "failing": list(split.failing), "healthy": list(split.healthy),
            },
        },
    }  # fmt: skip


def _json_value(value: Any) -> Any:
    """A config value for strict JSON: non-finite floats as ``"nan"``/``"inf"`` strings, at any depth."""
    if isinstance(value, float) and not math.isfinite(value):
        return json_number(value)
    if isinstance(value, list):
        return [_json_value(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _json_value(item) for key, item in value.items()}
    return value


def groups_renderables(groups: list[SettingGroup]) -> list[RenderableType]:
    """``learning_rate = 0.01  ✖ CRIT  2 runs: lr_1e-2, lr_5e-2``: one line per value, worst level."""
    if not groups:
        return []
    parts: list[RenderableType] = [Text(f"Grouped by {visible(groups[0].key)}:", style="bold")]
    label_width = max(cell_len(group.label) for group in groups)
    for group in groups:
        line = Text(pad_cells(group.label, label_width) + "  ")
        line.append(pad_cells(level_badge(group.level), 6), style=_LEVEL_STYLES[group.level])
        names = ", ".join(member.label for member in group.members)
        line.append(f"  {plural(len(group.members), 'run')}: {names}")
        parts.append(line)
    return parts


def groups_markdown(groups: list[SettingGroup]) -> list[str]:
    """The "Grouped by" table: value, worst level, runs."""
    if not groups:
        return []
    lines = [
        f"## Grouped by {markdown_code(groups[0].key, in_table=False)}",
        "",
        "| value | worst level | runs |",
        "|---|---|---|",
    ]
    for group in groups:
        runs = ", ".join(markdown_code(member.display_name) for member in group.members)
        lines.append(f"| {markdown_code(group.label)} | {markdown_text(level_badge(group.level))} | {runs} |")
    return lines


def groups_json(groups: list[SettingGroup]) -> dict[str, Any]:
    """``{"setting": key, "groups": [{"value", "level", "runs"}]}`` (value null: not set)."""
    return {
        "setting": groups[0].key if groups else None,
        "groups": [{"value": None if group.value is MISSING else _json_value(group.value),
                    "set": group.value is not MISSING, "level": group.level.label,
                    "runs": [member.name for member in group.members]} for group in groups],
    }  # fmt: skip
