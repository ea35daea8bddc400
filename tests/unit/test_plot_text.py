"""The numpy chart renderer (`rltop.ui.plot_text`) against plotext itself: the same text, character
for character and colour for colour, on a few hundred figures, and the same plot area for the cursor.

The figures come from the real chart model (`build_figure`): random walks, spikes that outlier-robust
scaling clips, NaN/Inf, gaps, flat series, a handful of points, steep drops, thresholds along the
series, episodes, log and symlog axes, time axes, zoom; and at the sizes the grid and the detail
screen draw (44 x 11 up to 200 x 40, and the smallest plotext allows).
"""

from __future__ import annotations

import numpy as np
import plotext._utility as ut
import pytest

from rltop.health.bands import BandTrack
from rltop.model.series import Series
from rltop.ui import plot_text
from rltop.ui.chart import SPAN_GLYPH, Canvas, _canvas, plotext_text, render_figure
from rltop.view.chart.data import Figure, Marks, Overlay, Span, Trace, build_figure
from rltop.view.chart.options import ChartOptions

PALETTE = {
    "raw": (90, 90, 110), "smooth": (80, 160, 240), "warn": (230, 180, 40), "crit": (230, 60, 60),
    "axes": (128, 128, 128), "band": (40, 40, 60), "member": (100, 100, 100),
    **{f"other-{i}": (20 * i, 200 - 10 * i, 100) for i in range(1, 8)},
}  # fmt: skip
SIZES = [(44, 11), (46, 9), (58, 12), (94, 14), (120, 30), (200, 40), (10, 5), (20, 6)]


def _series(values: np.ndarray, steps: np.ndarray | None = None) -> Series:
    steps = np.arange(1, len(values) + 1) if steps is None else steps
    out = Series("train/x")
    out.append(steps.astype(np.int64), 1.7e9 + 10.0 * np.arange(len(values)), values, single_precision=False)
    return out


