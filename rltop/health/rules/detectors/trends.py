"""What the detectors measure a stretch with: Theil–Sen slopes, confident flatness, the best level."""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from rltop.health.findings import Finding, Level, Stage
from rltop.health.settings import RuleParams

_SLOPE_SAMPLE = 64  # Theil-Sen slopes are taken on at most this many points of a window


def slope(steps: np.ndarray, values: np.ndarray) -> float:
    """Theil-Sen slope (median of pairwise slopes) per step, robust to outliers; 0 for < 2 points."""
    if len(values) < 2:
        return 0.0
    pick = np.unique(np.linspace(0, len(values) - 1, min(len(values), _SLOPE_SAMPLE)).astype(int))
    x, y = steps[pick].astype(float), values[pick]
    i, j = np.triu_indices(len(x), 1)
    dx = x[j] - x[i]
    keep = dx > 0
    return float(np.median((y[j] - y[i])[keep] / dx[keep])) if keep.any() else 0.0


def window_of(count: int, params: RuleParams) -> int:
    """Points in the recent window: ``share`` of the run, at least ``window`` points."""
    return min(count, max(int(params["window"]), int(count * params["share"])))


def is_flat(steps: np.ndarray, values: np.ndarray, sigma: float, tolerance: float, z: float = 2.0) -> bool:
    """Confidently flat: the fitted change end to end, plus ``z`` standard errors, is within ``tolerance``.

    Failing to see a slope in noise is not flatness: the stretch must be long and quiet enough that
    even its uncertainty stays within ``tolerance`` (in the values' units).
    """
    change = slope(steps, values) * float(steps[-1] - steps[0])
    # A regression over n points estimates the change end to end with about sigma * sqrt(12 / n).
    error = max(sigma, 1e-12) * np.sqrt(12.0 / len(values))
    return abs(change) + z * error <= tolerance


def best_level(values: np.ndarray, k: int) -> float:
    """The highest median of ``k`` consecutive points, on block medians when the series is long."""
    block = max(1, len(values) // 500)
    if block > 1:
        usable = len(values) // block * block
        values = np.median(values[:usable].reshape(-1, block), axis=1)
        k = max(2, k // block)
    return float(np.max(np.median(sliding_window_view(values, min(k, len(values))), axis=1)))


def detector_finding(
    level: Level,
    rule: str,
    title: str,
    run: str,
    tag: str,
    step: int,
    value: float,
    message: str,
    advice: str,
    first: int,
    stage: Stage,
) -> Finding:
    return Finding(
        level,
        rule,
        run,
        tag,
        step,
        value,
        message,
        advice,
        first_step=first,
        last_step=step,
        active=True,
        title=title,
        stage=stage,
    )
