"""What a metric card shows, computed from the store and the health verdict (no Textual here).

A `CardModel` is rebuilt only for the tags a batch touched; the card widget draws it for its
current width (the sparkline columns are downsampled there, where the width is known).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rltop.health.engine import RunHealth
from rltop.health.findings import Finding, Level
from rltop.model.catalog import MetricInfo, describe, group_tags
from rltop.model.run import Run
from rltop.model.series import Series
from rltop.model.stats import SeriesStats, series_stats
from rltop.report.safe_text import visible


@dataclass
class CardModel:
    """One metric of one run, ready to draw."""

    tag: str
    info: MetricInfo
    label: str
    """Display name (catalogue key, eval/test prefix kept), control characters made visible."""
    series: Series
    stats: SeriesStats
    level: Level = Level.OK
    findings: list[Finding] = field(default_factory=list)
    version: tuple[int, int] = (0, 0)
    """(point count, purged count) of the series when the model was built: cheap change check."""

    @property
    def group(self) -> str:
        """The catalogue group this card sits in."""
        return self.info.group


def series_version(series: Series) -> tuple[int, int]:
    """Changes whenever points are appended or a restart purges some."""
    return (len(series), series.purged)


def build_card(run: Run, tag: str, health: RunHealth | None, label: str) -> CardModel:
    """The model of one card (``label``: its display name, from `display_names`)."""
    series = run.series[tag]
    info = describe(tag)
    level = health.tag_levels.get(tag, Level.OK) if health is not None else Level.OK
    findings = health.findings_for(tag) if health is not None else []
    return CardModel(
        tag=tag,
        info=info,
        label=visible(label),
        series=series,
        stats=series_stats(series),
        level=Level(level),
        findings=list(findings),
        version=series_version(series),
    )


def ordered_tags(run: Run) -> list[tuple[str, list[str]]]:
    """The run's scalar tags grouped and ordered as the catalogue says (key values first)."""
    return [(group, tags) for group, tags in group_tags(run.series) if tags]
