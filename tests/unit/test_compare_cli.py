"""The runs compared in every snapshot format and in ``rltop diff``, on the real sweep and seed runs.

``tests/fixtures/sweep_lr``: five TRL 1.16 GRPO runs that differ only in learning rate;
``tests/fixtures/seeds_sweep``: three that differ only in seed (see their READMEs).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from helpers.paths import FIXTURES
from helpers.snapshot import (
    TextCollector,
    freeze_clock,
    isolate_user_rules,
    markdown_tables,
    run_cli,
    validate,
)

from rltop.report.json_report import load_schema

SWEEP = FIXTURES / "sweep_lr"
SEEDS = FIXTURES / "seeds_sweep"
NOW = 1_796_400_000.0  # a fixed "now", an hour or so after the runs
SUMMARY = (
    "2 runs with learning_rate ≥ 0.01 went critical on entropy collapse; 3 with learning_rate ≤ 0.001 did not"
)
RATES = ("lr_1e-5", "lr_1e-4", "lr_1e-3", "lr_1e-2", "lr_5e-2")


@pytest.fixture(autouse=True)
def _fixed(monkeypatch, tmp_path):
    freeze_clock(monkeypatch, NOW)
    isolate_user_rules(monkeypatch, tmp_path)


def _snapshot(capsys, tmp_path, path, fmt: str, *extra: str) -> str:
    out = tmp_path / f"s.{fmt}"
    code, _, err = run_cli(capsys, "snapshot", str(path), "-f", fmt, "-o", str(out), "--width", "100", *extra)
    assert code in (0, 1), err
    return out.read_text(encoding="utf-8")


def test_json_carries_the_diff_and_the_summary(capsys, tmp_path):
    document = json.loads(_snapshot(capsys, tmp_path, SWEEP, "json"))
    assert validate(document, load_schema()) == []
    names = {run["name"]: run["display_name"] for run in document["runs"]}
    diff = document["config_diff"]
    assert list(diff) == ["learning_rate"]
    assert {names[run]: value for run, value in diff["learning_rate"].items()} == dict(
        zip(RATES, (1e-5, 1e-4, 1e-3, 1e-2, 5e-2))
    )
    assert document["config_summary"] == SUMMARY
    compare = document["config_compare"]
    assert [names[run] for run in compare["runs"]] == list(RATES)
    assert compare["equal"] == 189 and compare["ignored"] == ["output_dir"] and compare["seed_group"] is None
    assert compare["split"]["settings"] == ["learning_rate"]
    assert sorted(names[run] for run in compare["split"]["failing"]) == ["lr_1e-2", "lr_5e-2"]
    # The verdict beside each value is the run's own level.
    levels = {run["name"]: run["level"] for run in document["runs"]}
    assert {names[r]: levels[r] for r in compare["runs"]} == {
        "lr_1e-5": "critical", "lr_1e-4": "warn", "lr_1e-3": "ok",
        "lr_1e-2": "critical", "lr_5e-2": "critical",
    }  # fmt: skip
    assert compare["verdicts"][compare["runs"][3]].startswith("✖ CRIT entropy collapse")


def test_text_prints_the_table_and_the_summary(capsys, tmp_path):
    text = _snapshot(capsys, tmp_path, SWEEP, "text")
    lines = text.splitlines()
    start = lines.index("Compare: 5 runs · 1 setting differs: learning_rate")
    assert lines[start + 1].split() == ["run", "verdict", "learning_rate"]
    table = lines[start + 2 : start + 7]
    assert [line.split()[0] for line in table] == list(RATES)
    assert [line.split()[-1] for line in table] == ["1e-05", "0.0001", "0.001", "0.01", "0.05"]
    assert "✖ CRIT entropy collapse" in table[3] and "● ok" in table[2]
    assert "189 settings equal in every run (folded)" in text
    assert " ".join(text.split("→ ")[1].split("\n─")[0].split()) == SUMMARY
    assert text.index("Compare:") < text.index("lr_1e-2  CRITICAL")  # above the runs


def test_markdown_has_the_compare_table(capsys, tmp_path):
    text = _snapshot(capsys, tmp_path, SWEEP, "markdown")
    assert "## Compare" in text and f"**{SUMMARY.replace('_', chr(92) + '_')}**" in text
    table = markdown_tables(text)[0]
    assert table[0] == ["run", "verdict", "learning_rate"]
    assert [row[0] for row in table[1:]] == list(RATES)
    assert table[4][1].startswith("✖ CRIT entropy collapse") and table[4][2] == "0.01"


def test_svg_and_html_show_the_comparison(capsys, tmp_path):
    svg = _snapshot(capsys, tmp_path, SWEEP, "svg")
    svg_text = "".join(ET.fromstring(svg).itertext()).replace("\xa0", " ")
    html = _snapshot(capsys, tmp_path, SWEEP, "html")
    parser = TextCollector()
    parser.feed(html)
    html_text = "".join(parser.parts).replace("\xa0", " ")
    for text in (svg_text, html_text):
        assert "Compare:" in text and "learning_rate" in text and "went critical on entropy collapse" in text


def test_seeds_show_the_seed_group_not_a_diff(capsys, tmp_path):
    document = json.loads(_snapshot(capsys, tmp_path, SEEDS, "json"))
    assert validate(document, load_schema()) == []
    assert document["config_diff"] == {} and document["config_summary"] is None
    assert document["config_compare"]["seed_group"] == "seeds_sweep/seed_*"
    text = _snapshot(capsys, tmp_path, SEEDS, "text")
    assert "Compare: 3 runs differ only in their seed: seed group seeds_sweep/seed_* (seeds 1, 2, 3)" in text
    assert "→" not in text.split("───")[1]  # no summary line, no seed column
    markdown = _snapshot(capsys, tmp_path, SEEDS, "markdown")
    assert "differ only in their seed" in markdown and not markdown_tables(
        markdown.split("## Seed groups")[0]
    )


def test_a_single_run_has_no_comparison(capsys, tmp_path):
    document = json.loads(_snapshot(capsys, tmp_path, SWEEP / "lr_1e-3", "json"))
    assert (document["config_diff"], document["config_summary"], document["config_compare"]) == (
        {},
        None,
        None,
    )
    assert validate(document, load_schema()) == []
    assert "Compare" not in _snapshot(capsys, tmp_path, SWEEP / "lr_1e-3", "text")


def test_csv_is_unchanged_by_the_comparison(capsys, tmp_path):
    header = _snapshot(capsys, tmp_path, SWEEP, "csv").splitlines()[0]
    assert "config" not in header  # one row per run x tag, as before


# -- rltop diff --------------------------------------------------------------------------------------


def test_diff_of_two_runs(capsys):
    code, out, err = run_cli(capsys, "diff", str(SWEEP / "lr_1e-3"), str(SWEEP / "lr_5e-2"), "--width", "100")
    assert code == 0, err
    assert out.splitlines()[0] == "Compare: 2 runs · 1 setting differs: learning_rate"
    assert "→ 1 run with learning_rate = 0.05 went critical" in out


def test_diff_group_by_in_every_format(capsys):
    code, out, _ = run_cli(
        capsys, "diff", str(SWEEP), str(SEEDS), "--group-by", "learning_rate", "--width", "100"
    )
    assert code == 0
    grouped = [line for line in out.split("Grouped by learning_rate:\n")[1].splitlines() if "=" in line]
    assert grouped[2].startswith("learning_rate = 0.001   ● ok    4 runs: ")  # the seeds join lr_1e-3
    assert grouped[3] == "learning_rate = 0.01    ✖ CRIT  1 run: sweep_lr/lr_1e-2"
    code, out, _ = run_cli(capsys, "diff", str(SWEEP), "--group-by", "learning_rate", "-f", "json")
    document = json.loads(out)
    assert document["config_summary"] == SUMMARY
    assert [(g["value"], g["level"]) for g in document["group_by"]["groups"]] == [
        (1e-5, "critical"),
        (1e-4, "warn"),
        (1e-3, "ok"),
        (1e-2, "critical"),
        (5e-2, "critical"),
    ]
    code, out, _ = run_cli(capsys, "diff", str(SWEEP), "--group-by", "learning_rate", "-f", "markdown")
    tables = markdown_tables(out)
    assert tables[1][0] == ["value", "worst level", "runs"] and tables[1][1][1] == "✖ CRIT"


@pytest.mark.parametrize(("argv", "message"), [
    ((str(SWEEP / "lr_1e-2"),), "only one run (lr_1e-2) under "),
    ((str(SWEEP), "--group-by", "beta"),
     "--group-by beta: not a setting that differs between the runs (settings that differ: learning_rate)"),
    ((str(SWEEP), "--group-by", "seed"), "--group-by seed: runs that differ only in their seed are grouped"),
    ((str(SEEDS), "--group-by", "learning_rate"), "no setting differs between these runs"),
    ((str(SWEEP), "--width", "5"), "--width must be between"),
])  # fmt: skip
def test_diff_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    code, out, err = run_cli(capsys, "diff", *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("rltop: error: ") and message in err
    assert "Traceback" not in err


def test_names_keys_and_values_from_logs_never_reach_the_terminal_raw(capsys, tmp_path):
    from helpers.ui import write_run

    evil = "\x1b]0;pwned\x07"
    for index, (lr, level_of) in enumerate(((1e-4, 4.5), (1e-2, 0.01))):
        write_run(
            tmp_path / f"run{evil}{index}",
            {"train/entropy": [4.5] * 10 + [level_of] * 20},
            config={"learning_rate": lr, f"loss{evil}": f"dapo{evil}{index}", "output_dir": str(index)},
        )
    for fmt in ("text", "markdown"):
        code, out, err = run_cli(capsys, "diff", str(tmp_path), "-f", fmt, "--width", "120")
        assert code == 0, err
        assert "\x1b" not in out and "\x07" not in out
        assert "\\x1b]0;pwned\\x07" in out  # made visible, not dropped
    code, out, _ = run_cli(capsys, "diff", str(tmp_path), "-f", "json")
    document = json.loads(out)
    assert f"loss{evil}" in document["config_diff"]  # JSON keeps the exact strings (escaped by JSON)
    code, _, err = run_cli(capsys, "diff", str(tmp_path), "--group-by", f"nope{evil}")
    assert code == 2 and "\x1b" not in err


def test_a_nan_setting_is_a_string_in_strict_json(capsys, tmp_path):
    from helpers.ui import write_run

    for name, lr in (("a", float("nan")), ("b", 1e-3)):
        write_run(
            tmp_path / name, {"train/reward": [0.1] * 5}, config={"learning_rate": lr, "beta": [lr, 1.0]}
        )
    code, out, err = run_cli(capsys, "diff", str(tmp_path), "-f", "json")
    assert code == 0, err
    document = json.loads(out)  # strict: a bare NaN would not be JSON
    assert "NaN" not in out
    names = {run.split("/")[0]: run for run in document["config_compare"]["runs"]}
    assert document["config_diff"]["learning_rate"] == {names["a"]: "nan", names["b"]: 0.001}
    assert document["config_diff"]["beta"][names["a"]] == ["nan", 1.0]
