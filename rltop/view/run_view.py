"""One run as every front end shows it: header facts, findings, and its metrics in dashboard order.

`build_run_view` turns a store entry and its `RunHealth` into a `RunView`. The snapshot renders one
per run; the dashboard keeps one per run (its header, the runs overview and the metric cards read
it) and rebuilds a `MetricView` only for the tags a batch touched (``cache``).
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from rltop.health.calibration import Calibration
from rltop.health.findings import Finding, Level
from rltop.health.rules.stall import run_finished
from rltop.model.catalog import group_tags, trainer_kind
from rltop.model.names import display_name as path_text
from rltop.model.run import Run
from rltop.model.summary import SeriesSummary
from rltop.view.alerts import AlertView, build_alerts
from rltop.view.config import config_summary, headline_config
from rltop.view.metric_view import MetricView, build_metric_view, is_stale
from rltop.view.names import metric_names
from rltop.view.text.safe import visible

if TYPE_CHECKING:  # only a type: any object with RunHealth's fields works (tests build their own)
    from rltop.health.engine import RunHealth


@dataclass
class RunView:
    """One run: facts, the engine's findings and the metric views in dashboard order."""

    name: str
    """The run's key in the store (its directory relative to the watched root): unique, exact."""
    display_name: str
    """What screens and reports call it (`rltop.view.names.run_display_names`), exact characters."""
    directory: str
    kind: str
    level: Level
    empty: bool
    finished: bool
    """The trainer finished: end-of-training summary, or its planned last step was logged."""
    last_step: int | None
    points: int
    last_point_wall_time: float | None
    last_change_time: float | None
    as_of: float
    """The moment the view was built (the snapshot's time): what `staleness` counts from."""
    config: dict[str, Any] | None
    findings: list[Finding]
    groups: list[tuple[str, list[MetricView]]]
    texts: list[str]
    """Names of the text-summary tags (``args/text_summary``...)."""
    tag_levels: dict[str, Level]
    sessions: list[tuple[str, int]] = field(default_factory=list)
    """(session folder, first step) of each ``trainer.train()`` call, oldest first (`Run.sessions`)."""
    session_table: list[tuple[str, str, int, bool]] = field(default_factory=list)
    """`Run.session_table`: (folder, directory, first step, still owns points) per session."""
    source: str = "tfevents"
    """The kind of files the run is read from (`rltop.ingest.sources`: tfevents, trainer_state)."""
    source_note: str = ""
    """What the run is read from and why, when that is worth saying (``Run.source_note``)."""
    exit_code: int | None = None
    """How the training process ended, when its source recorded it (`Run.exit_code`: W&B's exit record)."""
    has_completions: bool = False
    """The run logged completions (TRL ``log_completions``): Enter on an alert opens them."""

    @property
    def resumed_at(self) -> int | None:
        """The step the latest session began at, for a run resumed from a checkpoint."""
        return self.sessions[-1][1] if len(self.sessions) > 1 else None

    @property
    def notes(self) -> list[Finding]:
        """Findings that are information, not alarms (a plateau, a forecast, solved groups)."""
        return [finding for finding in self.findings if finding.is_note]

    @property
    def label(self) -> str:
        """The display name with control characters made visible: what a terminal may print."""
        return visible(self.display_name)

    @property
    def live_level(self) -> Level:
        """The worst level of the findings still active: a critical whose episode is over (latched
        until acknowledged) counts in `level`, not here."""
        return max((Level(f.level) for f in self.findings if f.active and not f.is_note), default=Level.OK)

    @property
    def state(self) -> str:
        """ "critical", "warn", "ok", or "empty": an empty run is ok to the engine (nothing to judge)
        but must never read as healthy."""
        return "empty" if self.empty and self.level == Level.OK else self.level.label

    @property
    def staleness(self) -> float | None:
        """Seconds from the newest point's wall time to `as_of` (None without points; negative when
        the trainer's clock runs ahead)."""
        wall = self.last_point_wall_time
        return None if wall is None else self.as_of - wall

    def age(self, now: float) -> float | None:
        """Seconds since the newest point at ``now``, as the stall rule counts them, never negative.

        The file change time stands in when there is no point yet, or when the newest point is
        stamped in the future (the trainer's clock runs ahead of ours).
        """
        moment = self.last_point_wall_time
        if moment is None or moment > now:
            moment = self.last_change_time
        return None if moment is None else max(0.0, now - moment)

    @property
    def headline_config(self) -> dict[str, Any]:
        """The headline settings of the config summary (`rltop.view.config.HEADLINE_CONFIG_KEYS`)."""
        return headline_config(self.config)

    @property
    def rows(self) -> list[MetricView]:
        """Every metric view, group after group."""
        return [row for _, rows in self.groups for row in rows]

    @cached_property
    def alerts(self) -> list[AlertView]:
        """The alert strip's lines: one per metric, live ones first (`rltop.view.alerts`)."""
        names = {row.tag: row.name for row in self.rows}
        return build_alerts(self.findings, self.tag_levels, names, self.display_name)

    def metric(self, tag: str) -> MetricView | None:
        """The view of ``tag`` (None when the run has no such series)."""
        return next((row for row in self.rows if row.tag == tag), None)

    def single_precision(self, tag: str) -> bool:
        """Whether ``tag`` holds float32 values (False for tags without a series)."""
        row = self.metric(tag)
        return row.single_precision if row is not None else False


