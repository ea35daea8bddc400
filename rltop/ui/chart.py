"""Terminal charts: a `rltop.view.chart.data.Figure` drawn with plotext's braille lines.

The same code draws the dashboard's chart grid and the detail screen: the member or raw lines, the
curves, the threshold lines, episodes as a bar along the bottom edge, and glyph marks (NaN ``×``
and ``∞`` at their steps, ``↑``/``↓`` where outlier-robust scaling clipped a point). Axes come from
the figure (integer steps, durations, clock times, log decades); the limits are set explicitly, so
`Canvas` can map a terminal column to an x value for the cursor and the mouse, and `band_cells`
can shade a seed group's band behind the lines.

plotext is pinned to the 5.x line (``plotext>=5.3,<6``): 6.0 rewrote the package (new module
layout, signals returned by ``plot``), which is what breaks terminalboard 0.5.3; 5.3.2 is pure
Python and has kept this API (``clf/plotsize/plot/scatter/xlim/xticks/build``) since 2022. plotext
keeps one global figure, so charts are only ever built on the UI thread. Everything here is pure
data -> text: ANSI, or the Rich text lines the widgets draw (`draw_figure`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from rltop.view.chart.data import Figure

if TYPE_CHECKING:  # Rich only where lines are made: this module loads no screen library
    from rich.text import Text

RGB = tuple[int, int, int]
SPAN_GLYPH = "▁"
"""Episodes of a finding: a bar along the bottom edge of the plot, in the level's colour."""
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True)
class Canvas:
    """Where the plot area sits in the chart's text, and the x range it spans."""

    left: int
    right: int
    top: int
    bottom: int
    xlim: tuple[float, float]

    def column(self, x: float) -> int:
        """The text column of ``x``."""
        low, high = self.xlim
        share = (x - low) / (high - low) if high > low else 0.0
        return self.left + round(min(max(share, 0.0), 1.0) * (self.right - self.left))

    def x_at(self, column: int) -> float:
        """The x value at a text column (clamped to the plot area)."""
        low, high = self.xlim
        share = (min(max(column, self.left), self.right) - self.left) / max(self.right - self.left, 1)
        return low + share * (high - low)


def _segments(x: np.ndarray, y: np.ndarray) -> list[tuple[list[float], list[float]]]:
    """The NaN-free runs of a polyline, as lists (what plotext is given)."""
    return [(xs.tolist(), ys.tolist()) for xs, ys in segment_arrays(x, y)]


def segment_arrays(x: np.ndarray, y: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """The NaN-free runs of a polyline, as float64 arrays."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    finite = np.isfinite(y) & np.isfinite(x)
    if finite.all():
        return [(x, y)] if x.shape[0] else []
    edges = np.flatnonzero(np.diff(np.concatenate(([False], finite, [False])).astype(np.int8)))
    return [(x[a:b], y[a:b]) for a, b in zip(edges[::2], edges[1::2])]


def band_cells(figure: Figure, canvas: Canvas) -> list[tuple[int, int, int]]:
    """(row, first column, end column) runs of the cells a seed group's band covers: the band is a
    shaded background under the lines, solid whatever its width (plotext's braille lines leave
    vertical strokes hollow)."""
    runs: list[tuple[int, int, int]] = []
    low, high = figure.ylim
    rows = canvas.bottom - canvas.top + 1
    if high <= low or rows < 1:
        return runs
    columns = np.arange(canvas.left, canvas.right + 1)
    xs = np.array([canvas.x_at(int(c)) for c in columns])
    covered = np.zeros((rows, columns.shape[0]), dtype=bool)
    for area in figure.areas:
        if area.x.shape[0] < 2:
            continue
        inside = (xs >= area.x[0]) & (xs <= area.x[-1])
        top = np.interp(xs, area.x, area.high)
        bottom = np.interp(xs, area.x, area.low)
        # Row 0 is the top of the plot (the y range's high end).
        first = np.clip(np.round((high - top) / (high - low) * (rows - 1)), 0, rows - 1).astype(int)
        last = np.clip(np.round((high - bottom) / (high - low) * (rows - 1)), 0, rows - 1).astype(int)
        row_index = np.arange(rows)[:, None]
        covered |= inside[None, :] & (row_index >= first[None, :]) & (row_index <= last[None, :])
    for row in range(rows):
        edges = np.flatnonzero(np.diff(np.concatenate(([0], covered[row].astype(np.int8), [0]))))
        runs += [
            (canvas.top + row, canvas.left + int(a), canvas.left + int(b))
            for a, b in zip(edges[::2], edges[1::2])
        ]
    return runs


@dataclass
class Drawing:
    """A figure drawn for a widget: its lines, a key equal for two drawings of the same picture,
    and its plot area."""

    lines: list[Text]
    key: object
    canvas: Canvas | None


def draw_figure(
    figure: Figure,
    width: int,
    height: int,
    palette: Mapping[str, RGB],
    legend: bool,
    kept: dict | None = None,
) -> Drawing:
    """`render_figure`'s picture as Rich text lines (`lines_from_ansi` of its text): made from the
    drawn cells where `rltop.ui.plot_text` draws the figure, decoded from plotext's text otherwise.
    ``kept``: the last drawing's lines by their cells, for a chart drawn again and again (a line the
    same as one of them is that one: lines must not be changed)."""
    from rltop.ui.ansi_text import lines_from_ansi
    from rltop.ui.plot_text import render_lines

    if not figure.empty:
        drawn = render_lines(figure, *plot_size(width, height), palette, legend, SPAN_GLYPH, kept)
        if drawn is not None:
            lines, key = drawn
            plain = "\n".join(line.plain for line in lines)
            return Drawing(lines, key, _canvas(plain, figure.xlim))
    text, canvas = render_figure(figure, width, height, palette, legend)
    return Drawing(lines_from_ansi(text), text, canvas)


def plot_size(width: int, height: int) -> tuple[int, int]:
    """The size a chart is drawn at: plotext's smallest, 10 x 5, at least."""
    return max(10, width), max(5, height)


