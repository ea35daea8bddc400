"""What a chart draws, in data coordinates, for every front end: no screen, no colours, no Rich.

`build_figure` turns the runs to overlay and the `ChartOptions` into a `Figure`: the lines (the
shown run's raw envelope, faint, under TensorBoard's smoothed curve; the other runs' curves; or a
seed group as its members faint, a band and the mean), the thresholds along the series (a band
that follows its baseline, only where the rule judges), the episodes of its findings, marks for
NaN/Inf at their steps and for points clipped by outlier-robust scaling, and the axes with their
ticks. The dashboard's grid and detail screen draw it with plotext (`rltop.ui.chart`), the HTML and
SVG snapshots as SVG paths (`rltop.report.svg_chart`): the same picture on every surface.

Colours are slot names ("raw", "smooth", "other-3", "warn", ...) that each renderer maps to its
palette. Long series are downsampled per column keeping each column's extremes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from rltop.health.bands import BandTrack
from rltop.model.downsample import column_bounds, downsample_minmax
from rltop.model.series import Series
from rltop.model.smoothing import GrowingEma, ema_debiased
from rltop.view.chart.group import GroupLines, aligned_group
from rltop.view.chart.options import ChartOptions
from rltop.view.chart.scale import (
    GrowingLimits,
    YScale,
    choose_scale,
    padded,
    robust_limits,
    x_text,
    x_ticks,
    x_values,
    y_ticks,
)

XRange = tuple[float, float]
THRESHOLD_REACH = 0.35
"""A threshold line within this share of the data's range of it is brought into view."""
Smoothing = Callable[[np.ndarray, float], np.ndarray]
"""`ema_debiased`, or a chart's `GrowingEma.smooth` (the same values)."""
LINE_LEVELS = {"warn_low": "warn", "warn_high": "warn", "crit_low": "crit", "crit_high": "crit"}


@dataclass
class Overlay:
    """One run's series on a chart."""

    run: str
    label: str
    """Its display name (the legend's text)."""
    series: Series
    color: str
    """Palette slot of its curve ("smooth" for the shown run, "other-N" for the others)."""


@dataclass
class Trace:
    """A polyline (NaN breaks it)."""

    x: np.ndarray
    y: np.ndarray
    color: str
    label: str | None = None
    role: str = "line"
    """"raw", "line", "member", "mean" or "threshold"."""


@dataclass
class Area:
    """The region between two curves (a seed group's band)."""

    x: np.ndarray
    low: np.ndarray
    high: np.ndarray
    color: str
    label: str = ""


@dataclass
class Marks:
    """Single glyphs at points: NaN/Inf at their steps, clipped points at the edge."""

    x: np.ndarray
    y: np.ndarray
    glyph: str
    color: str
    kind: str
    """"nan", "inf", "-inf", "clipped-high" or "clipped-low"."""


@dataclass
class Span:
    """An episode of a finding (from its first to its last step), shaded."""

    first: float
    last: float
    color: str


@dataclass
class Figure:
    """Everything a renderer needs; y values are in drawing units (after `scale`)."""

    traces: list[Trace] = field(default_factory=list)
    areas: list[Area] = field(default_factory=list)
    thresholds: list[Trace] = field(default_factory=list)
    marks: list[Marks] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    xlim: tuple[float, float] = (0.0, 1.0)
    ylim: tuple[float, float] = (0.0, 1.0)
    xticks: tuple[list[float], list[str]] = ([], [])
    yticks: tuple[list[float], list[str]] = ([], [])
    scale: YScale = field(default_factory=YScale)
    x_mode: str = "step"
    clipped: int = 0
    """Points outside the y range (outlier-robust scaling), marked at the edge."""
    off_chart: list[str] = field(default_factory=list)
    """Threshold lines too far from the data to draw ("crit_high")."""
    group: GroupLines | None = None
    cut: list[tuple[str, str]] = field(default_factory=list)
    """(label, its own x range as text) of each overlaid run cut to the shown run's x range: the
    legend and the caption say so."""

    @property
    def empty(self) -> bool:
        """Nothing to draw."""
        return not any(trace.x.shape[0] for trace in self.traces)


