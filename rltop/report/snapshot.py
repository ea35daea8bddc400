"""The picture a snapshot prints, built once from the store and the health verdicts.

Every format (text, Markdown, JSON, CSV, SVG, HTML) renders the same `Snapshot`, so they can never
disagree about a level, a statistic or the exit code. Building it costs one pass of numpy over each
series (`series_stats`); sparklines are downsampled later, by each renderer, to its own width.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from rltop.health.findings import Finding, Level
from rltop.model.catalog import describe, group_tags
from rltop.model.names import display_name
from rltop.model.run import Run, Store
from rltop.model.stats import SeriesStats, series_stats

if TYPE_CHECKING:  # only a type: any object with RunHealth's fields works (tests build their own)
    from rltop.health.engine import RunHealth

RUN_STATES = ("critical", "warn", "ok", "empty")
FAIL_ON = {"warn": Level.WARN, "critical": Level.CRITICAL, "never": None}
"""`FAIL_ON_CHOICES` -> the lowest level that makes the exit code 1 (never: always 0)."""

# The training arguments worth seeing next to the curves: what the health rules calibrate on and
# what people change first when a run goes wrong (TRL GRPOConfig / PPOConfig, transformers).
CONFIG_KEYS = (
    "learning_rate", "lr_scheduler_type", "per_device_train_batch_size", "gradient_accumulation_steps",
    "max_grad_norm", "num_train_epochs", "max_steps", "logging_steps", "seed",
    # GRPO
    "beta", "num_generations", "num_iterations", "epsilon", "epsilon_high", "loss_type",
    "scale_rewards", "max_completion_length", "temperature",
    # PPO
    "kl_coef", "kl_estimator", "cliprange", "cliprange_value", "vf_coef", "num_ppo_epochs",
    "num_mini_batches", "response_length", "missing_eos_penalty", "total_episodes",
)  # fmt: skip


# The few settings shown in the text and Markdown headers: what the rules calibrate on and what
# people change first (the JSON keeps every `CONFIG_KEYS` entry).
HEADLINE_CONFIG_KEYS = (
    "learning_rate", "beta", "kl_coef", "num_iterations", "num_ppo_epochs", "num_mini_batches",
    "epsilon", "epsilon_high", "cliprange", "num_generations", "max_completion_length", "response_length",
    "max_grad_norm",
)  # fmt: skip


@dataclass
class MetricRow:
    """One tag of one run as every format shows it."""

    tag: str
    name: str
    """Display name: the tag without ``train/`` (kept when that would make two names equal)."""
    group: str
    stats: SeriesStats
    level: Level
    values: np.ndarray
    """All values of the series (a view, NaN included), for sparklines of any width."""
    single_precision: bool


@dataclass
class RunReport:
    """One run: header facts, the engine's findings and the metric rows in dashboard order."""

    name: str
    directory: str
    kind: str
    level: Level
    empty: bool
    last_step: int | None
    points: int
    last_point_wall_time: float | None
    staleness: float | None
    """Seconds from the newest point's wall time to the snapshot's time (None without points)."""
    config: dict[str, Any] | None
    findings: list[Finding]
    groups: list[tuple[str, list[MetricRow]]]
    texts: list[str]
    """Names of the text-summary tags (``args/text_summary``...)."""
    source: str = "tfevents"
    """The kind of files the run is read from (`rltop.ingest.sources`: tfevents, trainer_state)."""
    source_note: str = ""
    """What the run is read from and why, when that is worth saying (``Run.source_note``)."""

    @property
    def state(self) -> str:
        """ "critical", "warn", "ok", or "empty": an empty run is ok to the engine (nothing to judge)
        but must never read as healthy in a report."""
        return "empty" if self.empty and self.level == Level.OK else self.level.label

    @property
    def headline_config(self) -> dict[str, Any]:
        """The `HEADLINE_CONFIG_KEYS` part of the config summary, unset (null) ones left out."""
        config = self.config or {}
        return {key: config[key] for key in HEADLINE_CONFIG_KEYS if config.get(key) is not None}

    @property
    def rows(self) -> list[MetricRow]:
        """Every metric row, group after group."""
        return [row for _, rows in self.groups for row in rows]

    def single_precision(self, tag: str) -> bool:
        """Whether ``tag`` holds float32 values (False for tags without a series)."""
        for row in self.rows:
            if row.tag == tag:
                return row.single_precision
        return False


