"""Every run at a glance: how many are in each state, which one is the worst, its key values."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from rltop.health.findings import Level
from rltop.model.catalog import GROUPS
from rltop.view.metric_view import MetricView
from rltop.view.names import metric_labels
from rltop.view.run_view import RunView
from rltop.view.text.humanize import age_text
from rltop.view.text.marks import EMPTY_ICON, LEVEL_ICONS, LEVEL_NAMES, RUN_STATES
from rltop.view.text.numbers import format_short
from rltop.view.text.safe import visible
from rltop.view.text.sentences import freshness

KEY_GROUP = GROUPS[0]
"""The catalogue group of the values the TRL docs say to watch first ("Key values")."""
VALUE_LABEL_WIDTH = 16
"""Cells for the name of a key value in the overview."""


def state_counts(runs: Iterable[RunView]) -> list[tuple[str, int]]:
    """(state, number of runs) for each `RunView.state` present, worst first, empty last."""
    states = [run.state for run in runs]
    return [(state, states.count(state)) for state in RUN_STATES if state in states]


def severity(run: RunView) -> tuple[Level, Level]:
    """How badly ``run`` needs a look: its worst level, then its worst level still active (a NaN
    that is happening now before a critical episode that is over). Compared as a tuple."""
    return run.level, run.live_level


def worst_run(runs: Sequence[RunView]) -> RunView | None:
    """The run that needs a look first: the worst `severity`, then one with points, then the
    latest news."""

    def key(run: RunView) -> tuple[Level, Level, bool, float, str]:
        moment = max(run.last_point_wall_time or 0.0, run.last_change_time or 0.0)
        return (*severity(run), not run.empty, moment, run.name)

    return max(runs, key=key) if runs else None


def key_metrics(run: RunView, count: int = 3) -> list[MetricView]:
    """The 2–3 values to show for a run at a glance: the metric of its most severe live alert, then
    its "Key values" group (reward, KL...) in catalogue order."""
    chosen: list[MetricView] = []
    lead = next((alert for alert in run.alerts if alert.live and alert.finding.tag), None)
    if lead is not None:
        metric = run.metric(lead.finding.tag)
        if metric is not None:
            chosen.append(metric)
    for group, rows in run.groups:
        if group != KEY_GROUP:
            continue
        chosen.extend(row for row in rows if all(row.tag != other.tag for other in chosen))
    if not chosen:  # no key value logged (an unknown trainer): the first metrics shown
        chosen = run.rows[:count]
    return chosen[:count]


@dataclass(frozen=True)
class OverviewRow:
    """What one line shows (compared between repaints: nothing changes, nothing is drawn)."""

    name: str
    label: str
    level: Level | None
    """None for an empty run."""
    badge: str
    icon: str
    step: str
    age: str
    """``4 s ago``, ``finished 2 h ago``."""
    short_age: str
    """For narrow lines: ``4 s``, or ``finished``."""
    muted_age: bool
    stale: bool
    values: tuple[tuple[str, str], ...]
    selected: bool
    attention: bool


@lru_cache(maxsize=1024)
def _value_labels(names: tuple[str, ...]) -> dict[str, str]:
    """The overview's short metric labels for one set of tags (runs of one experiment share it,
    and the overview is redrawn every second for the ages: the labels are worked out once)."""
    return metric_labels(list(names), VALUE_LABEL_WIDTH)


def overview_values(run: RunView) -> tuple[tuple[str, str], ...]:
    """(label, last value) of the run's key metrics, as the overview line shows them."""
    labels = _value_labels(tuple(metric.name for metric in run.rows))
    return tuple(
        (visible(labels[m.name]), format_short(m.stats.last) if m.stats.count else "–")
        for m in key_metrics(run)
    )


def overview_row(
    run: RunView,
    selected: bool,
    attention: bool,
    now: float,
    values: tuple[tuple[str, str], ...] | None = None,
) -> OverviewRow:
    """The facts of one line of the runs overview (the width is applied when drawing).

    ``values``: `overview_values` of the run, when the caller kept them from an earlier call."""
    values = overview_values(run) if values is None else values
    seconds = run.age(now)
    short = "–" if seconds is None else age_text(seconds)
    age = "–" if seconds is None else f"{short} ago"
    return OverviewRow(
        name=run.name,
        label=run.label,
        level=None if run.empty else run.level,
        badge="empty" if run.empty else LEVEL_NAMES[run.level],
        icon=EMPTY_ICON if run.empty else LEVEL_ICONS[run.level],
        step="–" if run.last_step is None else f"step {run.last_step}",
        age=f"finished {age}" if run.finished else age,
        short_age="finished" if run.finished else short,
        muted_age=run.finished,
        stale=freshness(run, now)[1],
        values=values,
        selected=selected,
        attention=attention,
    )
