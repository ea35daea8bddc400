"""A `rltop.view.chart.data.Figure` as an inline SVG chart: the report's twin of the terminal chart.

Paths are built from the figure's downsampled lines (each column's extremes kept, so a spike stays
visible); episodes of findings are shaded bands, a seed group's band is a filled area, thresholds
are dashed, NaN/Inf and clipped points are glyphs at the edge, as on the dashboard. Every string
that came from a log is made visible (`rltop.view.text.safe.visible`) and XML-escaped. The result
is an ``<svg>`` element with no external reference, to inline in HTML or nest in an SVG document.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from html import escape

import numpy as np

from rltop.view.chart.data import Figure
from rltop.view.text.fit import fit_path
from rltop.view.text.safe import visible

DARK = {
    "background": "#1b1f27", "panel": "#232a35", "text": "#d8dee9", "muted": "#8a96a6", "grid": "#323b48",
    "raw": "#5b6677", "smooth": "#7cc4f0", "warn": "#e9c46a", "crit": "#ff5f5f", "ok": "#52b788",
    "band": "#7cc4f0", "member": "#7d93ab", "other-1": "#c77dff", "other-2": "#f4a259", "other-3": "#4dd4c6",
    "other-4": "#f28fad", "other-5": "#a3d977", "other-6": "#e8e8e8", "other-7": "#4f7cff",
}  # fmt: skip
"""The SVG report's colours (rltop-dark's, on the dark background of Rich's SVG export)."""
LIGHT = {
    "background": "#ffffff", "panel": "#f7f8fa", "text": "#1f2933", "muted": "#5c6b7a", "grid": "#e1e6ec",
    "raw": "#b4beca", "smooth": "#1d5c8c", "warn": "#b77900", "crit": "#c0262d", "ok": "#1b7f4b",
    "band": "#1d5c8c", "member": "#8da3b8", "other-1": "#7b2cbf", "other-2": "#b45309", "other-3": "#0e7c7b",
    "other-4": "#c2185b", "other-5": "#5a8f29", "other-6": "#333333", "other-7": "#2979ff",
}  # fmt: skip
"""The HTML report's colours (rltop-light's, on the white page of Rich's HTML export)."""
FONT = "font-family:Menlo,'DejaVu Sans Mono',Consolas,monospace"
STROKES = {"raw": (1.0, 0.8), "line": (1.6, 1.0), "member": (1.0, 0.7), "mean": (2.2, 1.0)}
"""Role -> (stroke width, opacity)."""
LEGEND_WIDTH = 28
"""Longest run name in a chart's legend (longer ones are shortened, leading parts first)."""


@dataclass(frozen=True)
class ChartBox:
    """The chart's size in pixels and the margins around its plot area."""

    width: int = 460
    height: int = 230
    left: int = 58
    right: int = 12
    top: int = 30
    bottom: int = 26

    @property
    def plot_width(self) -> int:
        """Pixels of the plot area, horizontally (the downsampling resolution)."""
        return self.width - self.left - self.right

    @property
    def plot_height(self) -> int:
        """Pixels of the plot area, vertically."""
        return self.height - self.top - self.bottom


def _fmt(value: float) -> str:
    return f"{value:.1f}"


class _Mapper:
    def __init__(self, figure: Figure, box: ChartBox) -> None:
        self.x0, self.x1 = figure.xlim
        self.y0, self.y1 = figure.ylim
        self.box = box

    def x(self, values: np.ndarray) -> np.ndarray:
        span = (self.x1 - self.x0) or 1.0
        return self.box.left + (np.asarray(values, dtype=np.float64) - self.x0) / span * self.box.plot_width

    def y(self, values: np.ndarray) -> np.ndarray:
        span = (self.y1 - self.y0) or 1.0
        return self.box.top + (self.y1 - np.asarray(values, dtype=np.float64)) / span * self.box.plot_height


def _path(xs: np.ndarray, ys: np.ndarray) -> str:
    """``M x y L x y …`` with a new ``M`` after every NaN gap."""
    parts: list[str] = []
    pen_down = False
    for x, y in zip(xs.tolist(), ys.tolist()):
        if not (np.isfinite(x) and np.isfinite(y)):
            pen_down = False
            continue
        parts.append(f"{'L' if pen_down else 'M'}{_fmt(x)} {_fmt(y)}")
        pen_down = True
    return "".join(parts)


