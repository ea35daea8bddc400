"""plotext's picture of a chart, drawn with numpy: the same text, character for character, in a tenth
of the time.

Goal served: the dashboard's CPU while a run logs (issue 28: ≤ 2 % of a core with 50 tags a second,
the grid's charts redrawn with every new point, never held back). plotext 5.3 builds a chart in pure
Python, point by point and cell by cell: 10–15 ms for one grid chart of a 20k-step series, most of
the dashboard's CPU at 200 x 50. This module replays what plotext's ``build_plot`` does for the
figures `rltop.ui.chart.render_figure` draws (a frame, explicit limits and ticks, polylines and
single points in braille, glyph marks, episode bars) with the per-point work vectorised: data to
canvas coordinates with plotext's own rounding, the segments between points as plotext's
``get_line`` fills them, braille dots grouped per cell, then the frame, the ticks and the ANSI text
exactly as plotext writes them. A figure it does not cover (no ticks, a legend, a non-finite value,
a colour plotext would replace) returns None, and plotext draws it.

Switch: `ENABLED` (``RLTOP_PLAIN_CHARTS=1`` turns it off, read once at import): plotext draws
every chart. ``tests/unit/test_plot_text.py`` checks that both give the same text on a few hundred
figures (random walks, spikes, gaps, thresholds, marks, episodes, log axes, many sizes).

`render_lines` gives the dashboard the drawn cells as Rich text lines directly, without writing the
ANSI text and decoding it again (`DRAW_LINES`): the lines `rltop.ui.ansi_text.lines_from_ansi`
makes of `render_text`'s text, span for span (checked on the same figures).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
from rich.text import Span, Text

if TYPE_CHECKING:
    from rich.style import Style

    from rltop.view.chart.data import Figure

ENABLED = os.environ.get("RLTOP_PLAIN_CHARTS", "") != "1"
"""Draw the charts plotext can be replaced for with this module (False: plotext draws all)."""
DRAW_LINES = ENABLED
"""Goal served: the dashboard's CPU while a run logs (issue 28), its grid charts redrawn with every
new point. On: `render_lines` turns the drawn cells into Rich text lines directly; the ANSI text
and its decoding were a third of a grid chart's drawing (writing 0.3 ms, decoding 1 ms a chart
of a 20k-step series in the live dashboard). Off (``RLTOP_PLAIN_CHARTS=1``, read at import): None,
and the chart's ANSI text is decoded (``tests/unit/test_plot_text.py`` compares both)."""

RGB = tuple[int, int, int]
SPACE = " "
ROUND_UP = 10**8
ROUND_DOWN = 10 ** (-8)  # (plotext's `round(n, 8)` multiplies back by this float, not 1e-8 written out)
_CONTROL = re.compile("[\x00-\x1f\x7f]")


class _Signal:
    """One plotext ``plot``/``scatter`` call: its points, marker, colour and whether it joins them."""

    __slots__ = ("x", "y", "marker", "color", "lines")

    def __init__(self, x: np.ndarray, y: np.ndarray, marker: str, color: RGB, lines: bool) -> None:
        self.x, self.y, self.marker, self.color, self.lines = x, y, marker, color, lines


def signals_of(figure: Figure, palette: Mapping[str, RGB], span_glyph: str) -> list[_Signal] | None:
    """The plot calls `render_figure` makes for ``figure``, in its order (None: one this module does
    not draw the way plotext would)."""
    from rltop.ui.chart import segment_arrays

    signals: list[_Signal] = []
    ylow = figure.ylim[0]
    for span in figure.spans:
        signals.append(_Signal(np.array([span.first, span.last]), np.array([ylow, ylow]),
                               span_glyph, palette[span.color], True))  # fmt: skip
    for trace in figure.traces:
        for xs, ys in segment_arrays(trace.x, trace.y):
            single = len(xs) == 1
            signals.append(_Signal(xs, ys, "braille", palette[trace.color], not single))
    for threshold in figure.thresholds:
        for xs, ys in segment_arrays(threshold.x, threshold.y):
            signals.append(_Signal(xs, ys, "braille", palette[threshold.color], True))
    for marks in figure.marks:
        x, y = np.asarray(marks.x, dtype=np.float64), np.asarray(marks.y, dtype=np.float64)
        signals.append(_Signal(x, y, marks.glyph, palette[marks.color], False))
    return signals


def _plotext():
    import plotext._utility as ut  # the same tables (braille codes, ANSI) and tick helpers as plotext

    return ut