def visible_range(extent: tuple[float, float], options: ChartOptions) -> tuple[float, float]:
    """The x range shown: an explicit window, the last share of the run, or all of it."""
    low, high = extent
    if options.window is not None:
        start, end = max(low, options.window[0]), min(high, options.window[1])
        if end > start:
            return start, end
    if options.zoom:
        return max(low, high - (high - low) * options.zoom), high
    return low, high


def full_extent(overlays: Sequence[Overlay], mode: str) -> tuple[float, float] | None:
    """The x range of all points of ``overlays`` (None when none has a point)."""
    extents = [x_values(o.series, mode) for o in overlays if len(o.series)]
    if not extents:
        return None
    return min(float(x[0]) for x in extents), max(float(x[-1]) for x in extents)


def chart_extent(main: Overlay, others: Sequence[Overlay], options: ChartOptions) -> XRange | None:
    """The x range before any zoom: the shown run's own, so that a longer run overlaid never squeezes
    it into a few columns (the others are cut to it); every run's with ``fit_all``, or when the
    shown run has no point yet."""
    if not options.fit_all and len(main.series):
        return full_extent([main], options.x_mode)
    return full_extent([main, *others], options.x_mode)


def figure_range(main: Overlay, others: Sequence[Overlay], options: ChartOptions) -> XRange | None:
    """The x range a chart of ``main`` and ``others`` shows with ``options`` (zoom and window applied)."""
    extent = chart_extent(main, others, options)
    return None if extent is None else visible_range(extent, options)


def cut_runs(
    main: Overlay, others: Sequence[Overlay], options: ChartOptions
) -> list[tuple[Overlay, float, float]]:
    """(run, first x, last x) of each of ``others`` that reaches outside the x range before zoom:
    the runs the chart cuts to the shown run's range (empty with ``fit_all``)."""
    extent = chart_extent(main, others, options)
    if extent is None or options.fit_all:
        return []
    cut = []
    for other in others:
        own = full_extent([other], options.x_mode)
        if own is not None and (own[0] < extent[0] or own[1] > extent[1]):
            cut.append((other, own[0], own[1]))
    return cut


@dataclass
class FigureMemo:
    """What one chart keeps from figure to figure: the shown run's smoothed curves, extended rather
    than computed again when its series only grew (`GrowingEma`), and its values sorted for the y
    range (`GrowingLimits`). The dashboard's charts are built anew at every new point; the figure
    is the same with or without it."""

    curve: GrowingEma = field(default_factory=GrowingEma)
    held: GrowingEma = field(default_factory=GrowingEma)
    """The curve with the points off the chart held at its edge (`_smoothed_within`)."""
    limits: GrowingLimits = field(default_factory=GrowingLimits)
    """The y range's edges: the values drawn kept sorted."""


@dataclass
class _Shown:
    """One overlay's points inside the x range."""

    overlay: Overlay
    x: np.ndarray
    values: np.ndarray
    smooth: np.ndarray
    start: int


def _shown(
    overlay: Overlay, mode: str, weight: float, low: float, high: float, smooth: Smoothing = ema_debiased
) -> _Shown:
    xs = x_values(overlay.series, mode)
    first, last = int(np.searchsorted(xs, low, side="left")), int(np.searchsorted(xs, high, side="right"))
    curve = smooth(overlay.series.values, weight)[first:last]
    return _Shown(overlay, xs[first:last], overlay.series.values[first:last], curve, int(first))


