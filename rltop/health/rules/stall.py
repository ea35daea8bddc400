"""Stall: no new point for much longer than the run's usual gap between points.

Judged from the wall time of the newest point (``Run.last_point_wall_time``, the trainer's clock)
against ``now``; the local time of the last file change (``Run.last_change_time``) covers a trainer
clock ahead of ours and is quoted in the message, and the local time new points last arrived while
rltop watched (``Run.last_arrival_time``) one behind ours: points that keep arriving are news,
whatever their dates say. A run that logged transformers' end-of-training
summary (``train_runtime``) or reached its planned last step (``max_steps``, PPO's
``num_total_batches``) is finished, not stalled.

The rule reads an `Activity`, not the run's points: the engine makes one from a held `Run`
(`Activity.of_run`), and ``rltop tail``, which keeps no points, from the change batches
(`rltop.live.activity`) — one verdict, whoever asks.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from rltop.health.calibration import Calibration
from rltop.health.findings import Finding, Level, Stage
from rltop.health.rules.base import Context, Rule
from rltop.health.settings import RuleDoc, RuleParams
from rltop.model.catalog import MetricInfo, describe
from rltop.model.durations import format_duration, format_gap
from rltop.model.run import Run

# Concepts only the end-of-training summary logs (transformers' train_runtime, train_loss...).
_FINISHED = frozenset({"train_runtime", "final_train_loss", "train_steps_per_second"})
STEP_TIME = "step_time"
"""The concept of a step's duration as the trainer measured it: a floor for the usual gap."""


class Stall(Rule):
    """No new point for much longer than the run's usual gap: judged against the clock, not point by
    point (`judge_stall`; `next_stall_change` says when the verdict can next change by itself)."""

    name, title, stage = "stall", "stall", Stage.CONSEQUENCE
    defaults = {"warn": 5.0, "critical": 15.0, "warn_min_s": 180.0, "critical_min_s": 600.0, "gap_points": 20}
    doc = RuleDoc(
        "Stall",
        "time since the run's newest point",
        "above",
        "> {warn} × usual gap (≥ {warn_min_s} s)",
        "> {critical} × usual gap (≥ {critical_min_s} s)",
        "usual gap = median of last {gap_points}",
        "15 usual gaps and at least 10 minutes without a point: the trainer crashed, hung or was killed",
    )

    def applies(self, info: MetricInfo, context: Context) -> bool:
        return False  # a run's freshness, not a tag's values


def gap_window(points: int) -> int:
    """How many of the busiest tag's newest wall times the usual gap over ``points`` gaps reads
    (repeated times, several tags logged at one moment, are dropped first)."""
    return (points + 1) * 4


def logs_step_time(tag: str) -> bool:
    """``tag`` is the trainer's own duration of a step (veRL's ``timing_s/step``, OpenRLHF's…)."""
    return describe(tag).concept == STEP_TIME


def newest_duration(values: np.ndarray) -> float | None:
    """The newest finite, positive value of a step-time series (None: none yet)."""
    good = values[np.isfinite(values) & (values > 0)]
    return float(good[-1]) if len(good) else None


def logs_summary(tag: str) -> bool:
    """``tag`` is one only transformers' end-of-training summary logs (``train_runtime``…)."""
    return describe(tag).concept in _FINISHED