@dataclass
class Snapshot:
    """Everything a snapshot shows, for every run."""

    runs: list[RunReport]
    generated_at: float
    roots: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def level(self) -> Level:
        """The worst level over all runs (OK without runs)."""
        return max((run.level for run in self.runs), default=Level.OK)

    def state_counts(self) -> list[tuple[str, int]]:
        """(state, number of runs) for each `RunReport.state` present, worst first, empty last."""
        states = [run.state for run in self.runs]
        return [(state, states.count(state)) for state in RUN_STATES if state in states]

    def fails(self, fail_on: str) -> bool:
        """True when some run's level is at or above ``fail_on`` (see `FAIL_ON`): exit code 1.

        A run's level is the engine's: its active findings, plus critical episodes that are over
        (criticals latch), so a run that went critical and recovered still fails the check.
        """
        threshold = FAIL_ON[fail_on]
        return threshold is not None and self.level >= threshold


def config_summary(config: dict[str, Any] | None) -> dict[str, Any] | None:
    """The `CONFIG_KEYS` present in a run's parsed ``args/text_summary``, in that order (scalars only)."""
    if config is None:
        return None
    return {
        key: config[key]
        for key in CONFIG_KEYS
        if key in config and (config[key] is None or isinstance(config[key], (str, int, float, bool)))
    }


def display_names(tags: Iterable[str]) -> dict[str, str]:
    """Tag -> the name tables show: the catalogue key (``train/`` dropped, ``eval/``/``test/`` kept).

    When dropping the prefix would make two names equal (``train/loss`` next to ``loss``), every
    tag of the run keeps its full name, so a table never shows the same name twice.
    """
    tags = list(tags)
    names = {}
    for tag in tags:
        info = describe(tag)
        names[tag] = info.key if info.split in ("", "train") else f"{info.split}/{info.key}"
    if len(set(names.values())) < len(names):
        return {tag: tag for tag in tags}
    return names


def build_run_report(run: Run, health: RunHealth, now: float) -> RunReport:
    """The report of one run from its store entry and its `RunHealth`."""
    names = display_names(run.series)
    groups: list[tuple[str, list[MetricRow]]] = []
    for group, tags in group_tags(run.series):
        rows = []
        for tag in tags:
            series = run.series[tag]
            rows.append(
                MetricRow(
                    tag=tag,
                    name=names[tag],
                    group=group,
                    stats=series_stats(series),
                    level=health.tag_levels.get(tag, Level.OK),
                    values=series.values,
                    single_precision=series.single_precision,
                )
            )
        if rows:
            groups.append((group, rows))
    wall = run.last_point_wall_time
    return RunReport(
        name=run.name,
        directory=display_name(run.directory),  # a path that is not UTF-8 shows its bytes as \xNN
        kind=health.kind,
        level=health.level,
        empty=health.empty,
        last_step=run.last_step,
        points=run.scalar_count(),
        last_point_wall_time=wall,
        staleness=None if wall is None else now - wall,
        config=config_summary(run.config),
        findings=list(health.findings),
        groups=groups,
        texts=sorted(run.texts),
        source=run.source,
        source_note=run.source_note,
    )


def build_snapshot(
    store: Store,
    health: dict[str, RunHealth],
    now: float | None = None,
    roots: list[str] | None = None,
    problems: list[str] | None = None,
) -> Snapshot:
    """The snapshot of every run in ``store`` (sorted by name), judged by ``health`` (run -> verdict)."""
    now = time.time() if now is None else now
    runs = [build_run_report(store.runs[name], health[name], now) for name in store.sorted_names()]
    # Paths and messages name directories that need not be UTF-8: their display form, so that every
    # format (a UTF-8 file, JSON, a strict stdout) can carry them.
    return Snapshot(
        runs=runs, generated_at=now, roots=[display_name(root) for root in roots or []],
        problems=[display_name(problem) for problem in problems or []],
    )  # fmt: skip
