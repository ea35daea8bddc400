"""Which runs a chart of one metric overlays, in which colours, with which thresholds (no Textual).

The detail screen draws the shown run, with its seed group when it has one, and the other runs
ticked in its overlay checklist (`ChartOptions.overlays`), each in a colour that stays with it while
others are unticked: nothing besides the run you look at is drawn unless it was asked for, and the
checklist's ticks are exactly what is drawn. When the group view is on, the group's ticked members
are drawn as a mean line and a band, members faint; runs outside the group are overlaid as lines.
The grid's small charts draw the shown run alone. Both get the band along the series and the
episodes of the metric's findings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rltop.health.bands import BandTrack
from rltop.health.findings import Level
from rltop.view.chart.data import Overlay
from rltop.view.chart.options import ChartOptions
from rltop.view.metric_view import series_version
from rltop.view.seed_groups import SeedGroup, group_of

if TYPE_CHECKING:
    from rltop.ui.session import Session

OTHER_COLOURS = 7
"""Colour slots for other runs ("other-1" … "other-7"): with the shown run's, 8 runs apart."""


@dataclass
class ChartSources:
    """What one chart draws."""

    main: Overlay
    others: list[Overlay] = field(default_factory=list)
    members: list[Overlay] | None = None
    band: BandTrack | None = None
    spans: list[tuple[int, int, str]] = field(default_factory=list)
    candidates: list[tuple[str, str]] = field(default_factory=list)
    """(run, display name) of every other run that logs this tag: the checklist's choices."""
    group: SeedGroup | None = None
    picked: frozenset[str] = frozenset()
    """The other runs drawn (the checklist's ticks): the picked ones, else the seed group's."""

    def version(self) -> tuple:
        """Changes whenever something drawn changes."""
        overlays = [self.main, *self.others, *(self.members or [])]
        return (
            tuple((o.run, o.color, series_version(o.series)) for o in overlays),
            len(self.band) if self.band is not None else None,
            tuple(self.spans),
        )


def metric_sources(
    session: Session, run: str, tag: str, options: ChartOptions, overlay: bool = True
) -> ChartSources | None:
    """The chart of ``tag`` in ``run`` (``overlay``: with the other runs and the seed group)."""
    store_run = session.store.runs.get(run)
    series = store_run.series.get(tag) if store_run is not None else None
    if store_run is None or series is None:
        return None
    health = session.health.get(run)
    main = Overlay(run, session.display_name(run), series, "smooth")
    sources = ChartSources(main)
    sources.band = session.bands.track(store_run, tag, health.kind if health is not None else None)
    if health is not None:
        for finding in health.findings_for(tag):
            if finding.level > Level.OK:
                colour = "crit" if finding.level == Level.CRITICAL else "warn"
                sources.spans += [(first, last, colour) for first, last in finding.spans]
    if not overlay:
        return sources
    names = [name for name in session.store.sorted_names() if name != run]
    sources.candidates = [
        (name, session.display_name(name))
        for name in names
        if len(session.store.runs[name].series.get(tag) or ())
    ]
    group = group_of(session.seed_groups(), run)
    sources.group = group
    sources.picked = overlay_picks(run, options, group) & {name for name, _ in sources.candidates}
    in_group = set(group.runs) if group is not None and options.group else set()
    members = [main] if in_group else []
    for index, (name, label) in enumerate(sources.candidates):
        if name not in sources.picked:
            continue
        other = session.store.runs[name].series[tag]
        if name in in_group:
            members.append(Overlay(name, label, other, "member"))
        else:
            sources.others.append(Overlay(name, label, other, f"other-{index % OTHER_COLOURS + 1}"))
    sources.members = members if len(members) > 1 else None
    return sources


def overlay_picks(run: str, options: ChartOptions, group: SeedGroup | None) -> frozenset[str]:
    """The other runs the chart of ``run`` draws: those ticked in its checklist, else its seed group."""
    picked = options.overlays.get(run)
    if picked is not None:
        return picked
    return frozenset(group.runs) - {run} if group is not None else frozenset()