@dataclass(frozen=True)
class Activity:
    """What the stall rule reads of a run: how far and how lately it logged, how often, how it ended."""

    name: str
    last_step: int | None
    first_step: int | None
    """The smallest step any tag starts at (0: steps counted from 0, as veRL before 0.4 did)."""
    last_point_wall_time: float | None
    last_change_time: float | None
    last_arrival_time: float | None
    """When new points last arrived while rltop watched (local clock; None: none since it started)."""
    exit_code: int | None
    summary_logged: bool
    """A tag of transformers' end-of-training summary was logged: the trainer finished."""
    busiest_points: int
    """Points of the tag with the most points (the first of equals, in the run's tag order)."""
    busiest_walls: np.ndarray
    """That tag's newest wall times: at least `gap_window` of them when it has that many."""
    quiet_hint: str = ""
    """Why this kind of files may go quiet while training goes on (`Run.quiet_hint`)."""
    step_seconds: float | None = None
    """The trainer's own newest step duration, when it logs one (veRL's ``timing_s/step``): points
    found on disk at start share one date (a console log has none), and a 15-minute step is not a
    stall however few gaps were seen."""

    @classmethod
    def of_run(cls, run: Run, window: int = gap_window(20)) -> Activity:
        """The activity of a held run (its busiest tag's last ``window`` wall times)."""
        busiest = max(run.series.values(), key=len, default=None)
        # (first_step: one step read, not a copy of a narrow column per tag per batch)
        firsts = [series.first_step for series in run.series.values() if len(series)]
        timed = [newest_duration(series.values) for tag, series in run.series.items() if logs_step_time(tag)]
        return cls(
            name=run.name,
            last_step=run.last_step,
            first_step=min(firsts) if firsts else None,
            last_point_wall_time=run.last_point_wall_time,
            last_change_time=run.last_change_time,
            last_arrival_time=run.last_arrival_time,
            exit_code=run.exit_code,
            summary_logged=any(logs_summary(tag) for tag in run.series),
            busiest_points=len(busiest) if busiest is not None else 0,
            busiest_walls=busiest.wall_times[-window:] if busiest is not None else np.empty(0),
            step_seconds=next((seconds for seconds in timed if seconds is not None), None),
            quiet_hint=run.quiet_hint,
        )


def usual_gap(activity: Activity, points: int) -> float:
    """Median gap in seconds between the last ``points`` distinct point times of the busiest tag,
    and at least the step time the trainer logs (`Activity.step_seconds`)."""
    return max(_wall_gap(activity, points), activity.step_seconds or 0.0)


def _wall_gap(activity: Activity, points: int) -> float:
    if activity.busiest_points < 3:
        return 0.0
    walls = np.unique(activity.busiest_walls[-gap_window(points) :])[-(points + 1) :]
    gaps = np.diff(walls)
    return float(np.median(gaps)) if len(gaps) else 0.0


def is_finished(activity: Activity, calibration: Calibration) -> bool:
    """True when the trainer finished: exit code 0, end-of-training tags, or its last planned step.

    The planned last step is max_steps, or num_total_batches for TRL's PPOTrainer (which logs no
    end-of-training summary); with logging_steps k, a point within k steps of it counts.
    """
    if activity.exit_code == 0 or activity.summary_logged:
        return True  # (an exit code 0 is the process's own word: W&B's exit record)
    last, final = activity.last_step, calibration.final_step()
    if last is None or final is None:
        return False
    if activity.first_step == 0:
        final -= 1  # steps counted from 0 (veRL before 0.4): N planned steps end at N - 1
    return last + max(calibration.logging_steps or 1, 1) > final


def run_finished(run: Run, calibration: Calibration) -> bool:
    """`is_finished` for a held run."""
    return is_finished(Activity.of_run(run), calibration)


def quiet_since(run: Activity, now: float) -> float:
    """The moment the run's quiet time counts from: its newest point's date, or the local time its
    files last changed when the trainer's clock runs ahead of ours, or the local time its newest
    points arrived when that is later (a trainer's clock behind ours)."""
    newest = run.last_point_wall_time
    if newest is None:  # no point: nothing is quiet yet
        return now
    if newest > now and run.last_change_time is not None:  # the trainer's clock runs ahead of ours
        return run.last_change_time
    if run.last_arrival_time is not None:
        return max(newest, run.last_arrival_time)
    return newest


def judge_stall(
    run: Activity,
    now: float,
    params: RuleParams,
    calibration: Calibration,
    findings: Iterable[Finding] = (),
) -> Finding | None:
    """A stall finding for ``run`` at time ``now``, or None when it is fresh, finished or empty.

    ``findings`` are the run's other findings: a stall right after a NaN says so ("stopped after
    NaN at step 24"), and a run that stopped short of its planned last step says how far it got.
    """
    newest = run.last_point_wall_time
    if params.enabled and run.exit_code not in (None, 0):
        return _crashed(run, calibration, findings)
    if not params.enabled or newest is None or is_finished(run, calibration):
        return None
    age = now - quiet_since(run, now)
    gap = usual_gap(run, int(params["gap_points"]))
    verdict = _level_for(age, gap, params)
    if verdict is None:
        return None
    level, limit, factor, floor = verdict
    gap_text = f"usual gap {format_gap(gap)}" if gap else "too few points for a usual gap"
    if gap and gap == run.step_seconds and _wall_gap(run, int(params["gap_points"])) < gap / 2:
        gap_text = f"usual gap {format_gap(gap)}, its logged step time"  # (worth saying: it set the gap)
    changed = ""
    if run.last_change_time is not None:
        changed = f"; its files last changed {format_duration(max(now - run.last_change_time, 0.0))} ago"
    step = run.last_step
    message = (
        f"run {run.name} {stopped_text(run, calibration, findings)}: no new point for {format_duration(age)} "
        f"(last at step {step}; {gap_text}); "
        f"{level.label} after {format_duration(limit)} = max({factor:g} × gap, {format_duration(floor)})"
        f"{changed}"
    )
    advice = (
        "Check the training process: crashed, killed (out of memory), hung in a collective or on I/O, or "
        "out of disk. A long evaluation or checkpoint save also pauses logging; if the writer buffers "
        "(tensorboardX flushes every 120 s), points arrive in bursts."
    )
    if run.quiet_hint:
        advice += f" For this run's files: {run.quiet_hint}."
    return Finding(
        level,
        "stall",
        run.name,
        "",
        step,
        age,
        message,
        advice,
        first_step=step,
        last_step=step,
        active=True,
        title="stall",
        stage=Stage.CONSEQUENCE,
    )


