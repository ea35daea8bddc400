"""Which metrics get a chart of their own: the dashboard's grid and the HTML/SVG snapshot agree.

The trainer's "Key values" first, always in the same order (a chart never moves when an alert
comes or goes), then the metrics with a warning or critical finding, live ones first as the alert
strip lists them; the report adds the metrics whose only findings are notes (a plateau, a forecast).
"""

from __future__ import annotations

from collections.abc import Callable

from rltop.health.findings import Level
from rltop.view.fleet import KEY_GROUP
from rltop.view.run_view import RunView


def chart_tags(
    view: RunView, matches: Callable[[str], bool] = lambda tag: True, notes: bool = False
) -> list[str]:
    """The tags to chart, in order (``matches``: the tag filter; ``notes``: also tags with notes only)."""
    tags: list[str] = []
    for group, rows in view.groups:
        if group == KEY_GROUP:
            tags += [row.tag for row in rows if matches(row.tag)]
    findings = [alert.finding for alert in view.alerts]  # live first, worst first
    if notes:
        findings += [finding for finding in view.findings if finding.level == Level.OK]
    for finding in findings:
        tag = finding.tag
        if tag and tag not in tags and matches(tag) and view.metric(tag) is not None:
            tags.append(tag)
    if not tags:  # an unknown trainer without key values: its first metrics
        tags = [row.tag for row in view.rows if matches(row.tag)]
    return tags
