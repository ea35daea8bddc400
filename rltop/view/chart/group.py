"""A seed group on a chart: its runs aligned by step, their mean and a band (min–max or ±1 std).

Every member is smoothed first (TensorBoard's debiased EMA with the chart's weight, so the band
shows the spread between seeds, not each seed's own noise), then the members are aligned on the
union of their steps: at each step, the runs that logged that exact step count. The band needs two
runs at a step; where only one logged it, the mean is that run. On a time axis each step is drawn
at the median time the members reached it, so the group stays aligned by step.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from rltop.model.smoothing import ema_debiased
from rltop.view.chart.options import BAND_LABELS
from rltop.view.chart.scale import x_values

if TYPE_CHECKING:
    from rltop.view.chart.data import Overlay


@dataclass
class GroupLines:
    """The group's curves on a common x axis (NaN where a curve has no value)."""

    x: np.ndarray
    steps: np.ndarray
    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray
    std: np.ndarray
    count: np.ndarray
    """Members that logged each step."""
    members: list[np.ndarray]
    """Each member's smoothed values on the common axis."""
    label: str
    band_label: str


def step_matrix(steps: Sequence[np.ndarray], values: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(union of the steps, members x union matrix of their values, NaN where a member has none).

    A member that logged one step twice contributes its last value there.
    """
    union = (
        np.unique(np.concatenate([np.asarray(s, dtype=np.int64) for s in steps]))
        if steps
        else np.empty(0, np.int64)
    )
    matrix = np.full((len(steps), union.shape[0]), np.nan)
    for row, (member_steps, member_values) in enumerate(zip(steps, values)):
        matrix[row, np.searchsorted(union, member_steps)] = member_values
    return union, matrix


def aligned_group(
    members: list[Overlay], mode: str, weight: float, low: float, high: float, band: str
) -> GroupLines:
    """The group of ``members`` between ``low`` and ``high`` on the x axis of ``mode``."""
    series = [member.series for member in members]
    union, values = step_matrix([s.steps for s in series], [ema_debiased(s.values, weight) for s in series])
    _, xs = step_matrix([s.steps for s in series], [x_values(s, mode) for s in series])
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # steps where no member has a finite value
        values = np.where(np.isfinite(values), values, np.nan)
        count = np.sum(np.isfinite(values), axis=0)
        mean = np.nanmean(values, axis=0)
        std = np.nanstd(values, axis=0, ddof=1) if len(members) > 1 else np.zeros(union.shape[0])
        x = union.astype(np.float64) if mode == "step" else np.nanmedian(xs, axis=0)
        if band == "std":
            lower, upper = mean - std, mean + std
        else:
            lower, upper = np.nanmin(values, axis=0), np.nanmax(values, axis=0)
    spread = count >= 2
    lower, upper = np.where(spread, lower, np.nan), np.where(spread, upper, np.nan)
    keep = np.isfinite(x) & (x >= low) & (x <= high)
    return GroupLines(
        x=x[keep],
        steps=union[keep],
        mean=mean[keep],
        low=lower[keep],
        high=upper[keep],
        std=std[keep],
        count=count[keep],
        members=[row[keep] for row in values],
        label=f"mean of {len(members)}",
        band_label=BAND_LABELS.get(band, band),
    )
