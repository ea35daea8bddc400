"""The HTML and SVG snapshots draw real charts: key metrics and every metric with a finding, with
their thresholds and episodes, seed groups as a mean and a band; one self-contained file."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import numpy as np
import pytest
from helpers.paths import FIXTURES
from helpers.snapshot import run_cli
from helpers.ui import write_run

SVG = "{http://www.w3.org/2000/svg}"


class _Page(HTMLParser):
    """Collects the tags, attributes and chart titles of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.headings: list[str] = []
        self._in_heading = False

    def handle_starttag(self, tag, attrs) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_heading = tag == "h2"

    def handle_data(self, data) -> None:
        if self._in_heading:
            self.headings.append(data)
            self._in_heading = False


def _report(capsys, tmp_path, fmt: str, *paths) -> str:
    out = tmp_path / f"r.{fmt}"
    run_cli(capsys, "snapshot", *map(str, paths), "-f", fmt, "-o", str(out))
    return out.read_text(encoding="utf-8")


def test_html_report_charts_key_metrics_and_every_metric_with_a_finding(capsys, tmp_path):
    html = _report(capsys, tmp_path, "html", FIXTURES / "trl" / "ppo_unstable")
    page = _Page()
    page.feed(html)
    charts = [attrs for tag, attrs in page.tags if tag == "svg"]
    titles = [attrs["aria-label"] for attrs in charts]
    # Key values first, then the metrics with warn/critical findings, as the dashboard's grid.
    assert titles[:3] == ["objective/rlhf_reward", "objective/scores", "objective/non_score_reward"]
    assert {"policy/entropy_avg", "policy/approxkl_avg", "objective/kl", "val/ratio"} <= set(titles)
    assert page.headings[0].startswith("ppo_unstable")
    dashed = re.findall(r'stroke-dasharray="5 3"><title>(\w+)</title>', html)
    assert {"warn_high", "crit_high", "warn_low", "crit_low"} <= set(dashed)  # thresholds drawn
    assert 'opacity="0.16"><title>episode, steps' in html  # episodes shaded
    assert html.count('<path d="M') >= 2 * len(charts)  # raw envelope and smoothed curve


def test_html_report_is_one_self_contained_file(capsys, tmp_path):
    html = _report(capsys, tmp_path, "html", FIXTURES / "seeds")
    assert "<script" not in html and "<link" not in html and "@import" not in html
    assert not re.search(r"(src|href)\s*=", html)
    assert set(re.findall(r"https?://[^\s\"')]+", html)) == {"http://www.w3.org/2000/svg"}  # namespaces only
    assert "seed group grpo_seed_*" in html and "fill-opacity" not in html
    assert html.count('opacity="0.22"') == 3  # the group's band on each of its 3 key metrics


def test_svg_report_is_one_document_with_the_text_view_and_the_charts(capsys, tmp_path):
    svg = _report(capsys, tmp_path, "svg", FIXTURES / "seeds")
    root = ET.fromstring(svg)
    nested = root.findall(f"{SVG}svg")
    assert nested[0].get("class") == "rich-terminal"  # the text view on top
    charts = [element for element in nested[1:] if element.get("role") == "img"]
    # 3 runs x (2 key values + truncation), seed 1's note (one reward function carries the gain),
    # and the group's 3 key metrics.
    assert len(charts) == 3 * 3 + 1 + 3
    top = float(nested[0].get("height"))
    assert all(float(chart.get("y")) > top for chart in charts)
    clip_ids = [clip.get("id") for clip in root.iter(f"{SVG}clipPath")]  # Rich's text view has its own
    assert len(clip_ids) == len(set(clip_ids))


def test_a_spike_off_the_chart_never_hides_the_recovery_behind_smoothing(capsys, tmp_path):
    """A 1.6e6 value-loss spike over values near 1: outlier-robust scaling leaves it off the chart
    (marked ↑), and the smoothed curve counts it at the edge: it is back with the raw values within
    a few steps, instead of pinned at the top edge for 16."""
    rng = np.random.default_rng(7)
    loss = (1.0 + 0.1 * rng.normal(size=100)).tolist()
    loss[59] = 1.6e6  # step 60
    kl = np.linspace(0.0, 0.5, 100).tolist()
    write_run(
        tmp_path / "ppo_spike",
        {"train/loss/value_avg": loss, "train/objective/kl": kl, "train/policy/entropy_avg": [4.5] * 100},
    )
    root = ET.fromstring(_report(capsys, tmp_path, "svg", tmp_path / "ppo_spike"))
    chart = next(c for c in root.iter(f"{SVG}svg") if c.get("aria-label") == "loss/value_avg")
    ticks = [
        float(t.text)
        for t in chart.iter(f"{SVG}text")  # y ticks: right-aligned left of the plot
        if t.get("text-anchor") == "end" and re.fullmatch(r"-?[\d.]+", t.text or "")
    ]
    assert max(ticks) < 10  # the y axis is the values' (it reached 16 000 with interpolated percentiles)
    marks = [t for t in chart.iter(f"{SVG}text") if t.text == "↑"]
    assert len(marks) == 1  # the spike, at the top edge
    smooth = next(p for p in chart.iter(f"{SVG}path") if p.get("stroke-width") == "1.6")
    points = [tuple(map(float, xy.split())) for xy in re.findall(r"[ML]([-\d.]+ [-\d.]+)", smooth.get("d"))]
    spike_x = float(marks[0].get("x"))
    raw = [p for p in chart.iter(f"{SVG}path") if p.get("stroke-width") == "1.0"]
    raw_after = [
        float(y)
        for p in raw
        for x, y in re.findall(r"[ML]([-\d.]+) ([-\d.]+)", p.get("d"))
        if float(x) > spike_x + 1
    ]
    low, high = min(raw_after), max(raw_after)  # pixels of the raw values after the spike
    top = min(y for _, y in points)
    after = [y for x, y in points if x > spike_x + 1]
    assert len(after) > 30 and min(after) > top + 5  # never at the top edge after the spike
    assert all(low - 1 <= y <= high + 1 for y in after[4:])  # with the raw values within 4 steps


def test_the_smoothed_curve_counts_a_point_off_the_chart_at_its_edge():
    """The figure model behind every chart: an off-chart point counts at the edge it is marked at;
    with every point in scaling (`i`) a spike is smoothed as TensorBoard smooths it."""
    from rltop.model.series import Series
    from rltop.view.chart.data import Overlay, build_figure
    from rltop.view.chart.options import ChartOptions

    values = np.ones(100)
    values[50] = 1.6e6
    series = Series("train/loss/value_avg")
    series.append(np.arange(1, 101), 1e9 + np.arange(100.0), values, single_precision=False)
    robust = build_figure(Overlay("r", "r", series, "smooth"), [], ChartOptions(), 400)
    (line,) = [t for t in robust.traces if t.role == "line"]
    edge = robust.ylim[1]
    assert robust.clipped == 1 and edge < 2
    assert line.y[50] == pytest.approx(1 + 0.4 * (edge - 1)) and line.y[49] == pytest.approx(1.0)
    assert abs(line.y[56] - 1.0) < 0.05 * (edge - robust.ylim[0])  # back within a few points
    every = build_figure(Overlay("r", "r", series, "smooth"), [], ChartOptions(ignore_outliers=False), 400)
    (line,) = [t for t in every.traces if t.role == "line"]
    assert every.clipped == 0 and line.y[50] == pytest.approx(1 + 0.4 * (1.6e6 - 1), rel=1e-3)
