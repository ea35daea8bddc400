"""trainer_state.json runs followed live: a new checkpoint wakes the watcher and adds only its new points.

The checkpoints are the real ones of tests/fixtures/trl/grpo_healthy, written into a fresh output_dir
the way the Trainer saves them (a new checkpoint-N folder, its trainer_state.json written in pieces).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from helpers.paths import TRL
from helpers.watcher import MODES, EventLog, start_watcher, wait_for  # noqa: F401 (fixture)

from rltop.health.findings import Level
from rltop.health.settings import Rules
from rltop.ingest.feed import APPEARED, FILE_ERROR, RELOADED, REMOVED
from rltop.ingest.follow.loader import load
from rltop.ingest.follow.run_tracker import RunTracker
from rltop.live.activity import ActivityLog
from rltop.model.durations import format_gap

CHECKPOINTS = TRL / "grpo_healthy"
pytestmark = pytest.mark.filterwarnings("ignore:Callback with id:RuntimeWarning")


def save_checkpoint(output_dir: Path, step: int, document: bytes) -> Path:
    """Write checkpoint-<step>/trainer_state.json as json.dump does: the folder, then the file in pieces."""
    path = output_dir / f"checkpoint-{step}" / "trainer_state.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(document[: len(document) // 2])
        handle.flush()
        handle.write(document[len(document) // 2 :])
    return path


def fixture_state(step: int) -> bytes:
    return (CHECKPOINTS / f"checkpoint-{step}" / "trainer_state.json").read_bytes()


def logged(step: int, tag: str = "loss") -> list[tuple[int, float]]:
    """(step, value) of one key in a checkpoint's log_history."""
    history = json.loads(fixture_state(step))["log_history"]
    return [
        (entry["step"], float(entry[tag])) for entry in history if isinstance(entry.get(tag), (int, float))
    ]


@pytest.mark.parametrize("mode", MODES)
def test_a_new_checkpoint_adds_exactly_its_new_points(tmp_path, mode, stop_all):  # noqa: F811
    output_dir = tmp_path / "grpo"
    save_checkpoint(output_dir, 100, fixture_state(100))
    watcher, consumer = start_watcher([tmp_path], mode)
    stop_all(watcher)
    assert consumer.points("grpo", "train/loss") == logged(100)
    save_checkpoint(output_dir, 200, fixture_state(200))
    wait_for(
        lambda: len(consumer.points("grpo", "train/loss")) >= len(logged(200)), "checkpoint-200's points"
    )
    assert consumer.points("grpo", "train/loss") == logged(200)  # steps 101..200 once, nothing again
    assert [e.run for e in consumer.events(APPEARED)] == ["grpo"]
    assert not consumer.events(RELOADED) and not consumer.events(FILE_ERROR)
    store = consumer.store()
    assert store.runs["grpo"].source == "trainer_state"
    fresh = load([str(tmp_path)]).store.runs["grpo"]
    for tag, series in fresh.series.items():
        assert store.runs["grpo"].series[tag].values.tolist() == series.values.tolist(), tag


def drive(tracker: RunTracker):
    """One synchronous watcher cycle: list, read everything marked, hand over the batch."""
    tracker.rescan()
    tracker.read_dirty(lambda: False, lambda: None)
    return tracker.take_batch()


def test_a_checkpoint_that_rewrites_history_reloads_the_run(tmp_path):
    output_dir = tmp_path / "grpo"
    save_checkpoint(output_dir, 100, fixture_state(100))
    tracker = RunTracker([str(tmp_path)])
    drive(tracker)
    # A resume from an earlier checkpoint that went another way: steps 51.. differ from what was read.
    document = json.loads(fixture_state(200))
    for entry in document["log_history"]:
        if entry.get("step", 0) > 50 and "loss" in entry:
            entry["loss"] += 1.0
    save_checkpoint(output_dir, 150, json.dumps(document).encode())
    batch = drive(tracker)
    (reload,) = [e for e in batch.events if e.kind == RELOADED]
    assert reload.run == "grpo"
    (problem,) = [e for e in batch.events if e.kind == FILE_ERROR]
    assert "rewrites steps already read" in problem.message
    reread = [p for p in batch.points if p.tag == "train/loss"]
    steps = [int(s) for p in reread for s in p.points.steps]
    assert steps == [s for s, _ in logged(200)]  # the whole run again, from the newer file