def _valid_color(color: object) -> bool:
    return (
        isinstance(color, tuple)
        and len(color) == 3
        and all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= 255 for c in color)
    )


def _matrix_data(values: np.ndarray, lim: tuple[float, float], bins: int) -> np.ndarray:
    """plotext's ``get_matrix_data``: ``floor(round(0.5 + (bins - 1) * (v - low) / (high - low), 8))``,
    operation by operation in float64, so every point lands in the cell plotext puts it in."""
    change = 0.5 + ((bins - 1) * (values - lim[0])) / (lim[1] - lim[0])
    scaled = change * ROUND_UP
    floor = np.floor(scaled)
    rounded = np.where(scaled - floor < 0.5, floor, np.ceil(scaled)) * ROUND_DOWN
    return np.floor(rounded).astype(np.int64)


def _lines(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """plotext's ``get_lines``: each segment filled with ``max(|dx|, |dy|)`` points of
    ``int(x0 + k * dx / (n - 1))`` (its ``linspace``, truncated), then the last point."""
    if x.shape[0] < 2:
        return x, y
    x0, y0, x1, y1 = x[:-1], y[:-1], x[1:], y[1:]
    dx, dy = x1 - x0, y1 - y0
    steps = np.maximum(np.abs(dx), np.abs(dy))  # points a segment adds (its last one is the next's first)
    total = int(steps.sum())
    if total == 0:
        return x[-1:], y[-1:]
    segment = np.repeat(np.arange(steps.shape[0]), steps)
    starts = np.cumsum(steps) - steps
    k = (np.arange(total) - starts[segment]).astype(np.float64)
    divisor = np.where(steps > 0, steps, 1).astype(np.float64)
    slope_x = dx.astype(np.float64) / divisor
    slope_y = dy.astype(np.float64) / divisor
    xs = np.trunc(x0[segment].astype(np.float64) + k * slope_x[segment]).astype(np.int64)
    ys = np.trunc(y0[segment].astype(np.float64) + k * slope_y[segment]).astype(np.int64)
    return np.concatenate((xs, x[-1:])), np.concatenate((ys, y[-1:]))


_BRAILLE: list[str | None] | None = None


def _braille_table() -> list[str | None]:
    """Dot mask -> plotext's braille character (bit ``(3 - row) * 2 + column`` is that dot, the order
    of plotext's code tuples); None where plotext has no character for the mask."""
    global _BRAILLE
    if _BRAILLE is None:
        codes = _plotext().braille_codes
        _BRAILLE = [codes.get(tuple((mask >> bit) & 1 for bit in range(8))) for mask in range(256)]
    return _BRAILLE


class _Canvas:
    """plotext's matrix: a marker and a foreground colour per cell, row 0 at the bottom."""

    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.markers = np.full((height, width), SPACE, dtype="<U1")
        self.colors = np.zeros((height, width), dtype=np.int32)  # 0: none, else palette index + 1
        self.palette: list[RGB] = []

    def color(self, rgb: RGB) -> int:
        if rgb not in self.palette:
            self.palette.append(rgb)
        return self.palette.index(rgb) + 1

    def put(self, col: int, row: int, marker: str, color: int) -> None:
        """``insert_element``: cells outside the matrix are left out."""
        if 0 <= col < self.width and 0 <= row < self.height:
            self.markers[row, col] = marker
            self.colors[row, col] = color

    def put_string(
        self, col: int, row: int, text: Sequence[str], color: int, check_space: bool = False
    ) -> bool:
        """``add_horizontal_string`` (left aligned): with ``check_space``, only where the string and a
        cell either side of it are blank and it fits whole; whether it was written."""
        length = len(text)
        if check_space:
            if col < 0 or col + length > self.width or not 0 <= row < self.height:
                return False
            begin, end = max(col - 1, 0), min(col + length + 1, self.width)
            if any(marker != SPACE for marker in self.markers[row, begin:end].tolist()):
                return False
        if 0 <= row < self.height:
            begin, end = max(col, 0), min(col + length, self.width)
            if begin < end:
                self.markers[row, begin:end] = list(text[begin - col : end - col])
                self.colors[row, begin:end] = color
        return True

    def put_column(self, col: int, row: int, text: Sequence[str], color: int) -> None:
        """``add_vertical_string`` (upwards from ``row``)."""
        if 0 <= col < self.width:
            begin, end = max(row, 0), min(row + len(text), self.height)
            if begin < end:
                self.markers[begin:end, col] = list(text[begin - row : end - row])
                self.colors[begin:end, col] = color

    def text(self, ut) -> str:
        """``set_canvas``: rows top to bottom, each run of one colour opened by its ANSI code and
        closed by the reset, uncoloured runs too (plotext writes the reset after every run)."""
        end = ut.ansi_end
        codes = [ut.colors_to_ansi(ut.no_color, ut.no_color, ut.no_color)]
        codes += [ut.colors_to_ansi(rgb, ut.no_color, ut.no_color) for rgb in self.palette]
        out = []
        for row in range(self.height - 1, -1, -1):
            colors = self.colors[row]
            markers = self.markers[row].tolist()
            edges = self._run_edges(colors)
            for begin, stop in zip(edges[:-1], edges[1:]):
                out.append(codes[colors[begin]])
                out.append("".join(markers[begin:stop]))
                out.append(end)
            out.append("\n")
        return "".join(out)

    def lines(self, ut, kept: dict | None = None) -> list[Text] | None:
        """The lines `lines_from_ansi` decodes `text` into, made from the cells: each row's runs of
        one colour as spans of the style Rich's decoder gives that colour's code, and the empty line
        after the last newline (None: a colour the decoder would treat otherwise, or a control
        character in a cell).

        ``kept``: the lines of the last picture by their cells, replaced by this picture's: a row
        whose cells and colours are the ones of a row of the last picture is that row's line (the
        same object: a new point of a long series redraws a few rows of a chart). Callers must not
        change the lines they get."""
        styles: list[Style | None] = [None]
        for rgb in self.palette:
            style = _run_style(ut.colors_to_ansi(rgb, ut.no_color, ut.no_color), ut)
            if style is False:
                return None
            styles.append(style)
        if _run_style(ut.colors_to_ansi(ut.no_color, ut.no_color, ut.no_color), ut) is not None:
            return None
        out = []
        palette = tuple(self.palette)
        made: dict[tuple, Text] = {}
        for row in range(self.height - 1, -1, -1):
            colors, markers = self.colors[row], self.markers[row]
            key = (palette, markers.tobytes(), colors.tobytes())
            line = made.get(key) or (kept.get(key) if kept is not None else None)
            if line is None:
                plain = "".join(markers.tolist())
                if len(plain) != self.width or _CONTROL.search(plain):
                    return None  # (a NUL cell reads back empty; the decoder strips or obeys controls)
                edges = self._run_edges(colors)
                runs = colors[edges[:-1]].tolist()
                spans = [
                    Span(begin, stop, style)
                    for begin, stop, color in zip(edges[:-1], edges[1:], runs)
                    if (style := styles[color]) is not None
                ]
                line = Text(plain, spans=spans)
            made[key] = line
            out.append(line)
        out.append(Text(""))
        if kept is not None:
            kept.clear()
            kept.update(made)
        return out

    def _run_edges(self, colors: np.ndarray) -> list[int]:
        """Where a row's runs of one colour begin, and its end."""
        return [0, *(np.flatnonzero(colors[1:] != colors[:-1]) + 1).tolist(), self.width]

    def key(self) -> tuple:
        """Equal for two canvases with the same cells in the same colours."""
        return (self.markers.shape, self.markers.tobytes(), self.colors.tobytes(), tuple(self.palette))


_RUN_STYLES: dict[str, Style | None | bool] = {}


def _run_style(code: str, ut) -> Style | None | bool:
    """The style Rich's decoder gives a run of plotext's text opened by ``code`` and closed by
    plotext's reset (None: no style, no span), or False when the reset would not bring the
    decoder back to no style."""
    found = _RUN_STYLES.get(code, True)
    if found is True:
        from rltop.ui.ansi_text import lines_from_ansi

        decoded = lines_from_ansi(f"{code}x{ut.ansi_end}y")[0]
        after = [span for span in decoded.spans if span.start >= 1]
        style = decoded.spans[0].style if decoded.spans and decoded.spans[0].start == 0 else None
        found = _RUN_STYLES[code] = False if after or isinstance(style, str) else style
    return found


def render_text(
    figure: Figure, width: int, height: int, palette: Mapping[str, RGB], legend: bool, span_glyph: str
) -> str | None:
    """The text plotext builds for ``figure`` at ``width`` x ``height`` (the sizes `render_figure`
    gives plotext), or None when this module does not cover the figure."""
    canvas = _drawn(figure, width, height, palette, legend, span_glyph)
    return None if canvas is None else canvas.text(_plotext())


def render_lines(
    figure: Figure,
    width: int,
    height: int,
    palette: Mapping[str, RGB],
    legend: bool,
    span_glyph: str,
    kept: dict | None = None,
) -> tuple[list[Text], tuple] | None:
    """``lines_from_ansi(render_text(...))`` without the ANSI text, and a key equal for two
    drawings with the same cells and colours; None when this module does not cover the figure or
    `DRAW_LINES` is off. ``kept``: the last drawing's lines by their cells (`_Canvas.lines`)."""
    canvas = _drawn(figure, width, height, palette, legend, span_glyph) if DRAW_LINES else None
    lines = None if canvas is None else canvas.lines(_plotext(), kept)
    return None if lines is None else (lines, canvas.key())


def _drawn(
    figure: Figure, width: int, height: int, palette: Mapping[str, RGB], legend: bool, span_glyph: str
) -> _Canvas | None:
    """The cells plotext fills for ``figure``, or None when this module does not cover it."""
    if not ENABLED or figure.empty or legend and any(t.label for t in figure.traces):
        return None
    ut = _plotext()
    axes = palette["axes"]
    xticks, xlabels = figure.xticks
    yticks, ylabels = figure.yticks
    (xlow, xhigh), (ylow, yhigh) = figure.xlim, figure.ylim
    if not (xticks and yticks and len(xticks) == len(xlabels) and len(yticks) == len(ylabels)):
        return None
    if not (math.isfinite(xlow) and math.isfinite(xhigh) and xlow < xhigh):
        return None
    if not (math.isfinite(ylow) and math.isfinite(yhigh) and ylow < yhigh):
        return None
    if not all(math.isfinite(tick) for tick in (*xticks, *yticks)):
        return None
    signals = signals_of(figure, palette, span_glyph)
    if signals is None or not _valid_color(axes):
        return None
    for signal in signals:
        if not _valid_color(signal.color) or not signal.x.shape[0] or signal.x.shape != signal.y.shape:
            return None
        if not (np.isfinite(signal.x).all() and np.isfinite(signal.y).all()):
            return None
        marker = ut.marker_codes.get(signal.marker, signal.marker)
        if marker in ut.hd_symbols and marker != "braille":
            return None
        signal.marker = marker if marker in ut.hd_symbols else marker[0]
    # The ticks as plotext keeps them (deduplicated through a set: its order decides which of two
    # colliding x labels is written).
    xticks, xlabels = ut.brush(list(xticks), [str(label) for label in xlabels])
    yticks, ylabels = ut.brush(list(yticks), [str(label) for label in ylabels])
    ylabels = ut.add_extra_spaces(ylabels, "left")
    label_width = ut.max_length(ylabels)
    label_height = 1 if len(xlabels) > 0 else 0
    width_canvas = width - 2 - label_width
    height_canvas = height - 2 - label_height
    if width_canvas < 1 or height_canvas < 1:
        return None
    col_start, row_start = label_width + 1, label_height + 1
    col_end, row_end = col_start + width_canvas, row_start + height_canvas
    cticks = ut.get_matrix_data(xticks, [xlow, xhigh], width_canvas)
    rticks = ut.get_matrix_data(yticks, [ylow, yhigh], height_canvas)

    canvas = _Canvas(width, height)
    tick_color = canvas.color(axes)
    # Lower x tick labels ("dynamic": moved off the edges, skipped where they would touch another).
    row_xticks = min(row_start - 2, height - 1)
    inserted = []
    for col, label in zip(cticks, xlabels):
        start = _dynamic_column(canvas.markers[row_xticks].tolist(), label, col_start + col)
        inserted.append(canvas.put_string(start, row_xticks, label, tick_color, check_space=True))
    cticks = [col for col, done in zip(cticks, inserted) if done]
    canvas.put_string(col_start, row_end, "─" * width_canvas, tick_color)  # the upper x axis
    for row, label in zip(rticks, ylabels):
        canvas.put_string(0, row + row_start, label, tick_color)
    if width >= label_width + 1:  # the left y axis
        axis = ["┤" if i in rticks else "│" for i in range(height_canvas)]
        canvas.put_column(label_width, row_start, axis, tick_color)
    if width >= label_width + 2:  # the right y axis
        canvas.put_column(col_end, row_start, "│" * height_canvas, tick_color)
    canvas.put(col_start - 1, row_start - 1, "└", tick_color)
    canvas.put(col_end, row_start - 1, "┘", tick_color)
    canvas.put(col_start - 1, row_end, "┌", tick_color)
    canvas.put(col_end, row_end, "┐", tick_color)
    lower_axis = ["┬" if i in cticks else "─" for i in range(width_canvas)]
    canvas.put_string(col_start, row_start - 1, lower_axis, tick_color)
    cells = _signal_cells(signals, (xlow, xhigh), (ylow, yhigh), width_canvas, height_canvas)
    for signal, (x, y) in zip(signals, cells):
        if not _draw_signal(canvas, signal, x, y, width_canvas, height_canvas, col_start, row_start):
            return None
    return canvas


def _signal_cells(
    signals: list[_Signal], xlim: tuple[float, float], ylim: tuple[float, float], width: int, height: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each signal's points as matrix cells (braille dots for braille markers), found for all the
    signals of one kind at once (`_matrix_data` is element by element: the same cells)."""
    cells: list[tuple[np.ndarray, np.ndarray]] = [(np.empty(0), np.empty(0))] * len(signals)
    for braille in (True, False):
        picked = [index for index, signal in enumerate(signals) if (signal.marker == "braille") == braille]
        if not picked:
            continue
        xf, yf = (2, 4) if braille else (1, 1)
        xs = _matrix_data(np.concatenate([signals[index].x for index in picked]), xlim, width * xf)
        ys = _matrix_data(np.concatenate([signals[index].y for index in picked]), ylim, height * yf)
        bounds = np.cumsum([signals[index].x.shape[0] for index in picked])[:-1]
        for index, x, y in zip(picked, np.split(xs, bounds), np.split(ys, bounds)):
            cells[index] = (x, y)
    return cells


def _dynamic_column(row: list[str], label: str, coord: int) -> int:
    """plotext's ``correct_coord``: where a label centred near ``coord`` starts, moved to the blank
    cells around it."""
    length = len(label)
    begin, end = max(coord - length + 1, 0), min(coord + length, len(row) - 1)
    blank = [i for i in range(begin, end) if row[i] == SPACE]
    first, last = min(blank, default=coord - length + 1), max(blank, default=coord + length)
    begin, end = last - length + 1, first + length
    return (begin + end - length) // 2


def _draw_signal(
    canvas: _Canvas,
    signal: _Signal,
    x: np.ndarray,
    y: np.ndarray,
    width_canvas: int,
    height_canvas: int,
    col_start: int,
    row_start: int,
) -> bool:
    """One plot call's cells (``x``, ``y``: its points as matrix cells) on the canvas, over what is
    there (False: a dot pattern plotext has no character for)."""
    braille = signal.marker == "braille"
    color = canvas.color(signal.color)
    if not braille and signal.lines and x.shape[0] == 2 and y[0] == y[1]:
        # An episode's bar: ``_lines`` fills every cell from one end to the other on its row.
        row, (first, last) = int(y[0]), sorted(x.tolist())
        first, last = max(first, 0), min(last, width_canvas - 1)
        if 0 <= row < height_canvas and first <= last:
            canvas.markers[row + row_start, first + col_start : last + col_start + 1] = signal.marker
            canvas.colors[row + row_start, first + col_start : last + col_start + 1] = color
        return True
    if signal.lines:
        x, y = _lines(x, y)
    if braille:
        cells_x, cells_y = x // 2, y // 4
        bits = (3 - y % 4) * 2 + x % 2
        keep = (cells_x >= 0) & (cells_x < width_canvas) & (cells_y >= 0) & (cells_y < height_canvas)
        cells = cells_y[keep] * width_canvas + cells_x[keep]
        masks = np.zeros(width_canvas * height_canvas, dtype=np.int64)
        np.bitwise_or.at(masks, cells, np.left_shift(1, bits[keep]))
        drawn = np.unique(cells)
        table = _braille_table()
        markers = [table[mask] for mask in masks[drawn].tolist()]
        if None in markers:
            return False
        rows, cols = drawn // width_canvas + row_start, drawn % width_canvas + col_start
        canvas.markers[rows, cols] = markers
        canvas.colors[rows, cols] = color
        return True
    keep = (x >= 0) & (x < width_canvas) & (y >= 0) & (y < height_canvas)
    rows, cols = y[keep] + row_start, x[keep] + col_start
    canvas.markers[rows, cols] = signal.marker
    canvas.colors[rows, cols] = color
    return True
