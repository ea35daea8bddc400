"""The chart cursor: which point it is on, and what every overlaid run logged there.

The cursor sits on a point of the shown run (← → move it point by point, a click puts it on the
nearest point). The readout gives that point's step and time, and for every run drawn the value it
*stored* there, exactly (the shortest decimal that reads back to the logged float, as `rltop
export` prints it), never a smoothed or interpolated number. A run that did not log that exact step
gives its last point before it, and says at which step.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from rltop.model.durations import format_duration
from rltop.model.series import Series
from rltop.model.values import format_value
from rltop.view.chart.scale import x_values


@dataclass(frozen=True)
class ReadoutEntry:
    """One run's value at the cursor."""

    run: str
    label: str
    color: str
    step: int | None
    """The step of the point read (None: the run has no point at or before the cursor)."""
    value: float | None
    text: str
    """The exact stored value (``nan``, ``inf`` as such); "–" without a point."""
    exact: bool
    """The run logged the cursor's own step (on a time axis: the point is at the cursor)."""


@dataclass(frozen=True)
class Readout:
    """The cursor's point and every overlaid run's value there."""

    step: int
    wall_time: float
    since_start: float
    entries: tuple[ReadoutEntry, ...]

    @property
    def time_text(self) -> str:
        """``21:47:03, 1 h 2 min in``: the wall-clock time (local) and the time since the run began."""
        clock = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.wall_time))
        return f"{clock}, {format_duration(self.since_start)} in"


def nearest_point(series: Series, mode: str, x: float) -> int | None:
    """Index of the point nearest to ``x`` on the axis of ``mode`` (None for an empty series)."""
    xs = x_values(series, mode)
    if xs.shape[0] == 0:
        return None
    right = int(np.searchsorted(xs, x, side="left"))
    if right >= xs.shape[0]:
        nearest = xs.shape[0] - 1
    elif right == 0:
        nearest = 0
    else:
        nearest = right if xs[right] - x < x - xs[right - 1] else right - 1
    # Several points at one step (transformers logs train/epoch twice at the end): the last one,
    # the value a reader of that step gets everywhere else.
    return int(np.searchsorted(xs, xs[nearest], side="right")) - 1


def step_point(series: Series, mode: str, index: int, direction: int, low: float, high: float) -> int | None:
    """The point ``direction`` points away from ``index`` (repeated steps skipped), kept in [low, high]."""
    xs = x_values(series, mode)
    if xs.shape[0] == 0:
        return None
    here = xs[index]
    if direction > 0:
        target = int(np.searchsorted(xs, here, side="right"))
        if target >= xs.shape[0] or xs[target] > high:
            return index
        # The last of several points at one step: the value the readout reads there.
        return int(np.searchsorted(xs, xs[target], side="right")) - 1
    target = int(np.searchsorted(xs, here, side="left")) - 1
    if target < 0 or xs[target] < low:
        return index
    return target


def last_point_at(series: Series, mode: str, x: float) -> int | None:
    """Index of the last point with an x at or before ``x`` (None: none)."""
    xs = x_values(series, mode)
    index = int(np.searchsorted(xs, x, side="right")) - 1
    return index if index >= 0 else None


def build_readout(
    main: tuple[str, str, Series, str], others: list[tuple[str, str, Series, str]], mode: str, index: int
) -> Readout:
    """The readout with the cursor on point ``index`` of ``main`` ((run, label, series, colour) each)."""
    run, label, series, color = main
    step = int(series.steps[index])
    wall = float(series.wall_times[index])
    since = wall - float(series.wall_times[0])
    x = float(x_values(series, mode)[index])
    entries = [_entry(run, label, series, color, index, step)]
    for other_run, other_label, other, other_color in others:
        # By step: the same step; by time: the same moment since each run's start.
        found = last_point_at(other, mode, float(step) if mode == "step" else x)
        entries.append(_entry(other_run, other_label, other, other_color, found, step))
    return Readout(step, wall, since, tuple(entries))


def _entry(run: str, label: str, series: Series, color: str, index: int | None, step: int) -> ReadoutEntry:
    if index is None:
        return ReadoutEntry(run, label, color, None, None, "–", False)
    value = float(series.values[index])
    point_step = int(series.steps[index])
    return ReadoutEntry(
        run, label, color, point_step, value, format_value(value, series.single_precision), point_step == step
    )
