"""The picture a snapshot prints, built once from the store and the health verdicts.

Every format (text, Markdown, JSON, CSV, SVG, HTML) renders the same `Snapshot` of `RunView`s (the
model the dashboard draws too), so they can never disagree about a level, a statistic or the exit
code. Building it costs one pass of numpy over each series; sparklines are downsampled later, by
each renderer, to its own width.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rltop.health.findings import Level
from rltop.model.names import display_name
from rltop.model.run import Store
from rltop.view.compare.comparison import Comparison, compare_runs
from rltop.view.fleet import state_counts
from rltop.view.group_view import GroupView, build_group_views
from rltop.view.names import store_display_names
from rltop.view.run_view import RunView, build_run_view
from rltop.view.seed_groups import find_seed_groups

if TYPE_CHECKING:  # only a type: any object with RunHealth's fields works (tests build their own)
    from rltop.health.engine import RunHealth
    from rltop.health.settings import Rules

FAIL_ON = {"warn": Level.WARN, "critical": Level.CRITICAL, "never": None}
"""`FAIL_ON_CHOICES` -> the lowest level that makes the exit code 1 (never: always 0)."""


@dataclass
class Snapshot:
    """Everything a snapshot shows, for every run."""

    runs: list[RunView]
    generated_at: float
    roots: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    groups: list[GroupView] = field(default_factory=list)
    """Seed groups among the runs, with the spread of their key metrics (`rltop.view.group_view`)."""
    store: Store | None = None
    """The runs themselves, for the charts of the HTML and SVG reports (None: no charts)."""
    rules: Rules | None = None
    """The rules the verdicts used: the charts draw their thresholds."""
    comparison: Comparison | None = None
    """The runs compared (config diff, verdicts, the split line); None with fewer than two runs."""

    @property
    def level(self) -> Level:
        """The worst level over all runs (OK without runs)."""
        return max((run.level for run in self.runs), default=Level.OK)

    def state_counts(self) -> list[tuple[str, int]]:
        """(state, number of runs) for each `RunView.state` present, worst first, empty last."""
        return state_counts(self.runs)

    def fails(self, fail_on: str) -> bool:
        """True when some run's level is at or above ``fail_on`` (see `FAIL_ON`): exit code 1.

        A run's level is the engine's: its active findings, plus critical episodes that are over
        (criticals latch), so a run that went critical and recovered still fails the check.
        """
        threshold = FAIL_ON[fail_on]
        return threshold is not None and self.level >= threshold


def build_snapshot(
    store: Store,
    health: dict[str, RunHealth],
    now: float | None = None,
    roots: list[str] | None = None,
    problems: list[str] | None = None,
    rules: Rules | None = None,
) -> Snapshot:
    """The snapshot of every run in ``store`` (sorted by name), judged by ``health`` (run -> verdict)
    with ``rules`` (the charts draw their thresholds; None: the defaults)."""
    now = time.time() if now is None else now
    names = store_display_names(store)
    runs = [build_run_view(store.runs[name], health[name], now, names[name]) for name in store.sorted_names()]
    configs = {name: run.config for name, run in store.runs.items()}
    seeds = find_seed_groups(configs, names)
    comparison = compare_runs(runs, configs, seeds) if len(runs) > 1 else None
    # Paths and messages name directories that need not be UTF-8: their display form, so that every
    # format (a UTF-8 file, JSON, a strict stdout) can carry them.
    return Snapshot(
        runs=runs, generated_at=now, roots=[display_name(root) for root in roots or []],
        problems=[display_name(problem) for problem in problems or []],
        groups=build_group_views(seeds, {run.name: run for run in runs}), store=store, rules=rules,
        comparison=comparison,
    )  # fmt: skip
