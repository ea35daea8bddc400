"""One metric of one run as every front end shows it: a dashboard card and a snapshot row alike.

A `MetricView` is built once from the run's series and its health verdict; the card widget, the
text table, Markdown, JSON and CSV all read the same fields, so a card and a row of the same tag
cannot disagree about its name, level or numbers. Sparkline columns are downsampled later, by each
renderer, to the width it has.
"""

from __future__ import annotations

from dataclasses import InitVar, dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from rltop.health.findings import Finding, Level
from rltop.model.catalog import MetricInfo, describe
from rltop.model.downsample import sparkline_values
from rltop.model.run import Run
from rltop.model.series import Series
from rltop.model.stats import SeriesStats, series_stats
from rltop.model.summary import SeriesSummary
from rltop.view.text.safe import visible

if TYPE_CHECKING:  # only a type: any object with RunHealth's fields works (tests build their own)
    from rltop.health.engine import RunHealth


@dataclass
class MetricView:
    """One tag of one run, ready to draw or print."""

    tag: str
    name: str
    """Display name (`rltop.view.names.metric_names`): the tag without ``train/``, exact characters."""
    info: MetricInfo
    series: Series
    stats_given: InitVar[SeriesStats | None] = None
    """Statistics already computed (otherwise `stats` computes them on first use)."""
    level: Level = Level.OK
    findings: list[Finding] = field(default_factory=list)
    mark: Level = Level.OK
    """Worst episode of this metric the user has not acknowledged (`RunHealth.marks`): a card that is
    back to normal keeps it ("had CRIT") until `a`, so a blow-up never goes unseen."""
    version: tuple[int, int] = (0, 0)
    """(point count, purged count) of the series when the view was built: a cheap change check."""
    band: tuple[float | None, ...] = (None, None, None, None)
    """(warn_low, warn_high, crit_low, crit_high) of the rules on this tag (`RunHealth.band`): the
    sparkline's scale never makes noise far under them look like a swing (`rltop.view.chart.spark`)."""
    summary: SeriesSummary | None = field(default=None, repr=False, compare=False)
    """The live series' running summary (the dashboard keeps one per series): statistics and
    sparkline columns at a cost that does not grow with the history. None: read the series."""
    _stats: SeriesStats | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self, stats_given: SeriesStats | None) -> None:
        self._stats = stats_given

    @property
    def stats(self) -> SeriesStats:
        """The series' statistics at `version`, computed when first asked for: a live batch rebuilds
        the views of every tag it touched, and only the cards on screen read their numbers."""
        if self._stats is None:
            summary = self.summary
            self._stats = series_stats(self.series) if summary is None else summary.stats(self.series)
        return self._stats

    def columns(self, width: int) -> np.ndarray:
        """Sparkline columns for ``width`` cells (`rltop.model.downsample.sparkline_values`)."""
        if self.summary is None:
            return sparkline_values(self.series.values, width)
        return self.summary.columns(self.series, width)

    @property
    def label(self) -> str:
        """The display name with control characters made visible: what a terminal may print."""
        return visible(self.name)

    @property
    def group(self) -> str:
        """The catalogue group this metric sits in."""
        return self.info.group

    @property
    def values(self) -> np.ndarray:
        """All values of the series (a view, NaN included), for sparklines of any width."""
        return self.series.values

    @property
    def single_precision(self) -> bool:
        """Whether the values were logged as float32."""
        return self.series.single_precision


def series_version(series: Series) -> tuple[int, int]:
    """Changes whenever points are appended or a restart purges some."""
    return (len(series), series.purged)


def build_metric_view(run: Run, tag: str, health: RunHealth | None, name: str,
                      summary: SeriesSummary | None = None) -> MetricView:  # fmt: skip
    """The view of one tag (``name``: its display name, from `metric_names`; ``summary``: the
    series' running summary, when the caller keeps one)."""
    series = run.series[tag]
    level = health.tag_levels.get(tag, Level.OK) if health is not None else Level.OK
    findings = health.findings_for(tag) if health is not None else []
    mark = _mark(health, tag)
    return MetricView(
        tag=tag,
        name=name,
        info=describe(tag),
        series=series,
        level=Level(level),
        findings=list(findings),
        mark=mark,
        version=series_version(series),
        band=_band(health, tag),
        summary=summary,
    )


def _band(health: RunHealth | None, tag: str) -> tuple[float | None, ...]:
    band = getattr(health, "band", None)  # test doubles of RunHealth may have no bands
    return tuple(band(tag)) if band is not None else (None, None, None, None)


def _mark(health: RunHealth | None, tag: str) -> Level:
    marks = getattr(health, "marks", None) or {}  # test doubles of RunHealth may have no marks
    return Level(marks.get(tag, Level.OK))


def is_stale(view: MetricView, run: Run, health: RunHealth | None) -> bool:
    """Does ``view`` need rebuilding (new points, a restart, a new level or new findings)?"""
    series = run.series.get(view.tag)
    if series is None or view.series is not series or view.version != series_version(series):
        return True
    if health is None:
        return view.level != Level.OK or bool(view.findings)
    if view.mark != _mark(health, view.tag):
        return True
    return view.level != health.tag_levels.get(view.tag, Level.OK) or view.findings != health.findings_for(
        view.tag
    )