def render_figure(
    figure: Figure, width: int, height: int, palette: Mapping[str, RGB], legend: bool
) -> tuple[str, Canvas | None]:
    """Draw ``figure`` at ``width`` x ``height`` cells: plotext's ANSI text and its plot area.

    The text comes from `rltop.ui.plot_text` (the same text, drawn with numpy) where it covers the
    figure, from plotext itself otherwise.
    """
    from rltop.ui.plot_text import render_text

    if figure.empty:
        return "", None
    width, height = plot_size(width, height)
    text = render_text(figure, width, height, palette, legend, SPAN_GLYPH)
    if text is None:
        text = plotext_text(figure, width, height, palette, legend)
    return text, _canvas(_ANSI.sub("", text), figure.xlim)


def plotext_text(figure: Figure, width: int, height: int, palette: Mapping[str, RGB], legend: bool) -> str:
    """plotext's text of ``figure`` at ``width`` x ``height`` (at least 10 x 5) cells."""
    import plotext as plt  # imported on first use: the dashboard must start fast

    plt.clf()
    plt.limitsize(False, False)  # plotext would clip to the real terminal, not the widget
    plt.plotsize(width, height)
    plt.theme("clear")
    plt.axes_color("default")
    plt.canvas_color("default")
    plt.ticks_color(palette["axes"])
    plt.frame(True)
    ylow, yhigh = figure.ylim
    for span in figure.spans:
        plt.plot([span.first, span.last], [ylow, ylow], color=palette[span.color], marker=SPAN_GLYPH)
    for trace in figure.traces:
        label = trace.label if legend else None
        for xs, ys in _segments(trace.x, trace.y):
            if len(xs) == 1:
                plt.scatter(xs, ys, color=palette[trace.color], marker="braille", label=label)
            else:
                plt.plot(xs, ys, color=palette[trace.color], marker="braille", label=label)
            label = None
    for threshold in figure.thresholds:
        for xs, ys in _segments(threshold.x, threshold.y):
            plt.plot(xs, ys, color=palette[threshold.color], marker="braille")
    for marks in figure.marks:
        plt.scatter(marks.x.tolist(), marks.y.tolist(), color=palette[marks.color], marker=marks.glyph)
    plt.xlim(*figure.xlim)
    plt.ylim(ylow, yhigh)
    if figure.xticks[0]:
        plt.xticks(*figure.xticks)
    if figure.yticks[0]:
        plt.yticks(*figure.yticks)
    return plt.build()


def _canvas(plain: str, xlim: tuple[float, float]) -> Canvas | None:
    """The plot area inside plotext's frame (``┌…┐`` above it, ``└…┘`` below)."""
    lines = plain.split("\n")
    top = next((row for row, line in enumerate(lines) if "┌" in line), None)
    bottom = next((row for row, line in enumerate(lines) if "└" in line), None)
    if top is None or bottom is None or bottom - top < 2:
        return None
    left, right = lines[top].index("┌") + 1, lines[top].rindex("┐") - 1
    return Canvas(left, right, top + 1, bottom - 1, xlim) if right > left else None