def build_figure(
    main: Overlay,
    others: list[Overlay],
    options: ChartOptions,
    columns: int,
    band: BandTrack | None = None,
    spans: list[tuple[int, int, str]] | None = None,
    members: list[Overlay] | None = None,
    tick_counts: tuple[int, int] = (6, 5),
    memo: FigureMemo | None = None,
) -> Figure:
    """The figure of ``main`` (with ``others`` overlaid, or as one of its seed group's ``members``).

    ``band``: the thresholds along ``main.series`` (`rltop.health.bands`); ``spans``: the
    (first step, last step, "warn"/"crit") of its findings' episodes; ``columns``: the horizontal
    resolution the renderer has (braille dots, pixels); ``memo``: what the chart kept from its last
    figure (`FigureMemo`), for a chart built again and again.
    """
    mode = options.x_mode
    group_view = bool(members) and len(members) > 1
    overlaid = [*others, *(members or [])[1:]]
    shown_range = figure_range(main, overlaid, options)
    if shown_range is None:
        return Figure(x_mode=mode)
    low, high = shown_range
    weight = options.smoothing
    shown_main = _shown(main, mode, weight, low, high, ema_debiased if memo is None else memo.curve.smooth)
    shown_others = [_shown(o, mode, weight, low, high) for o in others]
    figure = Figure(x_mode=mode)
    figure.cut = [
        (o.label, f"{x_text(first, mode)}–{x_text(last, mode)}")
        for o, first, last in cut_runs(main, overlaid, options)
    ]
    cut_labels = dict(figure.cut)
    raw_values = shown_main.values
    drawn = [shown_main.values] if not group_view else []
    drawn += [s.smooth for s in shown_others]
    scale = choose_scale(options.log_y, np.concatenate([raw_values, *drawn]) if drawn else raw_values)
    figure.scale = scale
    if group_view:
        figure.group = aligned_group(members, mode, weight, low, high, options.band)
        drawn += [figure.group.low, figure.group.high, figure.group.mean]
        drawn += [m for m in figure.group.members]
    find_limits = robust_limits if memo is None else memo.limits.limits
    values_drawn = scale.forward(np.concatenate(drawn)) if drawn else np.array([])
    limits = find_limits(values_drawn, options.ignore_outliers)
    if limits is None:
        figure.xlim = (low, high if high > low else low + 1.0)
        return figure
    ylow, yhigh = _with_thresholds(limits, band, shown_main, scale)
    ylow, yhigh = padded(ylow, yhigh)
    figure.ylim = (ylow, yhigh)
    figure.xlim = (low, high if high > low else low + 1.0)
    if group_view:
        _group_traces(figure, scale, columns)
    else:
        figure.traces += _raw_envelope(shown_main, scale, columns, figure)
        with np.errstate(invalid="ignore"):
            drawn_main = scale.forward(shown_main.values)
            figure.clipped = int(((drawn_main < ylow) | (drawn_main > yhigh)).sum())
    for shown in shown_others:
        label = shown.overlay.label
        if label in cut_labels:  # on the chart itself: this run is longer than the range shown
            label = f"{label} (cut; {cut_labels[label]})"
        figure.traces.append(_line(shown, scale, columns, figure, label, "line"))
    if not group_view:
        if figure.clipped:
            held = ema_debiased if memo is None else memo.held.smooth
            shown_main = _smoothed_within(shown_main, scale, weight, figure.ylim, held)
        own = _line(shown_main, scale, columns, figure, main.label if others else None, "line")
        figure.traces.append(own)
    figure.thresholds = _threshold_traces(band, shown_main, scale, columns, figure)
    for shown in [shown_main, *shown_others]:
        figure.marks += _non_finite_marks(
            shown, figure, columns, "crit" if shown is shown_main else shown.overlay.color
        )
    figure.spans = _spans(spans or [], main.series, mode, low, high)
    figure.xticks = x_ticks(figure.xlim[0], figure.xlim[1], mode, tick_counts[0])
    figure.yticks = y_ticks(ylow, yhigh, scale, tick_counts[1])
    return figure


def _smoothed_within(
    shown: _Shown, scale: YScale, weight: float, ylim: tuple[float, float], smooth: Smoothing = ema_debiased
) -> _Shown:
    """``shown`` with its smoothed curve computed from the values as drawn: a point off the chart
    counts at the edge it is marked at (``↑``/``↓``), not at its own height.

    Outlier-robust scaling leaves a spike off the chart; averaged in at its full height it would hold
    the smoothed curve at the edge for many points after the values are back (a 1.6e6 value-loss
    spike over values near 1: 16 steps pinned at the top), hiding the recovery. Counted at the edge,
    it still lifts the curve, which comes back with the values within a few points.
    """
    values = shown.overlay.series.values
    with np.errstate(invalid="ignore"):
        drawn = scale.forward(values)
        high, low = np.isfinite(values) & (drawn > ylim[1]), np.isfinite(values) & (drawn < ylim[0])
    if not (high.any() or low.any()):
        return shown
    edges = scale.inverse(np.array([ylim[0], ylim[1]]))
    held = np.where(high, edges[1], np.where(low, edges[0], values))
    curve = smooth(held, weight)
    end = shown.start + len(shown.x)
    return _Shown(shown.overlay, shown.x, shown.values, curve[shown.start : end], shown.start)


