"""Axes of a chart: the y scale (linear, log, symlog), outlier-robust limits and readable ticks.

Shared by the terminal charts (`rltop.ui.chart`) and the report's SVG charts (`rltop.report.svg_chart`):
both draw values already transformed by a `YScale`, with the tick positions and labels from here.

- Log scale needs every value > 0. A series that crosses or touches 0 (a KL estimate, an advantage)
  gets a symmetric log instead: ``sign(y) * log10(1 + |y| / c)``, linear within ``c`` of 0, so a
  loss spanning 1e-2 … 1e6 and a KL dipping below 0 both stay readable.
- "Ignore outliers in scaling", TensorBoard's default: the y range is the 1st–99th percentile of
  the points shown (padded), and the caller marks the points it clips at the edge.
- Step axes get integer ticks (1, 2, 5 × 10^k); time axes get durations or clock times.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass

import numpy as np

from rltop.model.durations import format_gap
from rltop.model.series import Series
from rltop.model.smoothing import KEEP_POINTS, starts_with
from rltop.view.text.numbers import format_short

OUTLIER_PERCENTILES = (1.0, 99.0)
"""The y range when outliers are ignored (TensorBoard's "ignore outliers in chart scaling")."""
MIN_ROBUST_POINTS = 20
"""Fewer points than this are all shown: a percentile of a handful of points is the points."""
PAD = 0.05
"""Room above and below the data, as a share of the y range."""
KEEP_RANKS = os.environ.get("RLTOP_PLAIN_CHARTS", "") != "1"
"""Goal served: the dashboard's CPU while a run logs (issue 28): a grid chart finds its y range
from the whole series at every new point (a partition of 20k values). On: `GrowingLimits` keeps the
values sorted and inserts the new ones. Off (``RLTOP_PLAIN_CHARTS=1``, read at import): a partition
at every call (``tests/unit/test_chart_model.py`` holds both equal)."""


@dataclass(frozen=True)
class YScale:
    """A monotonic transform of the values drawn on the y axis."""

    kind: str = "linear"
    """"linear", "log" or "symlog"."""
    linear_width: float = 1.0
    """symlog: the half-width around 0 that stays linear."""

    def forward(self, values: np.ndarray) -> np.ndarray:
        """Data units -> drawing units (NaN where the scale cannot show a value)."""
        values = np.asarray(values, dtype=np.float64)
        if self.kind == "log":
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.where(values > 0, np.log10(np.where(values > 0, values, 1.0)), np.nan)
        if self.kind == "symlog":
            return np.sign(values) * np.log10(1.0 + np.abs(values) / self.linear_width)
        return values

    def inverse(self, values: np.ndarray) -> np.ndarray:
        """Drawing units -> data units."""
        values = np.asarray(values, dtype=np.float64)
        if self.kind == "log":
            return np.power(10.0, values)
        if self.kind == "symlog":
            return np.sign(values) * (np.power(10.0, np.abs(values)) - 1.0) * self.linear_width
        return values

    @property
    def note(self) -> str:
        """How the axis reads, for the chart's caption ("" for linear)."""
        if self.kind == "log":
            return "log y"
        if self.kind == "symlog":
            return f"symlog y (values ≤ 0; linear within ±{format_short(self.linear_width)})"
        return ""


def x_values(series: Series, mode: str) -> np.ndarray:
    """The x coordinate of every point for an axis mode (steps, seconds since start, wall time)."""
    if mode == "step":
        return series.steps.astype(np.float64)
    walls = series.wall_times
    if mode == "relative":
        return walls - walls[0] if walls.shape[0] else walls
    return walls.copy()


def choose_scale(log_requested: bool, values: np.ndarray) -> YScale:
    """Linear, or log when asked and every finite value is > 0, else symlog."""
    if not log_requested:
        return YScale()
    finite = values[np.isfinite(values)]
    if finite.size == 0 or float(finite.min()) > 0:
        return YScale("log")
    magnitudes = np.abs(finite[finite != 0])
    if magnitudes.size == 0:
        return YScale("symlog", 1.0)
    # Linear around 0 up to the small values' own size (a tenth of the 10th percentile's decade).
    small = float(np.percentile(magnitudes, 10))
    return YScale("symlog", 10.0 ** math.floor(math.log10(small)))


def robust_limits(values: np.ndarray, ignore_outliers: bool) -> tuple[float, float] | None:
    """(low, high) of the finite drawing-unit ``values``: their 1st–99th percentile when outliers
    are ignored (and there are enough points), else their extremes. None without a finite value."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return None
    if ignore_outliers and finite.size >= MIN_ROBUST_POINTS:
        # Nearest ranks, inward: interpolating would let one spike among 100 points pull the edge
        # to 1 % of its height (a 1.6e6 value-loss spike over values near 1: a y axis to 16 000).
        # Both found by one partition of the copy `finite` already is. (A zero edge comes out as
        # +0.0: which of equal zeros lands at a rank is the partition's choice.)
        low, high = _outlier_ranks(finite.size)
        finite.partition((low, high))
        return float(finite[low]) + 0.0, float(finite[high]) + 0.0
    return float(finite.min()), float(finite.max())


def _outlier_ranks(count: int) -> tuple[int, int]:
    """The ranks numpy's percentile takes for `OUTLIER_PERCENTILES` of ``count`` values (its methods
    "higher" for the low edge and "lower" for the high one)."""
    last = count - 1
    return math.ceil(last * (OUTLIER_PERCENTILES[0] / 100)), math.floor(last * (OUTLIER_PERCENTILES[1] / 100))


class GrowingLimits:
    """`robust_limits` of an array that grows at its end, call after call (a live chart's values):
    its finite values are kept sorted and the new ones inserted, so the edges are read at their
    ranks instead of partitioning the whole array again (`KEEP_RANKS`; up to `KEEP_POINTS`
    values). The same floats as `robust_limits`."""

    def __init__(self) -> None:
        self._last: tuple[np.ndarray, np.ndarray | None] | None = None
        """(the values, their finite values sorted once the next values began with them)."""

    def limits(self, values: np.ndarray, ignore_outliers: bool) -> tuple[float, float] | None:
        """``robust_limits(values, ignore_outliers)``."""
        data = np.asarray(values, dtype=np.float64)
        last, self._last = self._last, None
        if not (KEEP_RANKS and ignore_outliers) or data.shape[0] > KEEP_POINTS:
            return robust_limits(data, ignore_outliers)
        if last is None or not starts_with(data, last[0]):
            # Values that do not grow (a zoomed chart's window moves) are never sorted: partitioned.
            self._last = (data.copy(), None)
            return robust_limits(data, ignore_outliers)
        before, ranked = last
        if ranked is None:
            ranked = np.sort(before[np.isfinite(before)])
        new = data[before.shape[0] :]
        new = np.sort(new[np.isfinite(new)])
        if new.size:
            ranked = np.insert(ranked, np.searchsorted(ranked, new), new)
        self._last = (data.copy(), ranked)
        if ranked.size < MIN_ROBUST_POINTS:
            return robust_limits(data, ignore_outliers)
        low, high = _outlier_ranks(ranked.size)
        return float(ranked[low]) + 0.0, float(ranked[high]) + 0.0


def padded(low: float, high: float) -> tuple[float, float]:
    """The range with `PAD` of room on each side (a flat series gets a small range around it)."""
    span = high - low
    if span <= 0:
        span = abs(high) * 0.1 or 1.0
        return low - span, high + span
    return low - span * PAD, high + span * PAD


def nice_ticks(low: float, high: float, count: int, integer: bool = False) -> list[float]:
    """About ``count`` round positions (1, 2, 5 × 10^k apart) within [low, high]."""
    if not (math.isfinite(low) and math.isfinite(high)) or count < 1:
        return []
    if high <= low:
        return [low]
    raw = (high - low) / max(count, 1)
    exponent = math.floor(math.log10(raw))
    candidates = [m * 10.0**e for e in (exponent - 1, exponent, exponent + 1) for m in (1, 2, 5)]
    if integer:
        candidates = [c for c in candidates if c >= 1] or [1.0]
    # The spacing whose tick count is nearest to ``count`` (at least two ticks when possible).
    step = min(candidates, key=lambda c: ((high - low) / c < 1.5, abs((high - low) / c - count)))
    if integer:
        step = float(round(step))
    first, last = math.ceil(low / step - 1e-9), math.floor(high / step + 1e-9)
    # k * step, not a running sum: no 0.6000000000000001 creeping in.
    return [float(f"{k * step:.12g}") for k in range(first, min(last, first + 99) + 1)]


def step_labels(steps: list[float]) -> list[str]:
    """Integer step labels, alike along an axis: ``150``, ``25000``, or ``50k 100k`` (``3M``)."""
    values = [int(round(step)) for step in steps]
    biggest = max((abs(v) for v in values), default=0)
    for unit, suffix, threshold in ((1_000_000, "M", 10_000_000), (1000, "k", 100_000)):
        if biggest >= threshold and all(v % unit == 0 for v in values):
            return [f"{v // unit}{suffix}" if v else "0" for v in values]
    return [str(v) for v in values]


def x_ticks(low: float, high: float, mode: str, count: int) -> tuple[list[float], list[str]]:
    """Tick positions and labels for an x axis: integer steps, durations, or clock times."""
    if mode == "step":
        positions = nice_ticks(low, high, count, integer=True)
        return positions, step_labels(positions)
    if mode == "relative":
        positions = nice_ticks(low, high, count)
        return positions, [format_gap(p) for p in positions]  # a 3-second run has ticks at 0.5 s
    positions = [low] if high <= low else [low + (high - low) * i / max(count - 1, 1) for i in range(count)]
    pattern = "%H:%M:%S" if high - low < 6 * 3600 else "%m-%d %H:%M"
    return positions, [time.strftime(pattern, time.localtime(p)) for p in positions]


def x_text(x: float, mode: str) -> str:
    """One x value as the axis writes it: a step, a duration since the start, or a clock time."""
    if mode == "step":
        return str(int(round(x)))
    return x_ticks(x, x, mode, 1)[1][0]


def y_ticks(low: float, high: float, scale: YScale, count: int) -> tuple[list[float], list[str]]:
    """Tick positions (drawing units) and labels (data units) for the y axis."""
    if scale.kind == "log":
        first, last = math.ceil(low), math.floor(high)
        decades = list(range(first, last + 1))
        if len(decades) >= 2:
            stride = max(1, math.ceil(len(decades) / max(count, 1)))
            return [float(d) for d in decades[::stride]], [_power_label(d) for d in decades[::stride]]
    elif scale.kind == "symlog":
        # 0 and ±c·10^j: the decades read as on a log axis, on both sides of 0.
        width = scale.linear_width
        reach = float(np.abs(scale.inverse(np.array([low, high]))).max())
        top = max(0, math.ceil(math.log10(max(reach / width, 1.0))) + 1)
        values = sorted({0.0, *(sign * width * 10.0**j for j in range(top + 1) for sign in (-1.0, 1.0))})
        shown = [v for v in values if low <= float(scale.forward(np.array([v]))[0]) <= high]
        if len(shown) >= 2:
            stride = max(1, math.ceil(len(shown) / max(count, 1)))
            shown = shown[::stride]
            return scale.forward(np.array(shown)).tolist(), _distinct_labels(shown)
    # Round values in data units (also on a log axis spanning less than two decades).
    data_low, data_high = (float(v) for v in scale.inverse(np.array([low, high])))
    values = [v for v in nice_ticks(data_low, data_high, count) if scale.kind != "log" or v > 0]
    return scale.forward(np.array(values)).tolist() if values else [], _distinct_labels(values)


def _distinct_labels(values: list[float]) -> list[str]:
    """Short labels with as many digits as it takes to tell neighbouring ticks apart."""
    labels = [format_short(v, 3) for v in values]
    for digits in range(4, 9):
        if len(set(labels)) == len(labels):
            break
        labels = [format_short(v, digits) for v in values]
    return labels


def _power_label(exponent: int) -> str:
    if -3 <= exponent <= 4:
        return format_short(10.0**exponent)
    return f"1e{exponent}"
