"""A resumed run is one run: sessions of one output_dir, the later session winning on replayed steps.

Real TRL runs in tests/fixtures/trl2 (see its README): `grpo_resumed` replays steps 81..120 with the
same values (full checkpoint), `grpo_resumed_model_only` with different ones (model-only checkpoint).
"""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path

import numpy as np
import pytest
from helpers.paths import FIXTURES, REPO

from rltop.cli import main
from rltop.health.engine import HealthEngine, assess_store
from rltop.health.findings import Level
from rltop.ingest.feed import SESSION, apply_batch
from rltop.ingest.follow.loader import load
from rltop.ingest.follow.run_tracker import RunTracker
from rltop.ingest.sources.tfevents.tfrecord.reader import EventFileReader
from rltop.ingest.sources.tfevents.tfrecord.writer import EventWriter
from rltop.model.run import Store

TRL2 = FIXTURES / "trl2"
RESUMED = ("grpo_resumed", "grpo_resumed_model_only")


def session_files(name: str) -> list[Path]:
    """The event files of a fixture's sessions, oldest first."""
    return sorted((TRL2 / name).glob("runs/*/events.out.tfevents.*"), key=lambda p: p.name)


def read_file(path: Path) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(steps, values) per tag of one event file on its own."""
    reader = EventFileReader(str(path))
    tags: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
    while True:
        result = reader.read()
        for tag, points in result.decoded.scalars.items():
            tags.setdefault(tag, []).append((points.steps, points.values))
        if not result.more:
            break
    return {
        tag: (np.concatenate([s for s, _ in parts]), np.concatenate([v for _, v in parts]))
        for tag, parts in tags.items()
    }


def expected_merge(name: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """What the merged run must hold: session 1 below session 2's first step, then session 2."""
    first, second = (read_file(path) for path in session_files(name))
    start = min(int(steps.min()) for steps, _ in second.values())
    merged = {}
    for tag in set(first) | set(second):
        steps1, values1 = first.get(tag, (np.empty(0, np.int64), np.empty(0)))
        steps2, values2 = second.get(tag, (np.empty(0, np.int64), np.empty(0)))
        keep = steps1 < start
        merged[tag] = (np.concatenate([steps1[keep], steps2]), np.concatenate([values1[keep], values2]))
    return merged


@pytest.mark.parametrize("name", RESUMED)
def test_resumed_run_is_one_run_with_the_right_points(name: str) -> None:
    store = load([str(TRL2 / name)]).store
    (run,) = store.runs.values()
    assert [(s.label, s.first_step) for s in run.sessions] == [
        (path.parent.name, step) for path, step in zip(session_files(name), (1, 81))
    ]
    assert run.resumed_at == 81
    expected = expected_merge(name)
    assert set(run.series) == set(expected)
    for tag, (steps, values) in expected.items():
        series = run.series[tag]
        np.testing.assert_array_equal(series.steps, steps, err_msg=tag)
        np.testing.assert_array_equal(series.values, values, err_msg=tag)
    # Loss-side tags log every step 1..160, generation-side ones every other step; the first
    # session's end-of-training summary at step 120 is gone with the steps it replaced.
    assert len(run.series["train/loss"]) == 160 and len(run.series["train/reward"]) == 80
    assert run.series["train/train_runtime"].steps.tolist() == [160]
    assert run.last_step == 160


def test_model_only_resume_keeps_the_later_sessions_values() -> None:
    first, second = (read_file(path) for path in session_files("grpo_resumed_model_only"))
    (run,) = load([str(TRL2 / "grpo_resumed_model_only")]).store.runs.values()
    steps, values = run.series["train/grad_norm"].steps, run.series["train/grad_norm"].values
    replayed = (steps >= 81) & (steps <= 120)
    later = dict(zip(*second["train/grad_norm"]))
    earlier = dict(zip(*first["train/grad_norm"]))
    assert all(value == later[step] for step, value in zip(steps[replayed], values[replayed]))
    assert any(later[step] != earlier[step] for step in range(81, 121))  # the variant really differs


@pytest.mark.parametrize("name", RESUMED)
def test_resumed_run_is_judged_as_one_run(name: str) -> None:
    store = load([str(TRL2 / name)]).store
    (health,) = assess_store(store).values()
    assert health.level < Level.CRITICAL
    # No finding comes from the step going back, and the run is not "finished" at step 120.
    assert all(f.rule not in ("stall", "non_finite") for f in health.findings)


