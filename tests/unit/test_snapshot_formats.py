"""Every snapshot format on every real TRL fixture, checked by parsing it back.

text: names, findings and layout; markdown: GFM tables as GitHub renders them; json: the documented
schema and exactly the engine's findings; csv: one row per run x tag; svg/html: well-formed documents.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from helpers.paths import TRL, TRL_RUNS
from helpers.snapshot import (
    TextCollector,
    freeze_clock,
    isolate_user_rules,
    markdown_tables,
    run_cli,
    validate,
    verdicts_at,
)

from rltop.health.findings import Level
from rltop.model.catalog import GROUPS
from rltop.model.stats import series_stats
from rltop.report.json_report import load_schema
from rltop.view.names import metric_names as display_names
from rltop.view.text.safe import visible

FORMATS = ("text", "markdown", "json", "csv", "svg", "html")
# Every snapshot of this module is taken at this instant, and the engine's verdicts the outputs are
# compared with are computed for it too, so even the stall findings (whose messages quote how long
# ago the last point was) must match exactly.
NOW = time.time()


@pytest.fixture(autouse=True)
def frozen(monkeypatch, tmp_path) -> None:
    freeze_clock(monkeypatch, NOW)
    isolate_user_rules(monkeypatch, tmp_path)


@pytest.fixture(scope="module")
def engine_verdicts() -> dict[str, tuple]:
    """Per fixture: (store, the engine's verdicts at NOW), loaded once for the module."""
    return {name: verdicts_at(TRL / name, NOW) for name in TRL_RUNS}


def snapshot(capsys, tmp_path: Path, name: str, fmt: str, *extra: str) -> tuple[int, str]:
    out = tmp_path / f"{name}.{fmt}"
    code, stdout, stderr = run_cli(
        capsys, "snapshot", str(TRL / name), "--format", fmt, "--output", str(out), *extra
    )
    assert stdout == "" and stderr == "", stderr
    return code, out.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", TRL_RUNS)
def test_exit_code_is_the_engine_verdict(capsys, tmp_path, engine_verdicts, name) -> None:
    _, verdicts = engine_verdicts[name]
    worst = max((health.level for health in verdicts.values()), default=Level.OK)
    code, _ = snapshot(capsys, tmp_path, name, "json")
    assert code == (1 if worst == Level.CRITICAL else 0)


@pytest.mark.parametrize("name", TRL_RUNS)
def test_json_validates_and_matches_the_engine(capsys, tmp_path, engine_verdicts, name) -> None:
    store, verdicts = engine_verdicts[name]
    _, text = snapshot(capsys, tmp_path, name, "json")
    document = json.loads(text)
    assert validate(document, load_schema()) == []
    assert [run["name"] for run in document["runs"]] == store.sorted_names()
    for run_doc in document["runs"]:
        run = store.runs[run_doc["name"]]
        health = verdicts[run.name]
        assert run_doc["level"] == health.level.label and run_doc["kind"] == health.kind
        assert run_doc["empty"] == health.empty and run_doc["last_step"] == run.last_step
        # Findings: exactly the engine's, in its order, every field.
        assert len(run_doc["findings"]) == len(health.findings)
        for got, want in zip(run_doc["findings"], health.findings):
            assert set(got) == {field.name for field in dataclasses.fields(want)}  # no field left out
            assert got["level"] == want.level.label
            assert _same_number(got["value"], want.value, run.series.get(want.tag))
            assert got["stage"] == want.stage.name.lower() and got["spans"] == [list(s) for s in want.spans]
            assert got["evidence"] == list(want.evidence) and got["also"] == list(want.also)
            for key in set(got) - {"level", "value", "stage", "spans", "evidence", "also"}:
                assert got[key] == getattr(want, key), key
        # Tags: every series, with its statistics.
        assert set(run_doc["tags"]) == set(run.series)
        for tag, tag_doc in run_doc["tags"].items():
            series = run.series[tag]
            stats = series_stats(series)
            assert tag_doc["count"] == stats.count == len(series)
            assert (tag_doc["first_step"], tag_doc["last_step"]) == (stats.first_step, stats.last_step)
            for key in ("last", "min", "max", "mean_last_10pct"):
                assert _same_number(tag_doc[key], getattr(stats, key), series), (tag, key)
            assert tag_doc["trend"] == stats.trend and tag_doc["non_finite"] == stats.non_finite
            assert tag_doc["level"] == health.tag_levels.get(tag, Level.OK).label
            assert tag_doc["group"] in GROUPS


def _same_number(shown, value, series) -> bool:
    """A JSON number equals the stored one at the stored precision (float32 for simple_value)."""
    if value is None:
        return shown is None
    if math.isnan(value) or math.isinf(value):
        return shown == {True: "nan", False: "inf" if value > 0 else "-inf"}[math.isnan(value)]
    if series is not None and series.single_precision:
        return np.float32(shown) == np.float32(value)
    return shown == value


def test_display_names_drop_train_only_when_unambiguous() -> None:
    assert display_names(["train/val/ratio", "eval/reward", "custom"]) == {
        "train/val/ratio": "val/ratio",
        "eval/reward": "eval/reward",
        "custom": "custom",
    }
    both = ["train/loss", "loss", "train/kl"]
    assert display_names(both) == {tag: tag for tag in both}


def test_config_summary_comes_from_the_run_arguments(capsys, tmp_path) -> None:
    _, text = snapshot(capsys, tmp_path, "grpo_unstable", "json")
    config = json.loads(text)["runs"][0]["config"]
    assert config["learning_rate"] == 0.1 and config["num_iterations"] == 4 and config["beta"] == 0.04
    _, text = snapshot(capsys, tmp_path, "ppo_unstable", "json")
    config = json.loads(text)["runs"][0]["config"]
    assert config["num_ppo_epochs"] == 16 and config["kl_coef"] == 0.05 and "beta" not in config


@pytest.mark.parametrize("name", TRL_RUNS)
def test_text_shows_header_findings_and_every_metric(capsys, tmp_path, engine_verdicts, name) -> None:
    store, verdicts = engine_verdicts[name]
    code, text = snapshot(capsys, tmp_path, name, "text", "--width", "200")
    assert "\x1b" not in text  # a file gets no escape codes
    flat = " ".join(text.split())  # findings may wrap: compare word sequences
    for run in store.runs.values():
        health = verdicts[run.name]
        # The title names the experiment (the fixture's folder), not transformers' session folder.
        assert f"\n{name}  {'EMPTY' if health.empty else health.level.label.upper()}\n" in text
        assert health.kind in text
        assert ("EMPTY" if health.empty else health.level.label.upper()) in text
        if run.last_step is not None:
            assert f"step {run.last_step}" in text
        for finding in health.findings:
            assert " ".join(visible(finding.message).split()) in flat
            assert " ".join(visible(finding.advice).split()) in flat
        names = display_names(run.series)
        lines = text.splitlines()
        for tag in run.series:
            assert any(line.startswith(names[tag]) for line in lines), tag
        if health.empty:
            assert "Empty run" in text


@pytest.mark.parametrize("name", TRL_RUNS)
def test_markdown_renders_as_tables(capsys, tmp_path, engine_verdicts, name) -> None:
    store, verdicts = engine_verdicts[name]
    _, text = snapshot(capsys, tmp_path, name, "markdown")
    tables = markdown_tables(text)
    (run,) = store.runs.values()
    health = verdicts[run.name]
    metric_tables = [t for t in tables if t[0][0] == "metric"]
    finding_tables = [t for t in tables if t[0][0] == "level"]
    assert len(finding_tables) == (1 if health.findings else 0)
    assert len(metric_tables) == len({group for group, _ in _groups(run)})
    names = display_names(run.series)
    rows = {row[0]: row for table in metric_tables for row in table[1:]}
    assert set(rows) == {names[tag] for tag in run.series}
    for row in rows.values():
        assert len(row) == 7 and row[6].split()[-1] in ("ok", "warn", "critical")
    if health.findings:
        assert [row[4] for row in finding_tables[0][1:]] == [visible(f.message) for f in health.findings]
        assert [row[1].removesuffix(" (over)") for row in finding_tables[0][1:]] == [
            visible(f.title) for f in health.findings
        ]


def _groups(run):
    from rltop.model.catalog import group_tags

    return group_tags(run.series)


def test_csv_has_one_row_per_run_and_tag(capsys, tmp_path, engine_verdicts) -> None:
    for name in TRL_RUNS:
        store, verdicts = engine_verdicts[name]
        _, text = snapshot(capsys, tmp_path, name, "csv")
        rows = list(csv.DictReader(io.StringIO(text)))
        (run,) = store.runs.values()
        if not run.series:  # the empty run still appears, once
            assert [(r["run"], r["tag"], r["count"]) for r in rows] == [(run.name, "", "0")]
            continue
        assert sorted(r["tag"] for r in rows) == sorted(run.series)
        for row in rows:
            series = run.series[row["tag"]]
            assert int(row["count"]) == len(series) and row["run"] == run.name
            assert np.float32(row["last"]) == np.float32(series.values[-1])
            assert row["level"] == verdicts[run.name].tag_levels.get(row["tag"], Level.OK).label


@pytest.mark.parametrize("name", ["ppo_unstable", "grpo_with_eval", "grpo_liger_cpu_crash"])
def test_svg_and_html_are_exports_of_the_text_view(capsys, tmp_path, name) -> None:
    _, plain = snapshot(capsys, tmp_path, name, "text", "--width", "100")
    _, svg = snapshot(capsys, tmp_path, name, "svg", "--width", "100")
    _, html = snapshot(capsys, tmp_path, name, "html", "--width", "100")
    root = ET.fromstring(svg)  # well-formed XML (a raw control character would fail here)
    assert root.tag.endswith("svg")
    svg_text = "".join(root.itertext()).replace("\xa0", " ")
    parser = TextCollector()
    parser.feed(html)
    html_text = "".join(parser.parts)
    for line in plain.splitlines()[2:12]:  # after the summary line (it holds the time)
        if line.strip() and "ago)" not in line:
            assert line.strip() in html_text
            assert line.strip().split()[0] in svg_text
    assert "\x1b" not in svg and "\x1b" not in html


def test_all_formats_on_the_whole_fixture_directory(capsys, tmp_path) -> None:
    """Several runs at once (run names prefixed by their directories) in every format."""
    for fmt in FORMATS:
        out = tmp_path / f"all.{fmt}"
        code, _, err = run_cli(capsys, "snapshot", str(TRL), "-f", fmt, "-o", str(out))
        assert code == 1 and err == ""  # the unstable runs are critical
        text = out.read_text(encoding="utf-8")
        for name in TRL_RUNS:
            assert name in text, (fmt, name)
