"""The stall rule's view of runs, kept from change batches without keeping their points.

``rltop tail`` prints every point and holds none (its memory stays flat however long it runs), yet
it says when a run stops logging, with the dashboard's words and levels. `ActivityLog` keeps, per
run, only what `rltop.health.rules.stall.Activity` holds: the last step, the first step, the newest
point's wall time, when the files last changed, how the process ended, whether the end-of-training
summary was logged, and each tag's newest wall times (a few dozen) for its usual gap. The verdict
itself is the health engine's rule (`judge_stall`, `next_stall_change`): nothing here judges.

It follows `rltop.ingest.feed.apply_batch` (a restart drops a tag's points from its first step on;
the busiest tag is the first of equals in order of appearance), with two approximations: a restart
that goes back further than a tag's kept window counts that tag's points from what is left, and a
resumed session's replacement of other tags' points (`Run.begin_session`) is not replayed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rltop.health.calibration import Calibration
from rltop.health.findings import Finding, Level
from rltop.health.rules.stall import (
    Activity,
    gap_window,
    judge_stall,
    logs_step_time,
    logs_summary,
    newest_duration,
    next_stall_change,
)
from rltop.health.settings import RuleParams
from rltop.ingest.feed import APPEARED, RELOADED, REMOVED, ChangeBatch
from rltop.model.durations import MAX_WALL_TIME
from rltop.model.run import CONFIG_TAG, Run


@dataclass
class _TagWindow:
    """One tag's point count, first step, and newest steps and wall times (at most the window)."""

    points: int = 0
    first_step: int | None = None
    steps: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    walls: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.float64))


@dataclass
class _RunActivity:
    """What one run's batches told so far (a `Run` shell holds its configuration and exit code, so
    they are read by the store's own code)."""

    shell: Run
    tags: dict[str, _TagWindow] = field(default_factory=dict)
    summary_logged: bool = False
    step_seconds: dict[str, float] = field(default_factory=dict)
    """Newest step duration per step-time tag (`Activity.step_seconds`)."""
    reported: Level = Level.OK
    """The stall level last said for this pause (OK: none said, or new points since)."""