def next_stall_change(
    run: Activity, now: float, params: RuleParams, calibration: Calibration
) -> float | None:
    """The time (seconds since the epoch) at which the run's stall verdict can next change
    without new data: when its age passes the next limit (warn, then critical), each a multiple
    of its usual gap, so a run is looked at again on a timer proportional to its own cadence.
    None when nothing can change until new points arrive (finished, empty, disabled, or past the
    critical limit already)."""
    newest = run.last_point_wall_time
    if not params.enabled or newest is None or run.exit_code is not None or is_finished(run, calibration):
        return None  # (an exit code settles the verdict: finished, or crashed at once)
    since = quiet_since(run, now)
    gap = usual_gap(run, int(params["gap_points"]))
    limits = sorted(
        max(factor * gap, floor)
        for factor, floor in (
            (params.warn, float(params["warn_min_s"])),
            (params.critical, float(params["critical_min_s"])),
        )
        if factor is not None
    )
    for limit in limits:
        due = since + limit
        if due > now:
            return due
    return None


def _crashed(run: Activity, calibration: Calibration, findings: Iterable[Finding]) -> Finding:
    """The process exited with an error code (W&B's exit record): critical at once, no gap to wait for."""
    step = run.last_step
    stopped = stopped_text(run, calibration, findings)
    message = f"run {run.name} {stopped}: the process exited with code {run.exit_code}"
    advice = (
        "The training process ended with an error: read the end of its output (the traceback; W&B keeps "
        "it in files/output.log of the run folder). Exit code 137 is a kill (out of memory, preemption)."
    )
    return Finding(
        Level.CRITICAL,
        "stall",
        run.name,
        "",
        step,
        None,
        message,
        advice,
        first_step=step,
        last_step=step,
        active=True,
        title="crashed",
        stage=Stage.CONSEQUENCE,
    )


def stopped_text(run: Activity, calibration: Calibration, findings: Iterable[Finding] = ()) -> str:
    """ "stopped after NaN at step 24 (train/grad_norm)", "stopped at step 122 of 400", "stopped at step 9".

    The NaN named is the run's first (the root cause), not the last of the tags it reached.
    """
    last = run.last_step
    final = calibration.final_step()
    planned = f" of {final:g}" if final is not None and last is not None and last < final else ""
    causes = [f for f in findings if f.rule == "non_finite" and f.step is not None]
    if not causes:
        return f"stopped at step {last}{planned}"
    cause = min(causes, key=lambda f: (f.first_step if f.first_step is not None else f.step or 0, f.tag))
    what = "NaN" if cause.value is None or cause.value != cause.value else "Inf"
    text = f"stopped after {what} at step {cause.first_step} ({cause.tag})"
    return text + (f"; last step {last}{planned}" if planned or last != cause.step else "")


def _level_for(age: float, gap: float, params: RuleParams) -> tuple[Level, float, float, float] | None:
    """(level, limit in s, factor, minimum in s) of the worst level whose limit ``age`` exceeds."""
    for level, factor, floor in (
        (Level.CRITICAL, params.critical, float(params["critical_min_s"])),
        (Level.WARN, params.warn, float(params["warn_min_s"])),
    ):
        if factor is not None and age > max(factor * gap, floor):
            return level, max(factor * gap, floor), factor, floor
    return None
