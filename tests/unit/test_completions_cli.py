"""``rltop completions``: exact JSON Lines, steps and sorting, hostile text kept inert, errors."""

from __future__ import annotations

import json
import math
import shutil
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers.paths import FIXTURES

from rltop.cli import main

FIXTURES_TRL2 = FIXTURES / "trl2"

HEALTHY = FIXTURES_TRL2 / "grpo_completions"
COLLAPSE = FIXTURES_TRL2 / "grpo_collapse"
HOSTILE = [
    "\x1b]0;pwned\x07\x1b[2J[bold red]markup[/] \u202eevil\u202c",
    "line one\nline two\twith tab\r\n\x00nul \u200bzero-width <|endoftext|>",
    "y" * 5000,
    "`` ``` fences ```` and | pipes",
]


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["completions", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_jsonl_round_trips_every_column_exactly(capsys):
    for step in (1, 2, 59, 60):
        code, out, _ = _run(capsys, str(HEALTHY), "--step", str(step), "--format", "jsonl")
        assert code == 0
        rows = [json.loads(line) for line in out.splitlines()]
        expected = pq.read_table(HEALTHY / "completions" / f"completions_{step:05d}.parquet").to_pylist()
        assert rows == expected  # same columns, same order, same ints and float bits
        assert [list(r) for r in rows] == [list(e) for e in expected]
        assert all(type(r["n_x"]) is int and type(r["advantage"]) is float for r in rows)


def test_jsonl_keeps_nan_null_and_hostile_text_exact(capsys, tmp_path):
    run = _hostile_run(tmp_path)
    code, out, _ = _run(capsys, str(run), "--format", "jsonl")
    assert code == 0 and out.isascii()  # nothing raw reaches the terminal
    rows = [json.loads(line) for line in out.splitlines()]
    expected = pq.read_table(run / "completions" / "completions_00060.parquet").to_pylist()
    assert [r["completion"] for r in rows] == [e["completion"] for e in expected]
    assert math.isnan(rows[0]["r"]) and rows[1]["advantage"] is None


def _hostile_run(tmp_path: Path) -> Path:
    run = tmp_path / "out" / "hostile"
    shutil.copytree(HEALTHY / "runs", run / "runs")
    (run / "completions").mkdir()
    table = pa.table(
        {
            "step": pa.array([60] * len(HOSTILE), pa.int64()),
            "prompt": ["[link](http://x) \x1b[31mred"] * len(HOSTILE),
            "completion": HOSTILE,
            "r": pa.array([math.nan, 1.0, 0.5, 0.25]),
            "advantage": pa.array([0.1, None, -0.3, 0.0], pa.float64()),
        }
    )
    pq.write_table(table, run / "completions" / "completions_00060.parquet")
    return run


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_hostile_text_is_inert_and_wrapped(capsys, tmp_path, fmt):
    code, out, _ = _run(capsys, str(_hostile_run(tmp_path)), "--format", fmt, "--width", "80")
    assert code == 0
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out and "\x00" not in out
    assert "\u200b" not in out and "\t" not in out and "\r" not in out
    assert "\\x1b]0;pwned\\x07" in out and "\\u202e" in out and "\\u200b" in out and "\\x00nul" in out
    assert "[bold red]markup[/]" in out  # printed, not interpreted
    assert "line one" in out and "line two\\twith tab" in out  # its own line break kept, the tab escaped
    if fmt == "text":
        assert max(len(line) for line in out.splitlines() if set(line) <= {"y", " "}) <= 80
        assert sum(line.count("y") for line in out.splitlines()) == 5000  # wrapped, not cut
    else:
        assert "more characters)" in out  # a comment stays readable: very long completions are cut
        assert "`````" in out  # the fence is longer than the longest backtick run inside


def test_step_nearest_last_and_sort(capsys):
    code, out, err = _run(capsys, str(COLLAPSE), "--step", "20")
    assert code == 0 and "step 20 has no completions; showing the nearest logged step, 34" in err
    assert out.splitlines()[1].startswith("step 34 ·")
    _, out, _ = _run(capsys, str(COLLAPSE))
    assert out.splitlines()[1].startswith("step 60 ·") and "16 of 16 identical within their group" in out
    assert "16 of 16 at the cap of 16 by their text (clipped_ratio 1)" in out
    _, out, _ = _run(capsys, str(HEALTHY), "--step", "3", "--sort", "advantage", "--format", "jsonl")
    advantages = [json.loads(line)["advantage"] for line in out.splitlines()]
    assert advantages == sorted(advantages, reverse=True)
    _, out, _ = _run(capsys, str(HEALTHY), "--step", "3", "--sort", "reward", "--format", "jsonl")
    totals = [r["length_reward"] + r["contains_x_logged_reward"] for r in map(json.loads, out.splitlines())]
    assert totals == sorted(totals, reverse=True)
    _, out, _ = _run(capsys, str(COLLAPSE), "--step", "35", "--grep", "XXXX", "--format", "jsonl")
    assert out and all("xxxx" in json.loads(line)["completion"].lower() for line in out.splitlines())


def test_errors_are_one_line_exit_2(capsys, tmp_path, monkeypatch):
    code, _, err = _run(capsys, str(FIXTURES_TRL2))
    assert code == 2 and "runs have completions" in err and "--runs" in err and len(err.splitlines()) == 1
    code, _, err = _run(capsys, str(FIXTURES_TRL2 / "grpo_resumed"))
    assert code == 2 and "no completions/completions_*.parquet" in err
    code, _, err = _run(capsys, str(tmp_path / "missing"))
    assert code == 2 and len(err.splitlines()) == 1
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # pyarrow not installed
    code, _, err = _run(capsys, str(HEALTHY))
    assert code == 2 and "pip install 'rltop[completions]'" in err and "Traceback" not in err


def test_unique_folds_identical_completions_of_a_group(capsys):
    _, out, _ = _run(capsys, str(COLLAPSE), "--step", "40", "--format", "jsonl", "--unique")
    rows = [json.loads(line) for line in out.splitlines()]
    pairs = [(r["prompt"], r["completion"]) for r in rows]
    assert len(pairs) == len(set(pairs)) == 8  # 16 rows, 10 of them copies within their group
    _, text, _ = _run(capsys, str(COLLAPSE), "--step", "40", "--unique")
    assert "×5 identical" in text


def test_markdown_table_has_every_column(capsys):
    _, out, _ = _run(capsys, str(HEALTHY), "--step", "1", "--format", "markdown")
    header = next(line for line in out.splitlines() if line.startswith("| # |"))
    assert header == (
        "| # | group | `length_reward` | `contains_x_logged_reward` | advantage | chars | `n_x` | marks |"
    )
    assert sum(1 for line in out.splitlines() if line.startswith("| ") and line[2].isdigit()) == 16


def test_a_completions_file_or_folder_given_directly(capsys, tmp_path):
    folder = COLLAPSE / "completions"
    code, out, _ = _run(capsys, str(folder / "completions_00040.parquet"), "--format", "jsonl")
    assert code == 0 and {json.loads(line)["step"] for line in out.splitlines()} == {40}
    _, out, _ = _run(capsys, str(folder), "--step", "39")
    assert "step 39 ·" in out and "at the cap of 16" in out  # the run beside it gives the cap
    lone = tmp_path / "completions"
    shutil.copytree(folder, lone)  # no event files anywhere near: the folder alone
    code, out, _ = _run(capsys, str(lone))
    assert code == 0 and out.splitlines()[1].startswith("step 60 ·") and "cap" not in out.splitlines()[1]
    (tmp_path / "empty" / "completions").mkdir(parents=True)
    code, _, err = _run(capsys, str(tmp_path / "empty" / "completions"))
    assert code == 2 and "no readable completions file" in err