def svg_chart(
    figure: Figure,
    title: str,
    value: str,
    level: str,
    palette: Mapping[str, str],
    ident: str,
    box: ChartBox = ChartBox(),
    note: str = "",
) -> str:
    """One chart as an ``<svg>`` element (``level``: "ok", "warn" or "crit", the border's colour;
    ``ident``: unique in the document, for the chart's clip path)."""
    m = _Mapper(figure, box)
    left, top, pw, ph = box.left, box.top, box.plot_width, box.plot_height
    border = palette[level] if level in ("warn", "crit") else palette["grid"]
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{box.width}" height="{box.height}" '
        f'viewBox="0 0 {box.width} {box.height}" role="img" aria-label="{escape(visible(title))}">',
        f'<rect x="0.5" y="0.5" width="{box.width - 1}" height="{box.height - 1}" rx="6" '
        f'fill="{palette["panel"]}" stroke="{border}"/>',
        f'<text x="10" y="19" style="{FONT};font-size:12px;font-weight:bold" fill="{palette["text"]}">'
        f'{escape(visible(title))}<tspan dx="8" fill="{palette["muted"]}" font-weight="normal">'
        f"{escape(value)}</tspan></text>",
    ]
    badge = {"crit": "CRIT", "warn": "WARN"}.get(level, "")
    if badge:
        out.append(
            f'<text x="{box.width - 10}" y="19" text-anchor="end" style="{FONT};font-size:11px;'
            f'font-weight:bold" fill="{palette[level]}">{badge}</text>'
        )
    if note:
        right = box.width - 10 - (len(badge) * 7 + 8 if badge else 0)
        out.append(
            f'<text x="{right}" y="19" text-anchor="end" style="{FONT};font-size:9px" '
            f'fill="{palette["muted"]}">{escape(note)}</text>'
        )
    out.append(f'<clipPath id="{ident}"><rect x="{left}" y="{top}" width="{pw}" height="{ph}"/></clipPath>')
    out += _axes(figure, m, palette)
    body = [f'<g clip-path="url(#{ident})">']
    for span in figure.spans:
        x0, x1 = m.x(np.array([span.first, span.last]))
        body.append(
            f'<rect x="{_fmt(x0)}" y="{top}" width="{_fmt(max(x1 - x0, 1.5))}" height="{ph}" '
            f'fill="{palette[span.color]}" opacity="0.16"><title>episode, steps {span.first:g}–'
            f"{span.last:g}</title></rect>"
        )
    for area in figure.areas:
        xs, lows, highs = m.x(area.x), m.y(area.low), m.y(area.high)
        if xs.shape[0] >= 2:
            outline = _path(np.concatenate((xs, xs[::-1])), np.concatenate((highs, lows[::-1])))
            body.append(
                f'<path d="{outline}Z" fill="{palette[area.color]}" opacity="0.22" stroke="none">'
                f"<title>{escape(area.label)}</title></path>"
            )
    for trace in figure.traces:
        width, opacity = STROKES.get(trace.role, (1.4, 1.0))
        label = f"<title>{escape(visible(trace.label))}</title>" if trace.label else ""
        body.append(
            f'<path d="{_path(m.x(trace.x), m.y(trace.y))}" fill="none" '
            f'stroke="{palette[trace.color]}" stroke-width="{width}" opacity="{opacity}" '
            f'stroke-linejoin="round">{label}</path>'
        )
    for threshold in figure.thresholds:
        body.append(
            f'<path d="{_path(m.x(threshold.x), m.y(threshold.y))}" fill="none" '
            f'stroke="{palette[threshold.color]}" stroke-width="1.2" stroke-dasharray="5 3">'
            f"<title>{escape(threshold.label or '')}</title></path>"
        )
    body.append("</g>")
    out += body
    for marks in figure.marks:
        for x, y in zip(m.x(marks.x).tolist(), m.y(marks.y).tolist()):
            dy = 10 if marks.y[0] >= figure.ylim[1] else -2
            out.append(
                f'<text x="{_fmt(x)}" y="{_fmt(y + dy)}" text-anchor="middle" style="{FONT};'
                f'font-size:10px" fill="{palette[marks.color]}">{escape(marks.glyph)}'
                f"<title>{marks.kind}</title></text>"
            )
    out += _legend(figure, box, palette)
    out.append("</svg>")
    return "".join(out)


def _axes(figure: Figure, m: _Mapper, palette: Mapping[str, str]) -> list[str]:
    box = m.box
    parts = [
        f'<rect x="{box.left}" y="{box.top}" width="{box.plot_width}" height="{box.plot_height}" '
        f'fill="{palette["background"]}" stroke="{palette["grid"]}"/>'
    ]
    for position, label in zip(*figure.yticks):
        y = float(m.y(np.array([position]))[0])
        parts.append(
            f'<line x1="{box.left}" x2="{box.left + box.plot_width}" y1="{_fmt(y)}" y2="{_fmt(y)}" '
            f'stroke="{palette["grid"]}" stroke-width="0.6"/>'
        )
        parts.append(
            f'<text x="{box.left - 5}" y="{_fmt(y + 3.5)}" text-anchor="end" style="{FONT};'
            f'font-size:10px" fill="{palette["muted"]}">{escape(label)}</text>'
        )
    for position, label in zip(*figure.xticks):
        x = float(m.x(np.array([position]))[0])
        bottom = box.top + box.plot_height
        parts.append(
            f'<line x1="{_fmt(x)}" x2="{_fmt(x)}" y1="{bottom}" y2="{bottom + 4}" '
            f'stroke="{palette["muted"]}"/>'
        )
        parts.append(
            f'<text x="{_fmt(x)}" y="{bottom + 15}" text-anchor="middle" style="{FONT};'
            f'font-size:10px" fill="{palette["muted"]}">{escape(label)}</text>'
        )
    return parts


def _legend(figure: Figure, box: ChartBox, palette: Mapping[str, str]) -> list[str]:
    labelled = [trace for trace in figure.traces if trace.label]
    parts = []
    x = box.left + 6
    for trace in labelled[:8]:
        shown = fit_path(visible(trace.label or ""), LEGEND_WIDTH)
        text = escape(shown)
        parts.append(
            f'<rect x="{x}" y="{box.top + 5}" width="10" height="3" fill="{palette[trace.color]}"/>'
            f'<text x="{x + 13}" y="{box.top + 10}" style="{FONT};font-size:9px" '
            f'fill="{palette["text"]}">{text}</text>'
        )
        x += 13 + 6 * len(shown) + 10
    return parts