def _with_thresholds(
    limits: tuple[float, float], band: BandTrack | None, shown: _Shown, scale: YScale
) -> tuple[float, float]:
    """The y range, widened to the threshold lines near the data (a far one would flatten it)."""
    low, high = limits
    if band is None or not len(band):
        return low, high
    span = max(high - low, abs(high) * 0.1, 1e-12)
    reach_low, reach_high = low - THRESHOLD_REACH * span, high + THRESHOLD_REACH * span
    lines = scale.forward(_band_slice(band, shown))
    for line in lines:
        finite = line[np.isfinite(line)]
        near = finite[(finite >= reach_low) & (finite <= reach_high)]
        if near.size:
            low, high = min(low, float(near.min())), max(high, float(near.max()))
    return low, high


def _band_slice(band: BandTrack, shown: _Shown) -> np.ndarray:
    """The band at the shown points. A live series can be a few points ahead of the band computed
    for it (the chart is drawn later): those points keep the band's last thresholds."""
    end = shown.start + len(shown.x)
    lines = band.lines[:, shown.start : end]
    missing = len(shown.x) - lines.shape[1]
    if missing > 0:
        last = band.lines[:, -1:] if len(band) else np.full((4, 1), np.nan)
        lines = np.concatenate((lines, np.repeat(last, missing, axis=1)), axis=1)
    return lines


def _columns_of(count: int, columns: int) -> tuple[np.ndarray, np.ndarray]:
    """(centre index, last index) of each column over ``count`` points."""
    bounds = column_bounds(count, columns)
    return (bounds[:-1] + bounds[1:] - 1) // 2, bounds[1:] - 1


