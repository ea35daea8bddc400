"""The HTML and SVG snapshots draw real charts: key metrics and every metric with a finding, with
their thresholds and episodes, seed groups as a mean and a band; one self-contained file."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

from conftest import FIXTURES
from test_snapshot_helpers import run_cli

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
    assert "opacity=\"0.16\"><title>episode, steps" in html  # episodes shaded
    assert html.count("<path d=\"M") >= 2 * len(charts)  # raw envelope and smoothed curve


def test_html_report_is_one_self_contained_file(capsys, tmp_path):
    html = _report(capsys, tmp_path, "html", FIXTURES / "seeds")
    assert "<script" not in html and "<link" not in html and "@import" not in html
    assert not re.search(r'(src|href)\s*=', html)
    assert set(re.findall(r"https?://[^\s\"')]+", html)) == {"http://www.w3.org/2000/svg"}  # namespaces only
    assert "seed group grpo_seed_*" in html and 'fill-opacity' not in html
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