def build_run_view(
    run: Run,
    health: RunHealth | None,
    now: float,
    display_name: str | None = None,
    cache: MutableMapping[str, MetricView] | None = None,
    summaries: MutableMapping[str, SeriesSummary] | None = None,
) -> RunView:
    """The view of one run; ``cache`` (tag -> view) keeps the metric views that did not change;
    ``summaries`` (tag -> running summary, filled here) lets a live view read each series' new
    points only (`rltop.model.summary`)."""
    names = metric_names(run.series)
    cache = {} if cache is None else cache
    for gone in [tag for tag in cache if tag not in run.series]:
        del cache[gone]
    if summaries is not None:
        for gone in [tag for tag in summaries if tag not in run.series]:
            del summaries[gone]
    groups: list[tuple[str, list[MetricView]]] = []
    for group, tags in group_tags(run.series):
        rows = []
        for tag in tags:
            view = cache.get(tag)
            if view is None or view.name != names[tag] or is_stale(view, run, health):
                summary = summaries.get(tag) if summaries is not None else None
                if summaries is not None and summary is None:  # (made only when missing, not per call)
                    summary = summaries[tag] = SeriesSummary()
                view = cache[tag] = build_metric_view(run, tag, health, names[tag], summary)
            rows.append(view)
        if rows:
            groups.append((group, rows))
    config = run.config
    empty = health.empty if health is not None else not any(len(s) for s in run.series.values())
    return RunView(
        name=run.name,
        display_name=run.name if display_name is None else display_name,
        directory=path_text(run.directory),  # a path that is not UTF-8 shows its bytes as \xNN
        kind=(health.kind if health is not None and health.kind else trainer_kind(run.series)),
        level=Level(health.level) if health is not None else Level.OK,
        empty=empty,
        finished=not empty and run_finished(run, Calibration.from_config(config)),
        last_step=run.last_step,
        points=run.scalar_count(),
        last_point_wall_time=run.last_point_wall_time,
        last_change_time=run.last_change_time,
        as_of=now,
        config=config_summary(config),
        findings=list(health.findings) if health is not None else [],
        groups=groups,
        texts=sorted(run.texts),
        tag_levels=dict(health.tag_levels) if health is not None else {},
        sessions=[(path_text(session.label), session.first_step) for session in run.sessions],
        session_table=[
            (path_text(label), path_text(folder), first, owns)
            for label, folder, first, owns in run.session_table()
        ],
        source=run.source,
        source_note=run.source_note,
        exit_code=run.exit_code,
        has_completions=bool(run.completions),
    )