def test_event_files_appearing_beside_checkpoints_take_over(tmp_path):
    output_dir = tmp_path / "grpo"
    save_checkpoint(output_dir, 100, fixture_state(100))
    tracker = RunTracker([str(tmp_path)])
    first = drive(tracker)
    assert [e.run for e in first.events if e.kind == APPEARED] == ["grpo"]
    shutil.copytree(CHECKPOINTS / "runs", output_dir / "runs")
    batch = drive(tracker)
    (removed,) = [e for e in batch.events if e.kind == REMOVED]
    assert removed.run == "grpo" and "now has event files" in removed.message
    (appeared,) = [e for e in batch.events if e.kind == APPEARED]
    assert appeared.run == "grpo/runs/Nov29_21-46-18_vm"
    assert batch.sources[appeared.run][0] == "tfevents"
    assert "trainer_state.json also present" in batch.sources[appeared.run][1]


def test_a_deleted_newest_checkpoint_keeps_what_was_read(tmp_path):
    output_dir = tmp_path / "grpo"
    save_checkpoint(output_dir, 100, fixture_state(100))
    save_checkpoint(output_dir, 200, fixture_state(200))
    tracker = RunTracker([str(tmp_path)])
    drive(tracker)
    shutil.rmtree(output_dir / "checkpoint-200")
    batch = drive(tracker)
    assert not [e for e in batch.events if e.kind in (RELOADED, REMOVED)]
    assert not batch.points  # checkpoint-100 holds nothing that was not read already
    os.utime(output_dir / "checkpoint-100" / "trainer_state.json")
    assert not drive(tracker).points


def test_a_single_trainer_state_file_is_followed(tmp_path, stop_all):  # noqa: F811
    path = save_checkpoint(tmp_path / "grpo", 100, fixture_state(100))
    watcher, consumer = start_watcher([path], "polling")
    stop_all(watcher)
    assert consumer.points("grpo", "train/loss") == logged(100)
    path.write_bytes(fixture_state(200))  # the same file saved again, longer
    wait_for(lambda: len(consumer.points("grpo", "train/loss")) >= len(logged(200)), "the longer file")
    assert consumer.points("grpo", "train/loss") == logged(200)


def test_checkpoints_and_event_files_of_different_runs_are_both_read(tmp_path):
    # Two output_dirs in one tree: one with event files, one with checkpoints only.
    EventLog(tmp_path / "other").add("x", [1])
    save_checkpoint(tmp_path / "grpo", 100, fixture_state(100))
    names = sorted(load([str(tmp_path)]).store.runs)
    assert names == ["grpo", "other"]


def test_a_quiet_checkpoint_run_stalls_after_its_own_cadence(tmp_path):
    # tail's stall verdict (the engine's rule on what tail keeps): points dated by checkpoint times
    # give the checkpoint interval as the usual gap, and the advice names save_steps.
    output_dir = tmp_path / "grpo"
    now = [2_000_000_000.0]
    for step, age in ((100, 2000), (200, 1000)):  # a checkpoint every 1000 s so far
        path = save_checkpoint(output_dir, step, fixture_state(step))
        os.utime(path, (now[0] - age, now[0] - age))
    tracker = RunTracker([str(tmp_path)], clock=lambda: now[0])
    activity = ActivityLog(Rules.defaults()["stall"])
    activity.apply(drive(tracker))
    document = json.loads(fixture_state(200))
    document["log_history"].append({"loss": 0.5, "step": 201})
    document["max_steps"] = 1000  # (the fixture's run ends at 200: finished, never stalled)
    path = save_checkpoint(output_dir, 300, json.dumps(document).encode())
    os.utime(path, (now[0] + 10, now[0] + 10))
    now[0] += 10
    assert activity.apply(drive(tracker)) == {"grpo"}
    now[0] += 1000  # past the 3 min floor, far short of five checkpoint intervals
    assert activity.stalls(now[0]) == []
    now[0] += 4100  # 5100 s since the newest point: past 5 usual gaps (the 1010 s between checkpoints)
    (stalled,) = activity.stalls(now[0])
    assert stalled.level == Level.WARN and f"usual gap {format_gap(1010)}" in stalled.message
    assert "checkpoints are far apart: see save_steps" in stalled.advice
