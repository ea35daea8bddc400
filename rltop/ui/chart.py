"""The detail chart, drawn with plotext: raw series faint, TensorBoard's debiased EMA on top,
the rule's threshold band as horizontal lines, other runs' same tag overlaid.

plotext is pinned to the 5.x line (``plotext>=5.3,<6``): 6.0 rewrote the package (new module
layout, signals returned by ``plot``), which is what breaks terminalboard 0.5.3; 5.3.2 is pure
Python and has kept this API (``clf/plotsize/plot/hline/xticks/build``) since 2022. plotext keeps
one global figure, so charts are only ever built on the UI thread.

Everything here is pure data -> text (ANSI); the widget turns it into Rich text.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from rltop.model.downsample import column_bounds, downsample_minmax
from rltop.model.durations import format_duration
from rltop.model.series import Series
from rltop.model.smoothing import ema_debiased

RGB = tuple[int, int, int]


@dataclass
class ChartLine:
    """One polyline of the chart."""

    x: np.ndarray
    y: np.ndarray
    color: RGB
    label: str | None = None


@dataclass
class ChartSpec:
    """What to draw; built by `series_lines`/`band_lines`, drawn by `render_chart`."""

    lines: list[ChartLine] = field(default_factory=list)
    hlines: list[tuple[float, RGB]] = field(default_factory=list)
    x_mode: str = "step"
    x_ticks: tuple[list[float], list[str]] | None = None


def x_values(series: Series, mode: str) -> np.ndarray:
    """The x coordinate of every point for an axis mode."""
    if mode == "step":
        return series.steps.astype(np.float64)
    walls = series.wall_times
    if mode == "relative":
        return walls - walls[0] if walls.shape[0] else walls
    return walls.copy()


def series_lines(
    series: Series,
    weight: float,
    mode: str,
    columns: int,
    raw_color: RGB | None,
    smooth_color: RGB,
    label: str | None = None,
) -> list[ChartLine]:
    """The raw envelope (min and max per column, so spikes stay) and the smoothed line of a series."""
    count = len(series)
    if count == 0:
        return []
    xs = x_values(series, mode)
    values = series.values
    lines: list[ChartLine] = []
    if raw_color is not None:
        if count <= columns:
            finite = np.isfinite(values)
            lines.append(ChartLine(xs[finite], values[finite], raw_color))
        else:
            bounds = column_bounds(count, columns)
            centres = xs[(bounds[:-1] + bounds[1:] - 1) // 2]
            lows, highs = downsample_minmax(values, columns)
            for column_values in (lows, highs):
                keep = np.isfinite(column_values)
                lines.append(ChartLine(centres[keep], column_values[keep], raw_color))
    smoothed = ema_debiased(values, weight)
    if count > columns:
        ends = column_bounds(count, columns)[1:] - 1
        sx, sy = xs[ends], smoothed[ends]
    else:
        sx, sy = xs, smoothed
    keep = np.isfinite(sy)
    lines.append(ChartLine(sx[keep], sy[keep], smooth_color, label))
    return lines


def band_lines(
    band: tuple[float | None, float | None, float | None, float | None],
    lines: list[ChartLine],
    warn_color: RGB,
    crit_color: RGB,
) -> list[tuple[float, RGB]]:
    """Threshold lines worth drawing: those near the data (a far-away line would flatten the curve;
    the detail screen lists every threshold in words anyway)."""
    ys = [line.y for line in lines if line.y.shape[0]]
    if not ys:
        return []
    data = np.concatenate(ys)
    low, high = float(data.min()), float(data.max())
    span = max(high - low, abs(high) * 0.1, 1e-12)
    reach_low, reach_high = low - 0.35 * span, high + 0.35 * span
    warn_low, warn_high, crit_low, crit_high = band
    result = []
    for value, color in ((warn_low, warn_color), (warn_high, warn_color), (crit_low, crit_color),
                         (crit_high, crit_color)):
        if value is not None and math.isfinite(value) and reach_low <= value <= reach_high:
            result.append((float(value), color))
    return result


def time_ticks(lines: list[ChartLine], mode: str, count: int = 5) -> tuple[list[float], list[str]] | None:
    """Readable tick labels for the time axes (durations, or local clock times)."""
    if mode == "step":
        return None
    xs = [line.x for line in lines if line.x.shape[0]]
    if not xs:
        return None
    data = np.concatenate(xs)
    low, high = float(data.min()), float(data.max())
    positions = [low] if high <= low else [low + (high - low) * i / (count - 1) for i in range(count)]
    if mode == "relative":
        return positions, [format_duration(p) for p in positions]
    span = high - low
    pattern = "%H:%M:%S" if span < 6 * 3600 else "%m-%d %H:%M"
    return positions, [time.strftime(pattern, time.localtime(p)) for p in positions]


def render_chart(spec: ChartSpec, width: int, height: int, axes_color: RGB, legend: bool) -> str:
    """Draw ``spec`` at ``width`` x ``height`` cells and return plotext's ANSI text."""
    import plotext as plt  # imported on first use: the dashboard must start fast

    plt.clf()
    plt.limitsize(False, False)  # plotext would clip to the real terminal, not the widget
    plt.plotsize(max(10, width), max(5, height))
    plt.theme("clear")
    plt.axes_color("default")
    plt.canvas_color("default")
    plt.ticks_color(axes_color)
    plt.frame(True)
    drawn = False
    for line in spec.lines:
        if line.x.shape[0] == 0:
            continue
        label = line.label if legend else None
        xs, ys = line.x.tolist(), line.y.tolist()
        if len(xs) == 1:
            plt.scatter(xs, ys, color=line.color, marker="braille", label=label)
        else:
            plt.plot(xs, ys, color=line.color, marker="braille", label=label)
        drawn = True
    if not drawn:
        return ""
    for value, color in spec.hlines:
        plt.hline(value, color)
    if spec.hlines:
        data = np.concatenate([line.y for line in spec.lines if line.y.shape[0]])
        values = [value for value, _ in spec.hlines]
        low = min(float(data.min()), *values)
        high = max(float(data.max()), *values)
        pad = (high - low) * 0.05 or abs(high) * 0.05 or 1.0
        plt.ylim(low - pad, high + pad)
    if spec.x_ticks is not None:
        plt.xticks(*spec.x_ticks)
    return plt.build()
