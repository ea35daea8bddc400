"""`rltop export`: format, order, exactness, filters, errors, and a log directory left untouched."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers.paths import TRL, trl_event_file

from rltop.cli import main


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rltop", *args], capture_output=True, text=True, timeout=120)


def test_csv_is_sorted_and_exact(capsys) -> None:
    assert main(["export", str(TRL / "grpo_with_eval")]) == 0
    out = capsys.readouterr().out
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["run", "tag", "step", "wall_time", "value", "session"]
    body = rows[1:]
    keys = [(r[0], r[1], int(r[2])) for r in body]
    assert keys == sorted(keys)
    from tbparse import SummaryReader

    frame = SummaryReader(str(trl_event_file("grpo_with_eval"))).scalars
    assert len(body) == len(frame)
    expected = {(t, int(s), np.float32(v).tobytes()) for t, s, v in zip(frame.tag, frame.step, frame.value)}
    got = {(r[1], int(r[2]), np.float32(float(r[4])).tobytes()) for r in body}
    assert got == expected
    assert all(r[0] == "runs/Nov29_21-47-07_vm" and r[5] == "Nov29_21-47-07_vm" for r in body)


def test_values_round_trip_shortest(tmp_path: Path, capsys) -> None:
    from tensorboardX import SummaryWriter

    writer = SummaryWriter(logdir=str(tmp_path / 'run,"x"'))  # a run name CSV must quote
    values = [0.1, 1 / 3, 1e-30, 3.4e38, math.nan, math.inf, -math.inf, -0.0, 12345.678]
    for step, value in enumerate(values):
        writer.add_scalar("train/value", value, step)
    writer.close()
    assert main(["export", str(tmp_path), "--format", "csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))[1:]
    assert rows[0][0] == 'run,"x"'
    printed = [r[4] for r in rows]
    assert printed[0] == "0.1" and printed[4:7] == ["nan", "inf", "-inf"]
    for text, value in zip(printed, values):
        assert np.float32(float(text)).tobytes() == np.float32(value).tobytes()
    assert main(["export", str(tmp_path), "--format", "jsonl"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert set(lines[0]) == {"run", "tag", "step", "wall_time", "value", "session"}
    assert lines[4]["value"] == "nan" and lines[5]["value"] == "inf"
    assert lines[0]["value"] == 0.1


def test_filters(capsys) -> None:
    assert main(["export", str(TRL), "--tags", r"val/ratio$", "--runs", "ppo_"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))[1:]
    assert {r[1] for r in rows} == {"train/val/ratio"}
    assert {r[0].split("/")[0] for r in rows} == {"ppo_healthy", "ppo_unstable"}
    assert len(rows) == 300


def test_missing_path_exits_2_with_one_line(tmp_path: Path) -> None:
    done = run_cli("export", str(tmp_path / "missing"))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "no such file" in done.stderr
    assert "Traceback" not in done.stderr


def test_directory_without_event_files(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hi")
    done = run_cli("export", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "no event files" in done.stderr and str(tmp_path) in done.stderr


def test_unreadable_file(tmp_path: Path, monkeypatch, capsys) -> None:
    target = tmp_path / "events.out.tfevents.1.h.1.0"
    target.write_bytes(trl_event_file("ppo_healthy").read_bytes())
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, m: False if str(p) == str(target) else real_access(p, m))
    assert main(["export", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "permission denied" in err


def test_bad_regex(capsys) -> None:
    assert main(["export", str(TRL), "--tags", "("]) == 2
    assert "invalid --tags regex" in capsys.readouterr().err


def test_log_directory_is_never_written(tmp_path: Path, trl_copy) -> None:
    run = trl_copy("ppo_unstable")

    def state() -> dict[str, tuple[int, int]]:
        return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(run.rglob("*"))}

    before = state()
    os.chmod(run, 0o555)  # even a write attempt would fail loudly for non-root users
    try:
        assert run_cli("export", str(run), "--format", "jsonl").returncode == 0
    finally:
        os.chmod(run, 0o755)
    assert state() == before


@pytest.mark.parametrize("args", [["--help"], ["export", "--help"]])
def test_help(args: list[str]) -> None:
    done = run_cli(*args)
    assert done.returncode == 0 and "rltop" in done.stdout


def test_names_with_control_characters_are_escaped_unless_raw() -> None:
    # Issue 11 changed this: escaped everywhere by default (pipes end on terminals: `| jq -r`,
    # `| less`), exact names only with --raw. It used to escape only when stdout was a terminal.
    from rltop.model.series import Points
    from rltop.report.export import format_points

    points = Points(np.array([1]), np.array([2.0]), np.array([0.5]))
    evil = "train/\x1b]0;pwned\x07"
    for fmt in ("csv", "jsonl"):
        (escaped,) = format_points("run", evil, points, True, fmt)
        (exact,) = format_points("run", evil, points, True, fmt, raw=True)
        assert "\x1b" not in escaped and "\\x1b" in escaped and "u001b" not in escaped
        assert evil in exact if fmt == "csv" else "\\u001b" in exact
