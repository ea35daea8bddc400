"""Stall: no new point for much longer than the run's usual gap between points.

Judged from the wall time of the newest point (``Run.last_point_wall_time``, the trainer's clock)
against ``now``; the local time of the last file change (``Run.last_change_time``) covers a trainer
clock ahead of ours and is quoted in the message. A run that logged transformers' end-of-training
summary (``train_runtime``) or reached its planned last step (``max_steps``, PPO's
``num_total_batches``) is finished, not stalled.
"""

from __future__ import annotations

from collections.abc import Iterable

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


def usual_gap(run: Run, points: int) -> float:
    """Median gap in seconds between the last ``points`` distinct point times of the busiest tag."""
    busiest = max(run.series.values(), key=len, default=None)
    if busiest is None or len(busiest) < 3:
        return 0.0
    walls = np.unique(busiest.wall_times[-(points + 1) * 4 :])[-(points + 1) :]
    gaps = np.diff(walls)
    return float(np.median(gaps)) if len(gaps) else 0.0


def is_finished(run: Run, calibration: Calibration) -> bool:
    """True when the trainer finished: exit code 0, end-of-training tags, or its last planned step.

    The planned last step is max_steps, or num_total_batches for TRL's PPOTrainer (which logs no
    end-of-training summary); with logging_steps k, a point within k steps of it counts.
    """
    if run.exit_code == 0 or any(describe(tag).concept in _FINISHED for tag in run.series):
        return True  # (an exit code 0 is the process's own word: W&B's exit record)
    last, final = run.last_step, calibration.final_step()
    if last is None or final is None:
        return False
    if _first_step(run) == 0:
        final -= 1  # steps counted from 0 (veRL before 0.4): N planned steps end at N - 1
    return last + max(calibration.logging_steps or 1, 1) > final


def _first_step(run: Run) -> int | None:
    """The smallest step any series of ``run`` starts at (None: no points)."""
    firsts = [int(series.steps[0]) for series in run.series.values() if len(series)]
    return min(firsts) if firsts else None


def judge_stall(
    run: Run, now: float, params: RuleParams, calibration: Calibration, findings: Iterable[Finding] = ()
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
    age = now - newest
    if age < 0 and run.last_change_time is not None:  # the trainer's clock runs ahead of ours
        age = now - run.last_change_time
    gap = usual_gap(run, int(params["gap_points"]))
    verdict = _level_for(age, gap, params)
    if verdict is None:
        return None
    level, limit, factor, floor = verdict
    gap_text = f"usual gap {format_gap(gap)}" if gap else "too few points for a usual gap"
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


def next_stall_change(run: Run, now: float, params: RuleParams, calibration: Calibration) -> float | None:
    """The time (seconds since the epoch) at which the run's stall verdict can next change
    without new data: when its age passes the next limit (warn, then critical), each a multiple
    of its usual gap, so a run is looked at again on a timer proportional to its own cadence.
    None when nothing can change until new points arrive (finished, empty, disabled, or past the
    critical limit already)."""
    newest = run.last_point_wall_time
    if not params.enabled or newest is None or run.exit_code is not None or is_finished(run, calibration):
        return None  # (an exit code settles the verdict: finished, or crashed at once)
    offset = 0.0
    if now < newest and run.last_change_time is not None:  # the trainer's clock runs ahead of ours
        offset, newest = now - run.last_change_time, now
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
        due = newest - offset + limit
        if due > now:
            return due
    return None


def _crashed(run: Run, calibration: Calibration, findings: Iterable[Finding]) -> Finding:
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


def stopped_text(run: Run, calibration: Calibration, findings: Iterable[Finding] = ()) -> str:
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