def _clip(y: np.ndarray, figure: Figure) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``y`` held inside the y range, and masks of the points clipped above and below."""
    low, high = figure.ylim
    with np.errstate(invalid="ignore"):
        above, below = y > high, y < low
    return np.clip(y, low, high), above, below


def _raw_envelope(shown: _Shown, scale: YScale, columns: int, figure: Figure) -> list[Trace]:
    """The raw values, faint: every point, or each column's minimum and maximum (spikes stay);
    the points outlier-robust scaling left out are marked at the edge."""
    count = len(shown.x)
    if count == 0:
        return []
    if count <= columns:
        rows = [(shown.x, scale.forward(shown.values))]
    else:
        centres, _ = _columns_of(count, columns)
        lows, highs = downsample_minmax(shown.values, columns)
        rows = [(shown.x[centres], scale.forward(lows)), (shown.x[centres], scale.forward(highs))]
    traces = []
    above_x, below_x = [], []
    for x, y in rows:
        keep = np.isfinite(y)
        clipped, above, below = _clip(y[keep], figure)
        above_x.append(x[keep][above])
        below_x.append(x[keep][below])
        traces.append(Trace(x[keep], clipped, "raw", role="raw"))
    low, high = figure.ylim
    for xs, y, glyph, kind in ((above_x, high, "↑", "clipped-high"), (below_x, low, "↓", "clipped-low")):
        x = np.unique(np.concatenate(xs))
        if x.shape[0]:
            figure.marks.append(Marks(x, np.full(x.shape[0], y), glyph, "raw", kind))
    return traces


def _line(shown: _Shown, scale: YScale, columns: int, figure: Figure, label: str | None, role: str) -> Trace:
    """A smoothed curve (at each column's last point when there are more points than columns)."""
    x, y = shown.x, scale.forward(shown.smooth)
    if len(x) > columns:
        _, ends = _columns_of(len(x), columns)
        x, y = x[ends], y[ends]
    keep = np.isfinite(y)
    return Trace(x[keep], _clip(y[keep], figure)[0], shown.overlay.color, label, role)


def _group_traces(figure: Figure, scale: YScale, columns: int) -> None:
    """A seed group: the members faint, the band between them, the mean on top."""
    group = figure.group
    assert group is not None
    x = group.x
    picks = np.arange(len(x)) if len(x) <= columns else _columns_of(len(x), columns)[1]
    for member in group.members:
        y = scale.forward(member[picks])
        keep = np.isfinite(y)
        figure.traces.append(Trace(x[picks][keep], _clip(y[keep], figure)[0], "member", role="member"))
    low, high = scale.forward(group.low), scale.forward(group.high)
    if len(x) > columns:
        bounds = column_bounds(len(x), columns)[:-1]
        low = np.fmin.reduceat(np.where(np.isfinite(low), low, np.inf), bounds)
        high = np.fmax.reduceat(np.where(np.isfinite(high), high, -np.inf), bounds)
        band_x = x[_columns_of(len(x), columns)[0]]
    else:
        band_x = x
    keep = np.isfinite(low) & np.isfinite(high)
    figure.areas.append(
        Area(
            band_x[keep], _clip(low[keep], figure)[0], _clip(high[keep], figure)[0], "band", group.band_label
        )
    )
    mean = scale.forward(group.mean[picks])
    keep = np.isfinite(mean)
    figure.traces.append(Trace(x[picks][keep], _clip(mean[keep], figure)[0], "smooth", group.label, "mean"))


def _threshold_traces(
    band: BandTrack | None, shown: _Shown, scale: YScale, columns: int, figure: Figure
) -> list[Trace]:
    """The threshold lines along the shown points, only where they apply and within the y range."""
    if band is None or not len(shown.x):
        return []
    count = len(shown.x)
    lines = _band_slice(band, shown)
    picks = np.arange(count) if count <= columns else _columns_of(count, columns)[1]
    low, high = figure.ylim
    traces = []
    for name, line in zip(LINE_LEVELS, lines):
        y = scale.forward(line[picks])
        if not np.isfinite(y).any():
            continue
        with np.errstate(invalid="ignore"):
            inside = (y >= low) & (y <= high)
        if not inside.any():
            figure.off_chart.append(name)
            continue
        drawn = np.where(inside, y, np.nan)
        traces.append(Trace(shown.x[picks], drawn, LINE_LEVELS[name], name, "threshold"))
    return traces


def _non_finite_marks(shown: _Shown, figure: Figure, columns: int, color: str) -> list[Marks]:
    """NaN at the top edge (``×``), +Inf at the top and -Inf at the bottom (``∞``), at their steps."""
    values = shown.values
    bad = ~np.isfinite(values)
    if not bad.any():
        return []
    low, high = figure.ylim
    marks = []
    for kind, mask, y, glyph in (
        ("nan", np.isnan(values), high, "×"),
        ("inf", values == np.inf, high, "∞"),
        ("-inf", values == -np.inf, low, "∞"),
    ):
        x = _one_per_column(shown.x[mask], figure.xlim, columns)
        if x.shape[0]:
            marks.append(Marks(x, np.full(x.shape[0], y), glyph, color, kind))
    return marks


def _one_per_column(x: np.ndarray, xlim: tuple[float, float], columns: int) -> np.ndarray:
    """Positions, at most one per column (a thousand NaNs in one column are one mark)."""
    if x.shape[0] <= 1:
        return x
    span = (xlim[1] - xlim[0]) or 1.0
    cells = np.floor((x - xlim[0]) / span * max(columns, 1)).astype(np.int64)
    _, first = np.unique(cells, return_index=True)
    return x[np.sort(first)]


def _spans(
    spans: list[tuple[int, int, str]], series: Series, mode: str, low: float, high: float
) -> list[Span]:
    """Episodes as x ranges (steps mapped to the axis), cut to the visible range."""
    if not spans or not len(series):
        return []
    xs = x_values(series, mode)
    steps = series.steps
    result = []
    for first, last, color in spans:
        start = xs[min(int(np.searchsorted(steps, first, side="left")), len(xs) - 1)]
        end = xs[max(int(np.searchsorted(steps, last, side="right")) - 1, 0)]
        start, end = max(float(start), low), min(float(end), high)
        if end >= start:
            result.append(Span(start, end, color))
    return result