class ActivityLog:
    """Per run, what the stall rule reads; `stalls` says each run's stall once per level and pause."""

    def __init__(self, params: RuleParams) -> None:
        self.params = params
        self.window = gap_window(int(params["gap_points"]))
        self._runs: dict[str, _RunActivity] = {}
        self._due: dict[str, float | None] = {}
        """Run -> when its verdict can next change by the clock (None: not before new points)."""

    def apply(self, batch: ChangeBatch) -> set[str]:
        """Take in one batch (as `apply_batch` would); return the runs that gained points."""
        batch.settle()
        for event in batch.events:
            if event.kind in (REMOVED, RELOADED) and event.run is not None:
                self._runs.pop(event.run, None)
                self._due.pop(event.run, None)
            if event.kind in (APPEARED, RELOADED) and event.run is not None:
                self._run(event.run, event.directory or "")
        for name, (*_, hint) in batch.sources.items():  # (kind, note, label, quiet hint)
            self._run(name, batch.changed_runs.get(name, "")).shell.quiet_hint = hint
        for name, directory in batch.changed_runs.items():
            run = self._run(name, directory)
            run.shell.touch(batch.change_times.get(name, batch.time))
            if name in batch.configs:
                run.shell.source_config = batch.configs[name]
        for name, tag, step, wall, text in batch.texts:
            if tag == CONFIG_TAG:  # the only text the rule reads (through the configuration)
                shell = self._run(name, batch.changed_runs.get(name, "")).shell
                shell.texts[CONFIG_TAG] = []
                shell.add_text(tag, step, wall, text)
        grew: set[str] = set()
        for points in batch.points:
            data = points.points
            if not len(data):
                continue
            run = self._run(points.run, batch.changed_runs.get(points.run, ""))
            self._add(run, points.tag, data.steps, data.wall_times)
            if logs_step_time(points.tag):
                seconds = newest_duration(data.values)
                if seconds is not None:
                    run.step_seconds[points.tag] = seconds
            grew.add(points.run)
        for name in grew:
            self._runs[name].reported = Level.OK
            if batch.live:
                self._runs[name].shell.last_arrival_time = batch.time
            self._due[name] = -np.inf  # look at it again with the clock
        for name in batch.changed_runs:
            self._due.setdefault(name, -np.inf)
        return grew

    def _run(self, name: str, directory: str) -> _RunActivity:
        run = self._runs.get(name)
        if run is None:
            run = self._runs[name] = _RunActivity(Run(name=name, directory=directory))
        return run

    def _add(self, run: _RunActivity, tag: str, steps: np.ndarray, walls: np.ndarray) -> None:
        window = run.tags.get(tag)
        if window is None:
            window = run.tags[tag] = _TagWindow()
            run.summary_logged = run.summary_logged or logs_summary(tag)
        first = int(steps[0])
        if len(window.steps) and first < int(window.steps[-1]):
            # A restart from an earlier step: the store drops the tag's points from that step on.
            kept = window.steps < first
            window.points -= int(len(kept) - kept.sum())
            window.steps, window.walls = window.steps[kept], window.walls[kept]
            if window.first_step is not None and window.first_step >= first:
                window.first_step = None  # every point went
        if window.first_step is None or window.points <= 0:
            window.first_step, window.points = first, 0
        window.points += len(steps)
        window.steps = np.concatenate((window.steps, steps))[-self.window :]
        window.walls = np.concatenate((window.walls, walls))[-self.window :]
        dated = walls[(walls > -MAX_WALL_TIME) & (walls < MAX_WALL_TIME)]  # NaN and 1e30 are no dates
        shell = run.shell
        if len(dated) and (shell.last_point_wall_time is None or dated.max() > shell.last_point_wall_time):
            shell.last_point_wall_time = float(dated.max())

    def activity(self, name: str) -> Activity:
        """The stall rule's view of run ``name`` (it must have been seen)."""
        run = self._runs[name]
        busiest = max(run.tags.values(), key=lambda window: window.points, default=None)
        lasts = [int(window.steps[-1]) for window in run.tags.values() if len(window.steps)]
        firsts = [window.first_step for window in run.tags.values() if window.first_step is not None]
        return Activity(
            name=name,
            last_step=max(lasts) if lasts else None,
            first_step=min(firsts) if firsts else None,
            last_point_wall_time=run.shell.last_point_wall_time,
            last_change_time=run.shell.last_change_time,
            last_arrival_time=run.shell.last_arrival_time,
            exit_code=run.shell.exit_code,
            summary_logged=run.summary_logged,
            busiest_points=busiest.points if busiest is not None else 0,
            busiest_walls=busiest.walls if busiest is not None else np.empty(0),
            step_seconds=next((run.step_seconds[tag] for tag in run.tags if tag in run.step_seconds), None),
            quiet_hint=run.shell.quiet_hint,
        )

    def calibration(self, name: str) -> Calibration:
        """The run's settings the rule needs (planned steps, logging interval), from its configuration."""
        return Calibration.from_config(self._runs[name].shell.config)

    def stalls(self, now: float, runs: set[str] | None = None) -> list[Finding]:
        """The stall findings of ``runs`` (default: every run) whose level rose since last said.

        Each run is looked at only when the clock passed the moment its verdict could change
        (`next_stall_change`), or when it gained points; a level is said once per pause.
        """
        said = []
        for name in self._runs if runs is None else runs & self._runs.keys():
            due = self._due.get(name)
            if due is None or due > now:
                continue
            activity, calibration = self.activity(name), self.calibration(name)
            self._due[name] = next_stall_change(activity, now, self.params, calibration)
            finding = judge_stall(activity, now, self.params, calibration)
            run = self._runs[name]
            if finding is not None and finding.level > run.reported:
                run.reported = Level(finding.level)
                said.append(finding)
        return said