def _values(rng: np.random.Generator, kind: str, count: int) -> np.ndarray:
    if kind == "walk":
        return np.cumsum(rng.normal(0, 1, count)) * 10 ** rng.uniform(-4, 4)
    if kind == "noise":
        return rng.normal(rng.uniform(-5, 5), 10 ** rng.uniform(-6, 1), count)
    if kind == "rise":
        steps = np.arange(count)
        return 0.2 + 0.6 * (1 - np.exp(-steps / max(count / 8, 1))) + rng.normal(0, 0.01, count)
    if kind == "spikes":
        values = rng.normal(1.0, 0.05, count)
        values[rng.integers(0, count, max(1, count // 50))] *= 10 ** rng.uniform(1, 6)
        return values
    if kind == "flat":
        return np.full(count, rng.choice([0.0, 1.0, -3.5, 1e-9]))
    if kind == "steps":
        return np.repeat(rng.normal(0, 1, count // 7 + 1), 7)[:count]
    if kind == "nonfinite":
        values = rng.normal(0, 1, count)
        values[rng.integers(0, count, max(1, count // 20))] = rng.choice([np.nan, np.inf, -np.inf])
        return values
    if kind == "positive":
        return 10 ** rng.uniform(-3, 6, count)
    raise ValueError(kind)


def _band(rng: np.random.Generator, values: np.ndarray) -> BandTrack:
    finite = values[np.isfinite(values)]
    centre = float(np.median(finite)) if finite.size else 0.0
    spread = float(np.std(finite)) if finite.size else 1.0
    lines = np.full((4, len(values)), np.nan)
    start = int(rng.integers(0, max(1, len(values) // 2)))
    for row, share in enumerate((-1.0, 1.0, -2.5, 2.5)):
        if rng.random() < 0.8:
            lines[row, start:] = centre + share * spread * rng.uniform(0.5, 3)
    return BandTrack(lines)


def _figures(seed: int, count: int) -> list[tuple[Figure, int, int, bool]]:
    rng = np.random.default_rng(seed)
    kinds = ["walk", "noise", "rise", "spikes", "flat", "steps", "nonfinite", "positive"]
    out = []
    while len(out) < count:
        points = int(rng.choice([1, 2, 3, 5, 17, 60, 200, 1000, 5000, 20000]))
        values = _values(rng, kinds[int(rng.integers(len(kinds)))], points)
        steps = np.cumsum(rng.integers(1, 4, points)) if rng.random() < 0.3 else None
        series = _series(values, steps)
        options = ChartOptions(
            smoothing=float(rng.choice([0.0, 0.6, 0.9])),
            x_mode=str(rng.choice(["step", "step", "relative", "wall"])),
            log_y=bool(rng.random() < 0.25),
            ignore_outliers=bool(rng.random() < 0.7),
            zoom=float(rng.choice([0.0, 0.0, 0.25])) or None,
        )
        width, height = SIZES[int(rng.integers(len(SIZES)))]
        band = _band(rng, values) if rng.random() < 0.4 else None
        last = int(series.steps[-1])
        spans = (
            [(int(rng.integers(1, last + 1)), last, str(rng.choice(["warn", "crit"])))]
            if rng.random() < 0.3
            else []
        )
        ticks = ((4, 3), (6, 5))[int(rng.integers(2))]
        overlay = Overlay("a", "a", series, "smooth")
        figure = build_figure(overlay, [], options, max(10, 2 * width), band, spans,
                              None, ticks)  # fmt: skip
        if not figure.empty:
            out.append((figure, width, height, bool(rng.random() < 0.3)))
    return out


def _both(figure: Figure, width: int, height: int, legend: bool = False) -> tuple[str | None, str]:
    width, height = max(10, width), max(5, height)
    fast = plot_text.render_text(figure, width, height, PALETTE, legend, SPAN_GLYPH)
    return fast, plotext_text(figure, width, height, PALETTE, legend)


@pytest.mark.parametrize("seed", range(6))
def test_the_same_text_as_plotext_on_model_figures(seed):
    drawn = 0
    for figure, width, height, legend in _figures(seed, 40):
        fast, reference = _both(figure, width, height, legend)
        if fast is None:
            continue
        drawn += 1
        assert fast == reference, (seed, width, height, figure.xlim, figure.ylim)
    assert drawn >= 30  # the model's figures are what the fast path is for


def test_the_plot_area_is_the_same_for_the_cursor():
    for figure, width, height, _ in _figures(11, 20):
        fast, reference = _both(figure, width, height)
        assert fast is not None
        assert (
            _canvas(ut.uncolorize(reference), figure.xlim)
            == render_figure(figure, width, height, PALETTE, False)[1]
        )


def _hand_figure(**changes) -> Figure:
    figure = Figure(
        traces=[Trace(np.array([1.0, 50.0, 51.0, 100.0]), np.array([0.0, 1.0, -1.0, 0.5]), "smooth")],
        xlim=(1.0, 100.0),
        ylim=(-1.2, 1.2),
        xticks=([20.0, 40.0, 60.0, 80.0], ["20", "40", "60", "80"]),
        yticks=([-1.0, 0.0, 1.0], ["-1", "0", "1"]),
    )
    for name, value in changes.items():
        setattr(figure, name, value)
    return figure


@pytest.mark.parametrize(
    "changes",
    [
        {},
        # x labels that collide: plotext keeps the first it writes (in its own order) and skips the rest
        {
            "xticks": (
                [10.0, 11.0, 12.0, 90.0, 99.0, 100.0],
                ["10000", "11000", "12000", "90000", "99000", "1e5"],
            )
        },
        # ticks outside the range, labels off the edges, a tick label longer than the canvas
        {"xticks": ([-50.0, 1.0, 100.0, 180.0], ["-50", "1", "100", "180"])},
        {"yticks": ([-5.0, -1.2, 1.2, 3.0], ["-5.000", "-1.2", "1.2", "3"])},
        {"xticks": ([50.0], ["a label wider than the whole chart is"])},
        # y labels on one row overwrite each other in plotext's order
        {"yticks": ([0.0, 0.01, 0.02], ["0", "0.01", "0.02"])},
        # episodes, glyph marks at the edges, a single point, a threshold with a gap
        {"spans": [Span(10.0, 30.0, "warn"), Span(60.0, 100.0, "crit")]},
        {
            "marks": [
                Marks(np.array([5.0, 50.0, 100.0]), np.array([1.2, 1.2, 1.2]), "↑", "raw", "clipped-high"),
                Marks(np.array([20.0]), np.array([-1.2]), "∞", "crit", "-inf"),
            ]
        },  # fmt: skip
        {"traces": [Trace(np.array([42.0]), np.array([0.3]), "smooth")]},
        {
            "thresholds": [
                Trace(np.array([1.0, 30.0, 60.0, 100.0]), np.array([1.0, 1.0, np.nan, 1.1]), "warn")
            ]
        },
        # the same colour for the line and the axes: one run of colour in plotext's text
        {"traces": [Trace(np.array([1.0, 100.0]), np.array([-1.2, 1.2]), "axes")]},
        # points outside the limits are left out, as plotext leaves them out
        {"traces": [Trace(np.array([-20.0, 1.0, 100.0, 130.0]), np.array([-3.0, 0.0, 1.0, 5.0]), "smooth")]},
    ],
)
def test_the_same_text_on_edge_cases(changes):
    figure = _hand_figure(**changes)
    for width, height in SIZES:
        fast, reference = _both(figure, width, height)
        assert fast is not None and fast == reference, (changes, width, height)


def test_plotext_draws_what_the_fast_path_does_not_cover():
    no_ticks = _hand_figure(xticks=([], []))
    legend = _hand_figure(
        traces=[Trace(np.array([1.0, 100.0]), np.array([0.0, 1.0]), "smooth", label="run a")]
    )
    nan_mark = _hand_figure(marks=[Marks(np.array([np.nan]), np.array([1.0]), "×", "crit", "nan")])
    for figure, use_legend in ((no_ticks, False), (legend, True), (nan_mark, False)):
        assert plot_text.render_text(figure, 60, 12, PALETTE, use_legend, SPAN_GLYPH) is None
        text, canvas = render_figure(figure, 60, 12, PALETTE, use_legend)
        assert text == plotext_text(figure, 60, 12, PALETTE, use_legend)
    assert isinstance(render_figure(_hand_figure(), 60, 12, PALETTE, False)[1], Canvas)


def test_the_switch_sends_every_chart_to_plotext(monkeypatch):
    figure = _hand_figure()
    monkeypatch.setattr(plot_text, "ENABLED", False)
    assert plot_text.render_text(figure, 60, 12, PALETTE, False, SPAN_GLYPH) is None
    assert render_figure(figure, 60, 12, PALETTE, False)[0] == plotext_text(figure, 60, 12, PALETTE, False)


def test_points_land_in_plotexts_cells_at_the_cell_edges():
    rng = np.random.default_rng(5)
    for bins, low, high in (
        (188, 1.0, 20000.0),
        (28, -0.0213, 0.0687),
        (2, 0.0, 1.0),
        (400, 1.7e9, 1.7e9 + 7200),
    ):
        edges = low + (high - low) * (np.arange(bins + 1) - 0.5) / (bins - 1)
        values = np.concatenate([edges, np.nextafter(edges, np.inf), np.nextafter(edges, -np.inf),
                                 rng.uniform(low, high, 500)])  # fmt: skip
        fast = plot_text._matrix_data(values, (low, high), bins).tolist()
        assert fast == ut.get_matrix_data(values.tolist(), [low, high], bins)


def test_segments_are_filled_as_plotext_fills_them():
    rng = np.random.default_rng(6)
    for count in (1, 2, 3, 50, 400):
        x, y = np.sort(rng.integers(0, 300, count)), rng.integers(0, 60, count)
        xs, ys = plot_text._lines(x, y)
        reference = ut.get_lines(x.tolist(), y.tolist(), ["braille"] * count)
        assert (xs.tolist(), ys.tolist()) == (reference[0], reference[1])


def test_chart_texts_decode_to_the_text_rich_makes_of_them():
    from rich.text import Text

    from rltop.ui.ansi_text import text_from_ansi

    texts = [
        plotext_text(figure, max(10, w), max(5, h), PALETTE, False) for figure, w, h, _ in _figures(3, 25)
    ]
    texts += ["", "plain\nlines\n", "\x1b[38;2;1;2;3mred\x1b[0m \x1b[1mbold\x1b[38;5;9m more\x1b[m\n\x1b[0mx"]
    # control codes: stripped, as Rich does
    texts += ["\x1b[38;2;1;2;3mbe\x07ll\x1b[0m\x08\x1b[1m\x07\x1b[0m"]
    for ansi in texts:
        assert text_from_ansi(ansi) == Text.from_ansi(ansi, no_wrap=True)
        assert text_from_ansi(ansi).no_wrap
    odd = "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ \x1b[2Jcleared\rover"  # other escapes: Rich decodes them
    assert text_from_ansi(odd) == Text.from_ansi(odd, no_wrap=True)


def _lines_both_ways(figure: Figure, width: int, height: int, legend: bool = False):
    """(`render_lines`' lines, the lines decoded from `render_text`'s ANSI text), or None."""
    from rltop.ui.ansi_text import lines_from_ansi

    width, height = max(10, width), max(5, height)
    drawn = plot_text.render_lines(figure, width, height, PALETTE, legend, SPAN_GLYPH)
    text = plot_text.render_text(figure, width, height, PALETTE, legend, SPAN_GLYPH)
    assert (drawn is None) == (text is None)
    return None if drawn is None else (drawn, lines_from_ansi(text))


@pytest.mark.parametrize("seed", range(4))
def test_lines_drawn_directly_are_the_decoded_text(seed):
    """The fast path's lines (no ANSI text) equal the decoded ANSI text, span for span, and the
    plot area found in them is the one found in the text."""
    from rltop.ui.chart import draw_figure

    drawn = 0
    for figure, width, height, legend in _figures(seed, 40):
        both = _lines_both_ways(figure, width, height, legend)
        if both is None:
            continue
        drawn += 1
        (lines, _), reference = both
        assert lines == reference, (seed, width, height)
        assert [line.spans for line in lines] == [line.spans for line in reference]
        assert (
            draw_figure(figure, width, height, PALETTE, legend).canvas
            == render_figure(figure, width, height, PALETTE, legend)[1]
        )
    assert drawn >= 25


def test_lines_drawn_directly_on_edge_cases():
    """The hand-made figures (colliding labels, marks, single points, the axes' own colour)."""
    for changes in ({}, {"traces": [Trace(np.array([1.0, 100.0]), np.array([-1.2, 1.2]), "axes")]},
                    {"spans": [Span(10.0, 30.0, "warn"), Span(60.0, 100.0, "crit")]}):  # fmt: skip
        for width, height in SIZES:
            (lines, _), reference = _lines_both_ways(_hand_figure(**changes), width, height)
            assert lines == reference


def test_the_drawing_key_tells_pictures_apart():
    """Equal cells and colours give equal keys; a moved point, another colour or size does not."""
    one = plot_text.render_lines(_hand_figure(), 60, 12, PALETTE, False, SPAN_GLYPH)[1]
    assert plot_text.render_lines(_hand_figure(), 60, 12, PALETTE, False, SPAN_GLYPH)[1] == one
    moved = _hand_figure(traces=[Trace(np.array([1.0, 50.0, 51.0, 100.0]), np.array([0.0, 1.0, -1.0, 1.1]),
                                       "smooth")])  # fmt: skip
    recoloured = {**PALETTE, "smooth": (1, 2, 3)}
    assert plot_text.render_lines(moved, 60, 12, PALETTE, False, SPAN_GLYPH)[1] != one
    assert plot_text.render_lines(_hand_figure(), 60, 12, recoloured, False, SPAN_GLYPH)[1] != one
    assert plot_text.render_lines(_hand_figure(), 61, 12, PALETTE, False, SPAN_GLYPH)[1] != one


def test_lines_are_decoded_from_the_text_where_the_cells_cannot_give_them(monkeypatch):
    """A control character in a label, the switch off, a figure plotext draws: the lines come from
    the decoded ANSI text, as before."""
    from rltop.ui.ansi_text import lines_from_ansi
    from rltop.ui.chart import draw_figure

    for control in ("\x07", "\x1b", "\x1b[31m", "\n", "\x00", "\t", "\x7f"):
        odd = _hand_figure(xticks=([20.0, 60.0], [f"2{control}0", "60"]))
        assert plot_text.render_lines(odd, 60, 12, PALETTE, False, SPAN_GLYPH) is None, repr(control)
        text, canvas = render_figure(odd, 60, 12, PALETTE, False)
        drawing = draw_figure(odd, 60, 12, PALETTE, False)
        assert (drawing.key, drawing.canvas) == (text, canvas)
        decoded = lines_from_ansi(text)  # (a lone ESC: Rich's decoder, whose styles differ call to call)
        assert [line.plain for line in drawing.lines] == [line.plain for line in decoded]
        assert control == "\x1b" or drawing.lines == decoded
    legend = _hand_figure(traces=[Trace(np.array([1.0, 100.0]), np.array([0.0, 1.0]), "smooth", label="a")])
    assert draw_figure(legend, 60, 12, PALETTE, True).lines == lines_from_ansi(
        plotext_text(legend, 60, 12, PALETTE, True)
    )
    monkeypatch.setattr(plot_text, "DRAW_LINES", False)
    assert plot_text.render_lines(_hand_figure(), 60, 12, PALETTE, False, SPAN_GLYPH) is None
    text = render_figure(_hand_figure(), 60, 12, PALETTE, False)[0]
    assert draw_figure(_hand_figure(), 60, 12, PALETTE, False).key == text


def test_lines_kept_from_the_last_drawing_are_the_lines_drawn_anew():
    """A chart drawn again with its last drawing's lines kept: the lines equal a fresh drawing's,
    and the rows whose cells did not change are the last drawing's own lines (nothing rebuilt)."""
    rng = np.random.default_rng(8)
    values = np.cumsum(rng.normal(0, 1, 3000))
    kept: dict = {}
    before = None
    for end in (2000, 2001, 2002, 2500, 2500):
        overlay = Overlay("a", "a", _series(values[:end]), "smooth")
        figure = build_figure(overlay, [], ChartOptions(), 188, None, [], None, (4, 3))
        lines, _ = plot_text.render_lines(figure, 94, 14, PALETTE, False, SPAN_GLYPH, kept)
        fresh, _ = plot_text.render_lines(figure, 94, 14, PALETTE, False, SPAN_GLYPH)
        assert lines == fresh
        if before is not None:
            same = [line is old for line, old in zip(lines[:-1], before[:-1])]
            equal = [line == old for line, old in zip(lines[:-1], before[:-1])]
            assert same == equal  # every unchanged row is the kept line itself
        before = lines
    recoloured = {**PALETTE, "smooth": (1, 2, 3)}
    lines, _ = plot_text.render_lines(figure, 94, 14, recoloured, False, SPAN_GLYPH, kept)
    assert lines == plot_text.render_lines(figure, 94, 14, recoloured, False, SPAN_GLYPH)[0]


def test_marks_of_any_float_type_land_where_plotext_puts_them():
    """The cells of every signal are found together in float64: marks given as float16 or float32
    land where plotext (Python floats) puts them."""
    for dtype in (np.float16, np.float32):
        marks = Marks(np.array([5.0, 33.3, 77.7], dtype=dtype), np.array([1.2, 0.5, -1.2], dtype=dtype),
                      "↑", "raw", "clipped-high")  # fmt: skip
        figure = _hand_figure(marks=[marks], spans=[Span(10.0, 30.0, "warn")])
        for width, height in SIZES:
            fast, reference = _both(figure, width, height)
            assert fast == reference, (dtype, width, height)