def test_export_says_which_session_each_point_came_from(capsys) -> None:
    assert main(["export", str(TRL2 / "grpo_resumed_model_only"), "--tags", "train/loss$"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    first, second = (path.parent.name for path in session_files("grpo_resumed_model_only"))
    sessions = {int(row["step"]): row["session"] for row in rows}
    assert len(rows) == 160 and sessions[80] == first and sessions[81] == second and sessions[160] == second


def test_a_fresh_start_in_the_same_output_dir_is_another_run(tmp_path: Path) -> None:
    """The same script run twice into one output_dir: both sessions start at step 1."""
    for index, start in enumerate((1_700_000_000.0, 1_700_001_000.0)):
        with EventWriter(tmp_path / "out" / "runs" / f"Nov0{index + 1}_10-00-00_host", start=start) as writer:
            for step in range(1, 11):
                writer.add_scalar("train/loss", float(step), step, wall_time=start + step)
    store = load([str(tmp_path / "out")]).store
    assert sorted(store.runs) == ["runs/Nov01_10-00-00_host", "runs/Nov02_10-00-00_host"]
    assert all(len(run.series["train/loss"]) == 10 for run in store.runs.values())


def test_live_a_new_session_joins_the_run_and_health_goes_on(tmp_path: Path) -> None:
    """The resume appears while rltop watches: the run takes it in, acknowledgements survive."""
    output = tmp_path / "grpo_resumed"
    output.mkdir()
    first_file, second_file = session_files("grpo_resumed")
    shutil.copytree(first_file.parent, output / "runs" / first_file.parent.name)
    tracker, store, engine = RunTracker([str(tmp_path)]), Store(), HealthEngine()
    tracker.rescan()
    tracker.read_dirty(lambda: False, lambda: None)
    apply_batch(store, tracker.take_batch())
    (name,) = store.runs
    run = store.runs[name]
    health = engine.assess(run)
    assert run.last_step == 120 and "train/train_runtime" in run.series
    assert "train/completions/clipped_ratio" in health.marks  # a truncation episode on record
    engine.acknowledge(name)
    assert engine.assess(run).marks == {}

    shutil.copytree(second_file.parent, output / "runs" / second_file.parent.name)
    tracker.rescan()
    tracker.read_dirty(lambda: False, lambda: None)
    batch = tracker.take_batch()
    assert [event.kind for event in batch.events] == [SESSION]
    apply_batch(store, batch)
    assert list(store.runs) == [name] and run.resumed_at == 81
    assert len(run.series["train/loss"]) == 160
    assert run.series["train/train_runtime"].steps.tolist() == [160]
    health = engine.assess(run)
    # The acknowledgement covered steps up to 120: only episodes after it may mark the card again.
    for tag, level in health.marks.items():
        assert level > Level.OK and max(f.last_step for f in health.findings if f.tag == tag) > 120, tag
    bulk = assess_store(load([str(tmp_path)]).store)[name]
    assert [(f.rule, f.tag, f.level, f.step, f.value) for f in health.findings] == [
        (f.rule, f.tag, f.level, f.step, f.value) for f in bulk.findings
    ]


def test_tail_follows_a_resume_as_it_appears(tmp_path: Path) -> None:
    """`rltop tail` on an output_dir: a resumed session joins the run live, its points come once."""
    import json
    import subprocess
    import sys

    from helpers.live import Lines

    output = tmp_path / "grpo_resumed"
    first_file, second_file = session_files("grpo_resumed")
    shutil.copytree(first_file.parent, output / "runs" / first_file.parent.name)
    tail = subprocess.Popen(
        [sys.executable, "-m", "rltop", "tail", str(tmp_path), "--tags", "train/loss$"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = Lines(tail.stdout), Lines(tail.stderr)
        out.wait(lambda lines: len(lines) >= 120, "session 1's points")
        shutil.copytree(second_file.parent, output / "runs" / second_file.parent.name)
        out.wait(lambda lines: len(lines) >= 200, "session 2's points")
        err.wait(lambda lines: any("new session" in line for line in lines), "the new-session note")
    finally:
        tail.terminate()
        tail.wait(timeout=30)
    points = [json.loads(line) for line in out.lines]
    runs = {p["run"] for p in points}
    assert runs == {"grpo_resumed/runs/" + first_file.parent.name}  # one run, named after session 1
    later = [(p["step"], p["session"]) for p in points[120:]]
    assert later == [(step, second_file.parent.name) for step in range(81, 161)]  # each point once
    assert not [line for line in err.lines if "Traceback" in line]
