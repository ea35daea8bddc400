"""trainer_state.json as a source: the real checkpoints of the fixture runs, read without event files.

The same runs wrote both: their checkpoint-*/trainer_state.json must give the tags and values of their
event files wherever the steps overlap (event files store float32: a value matches when it rounds to
the same float32), the newest checkpoint must be the one read, and a run with both reads the event
files and says so.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from helpers.paths import FIXTURES, TRL

from rltop.cli import main
from rltop.health.calibration import Calibration
from rltop.health.engine import HealthEngine
from rltop.ingest.follow.loader import load
from rltop.ingest.sources.trainer_state import TrainerStateReader, parse_trainer_state, tag_of

TRL2 = FIXTURES / "trl2"
# (fixture folder, run): every run with checkpoints among the copied fixtures
WITH_CHECKPOINTS = [
    (TRL, "grpo_healthy"), (TRL, "ppo_healthy"), (TRL2, "grpo_resumed"), (TRL2, "grpo_resumed_model_only"),
]  # fmt: skip
# Tags only the end-of-training summary has: transformers logs it after the last checkpoint.
SUMMARY = {"train/train_runtime", "train/train_samples_per_second", "train/train_steps_per_second",
           "train/total_flos", "train/train_loss"}  # fmt: skip


def checkpoints_only(source: Path, target: Path, stamps: dict[int, float] | None = None) -> Path:
    """Copy a run's checkpoint-*/trainer_state.json files alone (optionally with given mtimes)."""
    for state in sorted(source.glob("checkpoint-*/trainer_state.json")):
        copied = target / state.parent.name / state.name
        copied.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(state, copied)
        step = int(state.parent.name.split("-")[1])
        if stamps is not None:
            os.utime(copied, (stamps[step], stamps[step]))
    return target


def newest_checkpoint(run: Path) -> Path:
    return max(run.glob("checkpoint-*/trainer_state.json"), key=lambda p: int(p.parent.name.split("-")[1]))


def first_per_step(series) -> dict[int, float]:
    """The first value logged at each step of a series."""
    values: dict[int, float] = {}
    for step, value in zip(series.steps.tolist(), series.values.tolist()):
        values.setdefault(step, value)
    return values


def only_run(paths: list[str]):
    result = load(paths)
    (run,) = result.store.runs.values()
    return run, result


@pytest.mark.parametrize(("folder", "name"), WITH_CHECKPOINTS, ids=[n for _, n in WITH_CHECKPOINTS])
def test_checkpoints_give_the_event_files_tags_and_values(tmp_path, folder, name):
    events, _ = only_run([str(folder / name)])
    assert events.source == "tfevents"
    states, _ = only_run([str(checkpoints_only(folder / name, tmp_path / name))])
    assert states.source == "trainer_state"
    newest = parse_trainer_state(newest_checkpoint(folder / name).read_bytes())
    assert sorted(states.series) == sorted(newest.scalars)
    assert set(states.series) <= set(events.series)
    assert set(events.series) - set(states.series) <= SUMMARY  # only logged after the last checkpoint
    compared = 0
    for tag, series in states.series.items():
        # Every point of the checkpoint was logged to the event file at the same step (train/epoch
        # comes twice at the last step of the event file: a second time with the summary)...
        assert set(series.steps.tolist()) <= set(events.series[tag].steps.tolist())
        logged = first_per_step(events.series[tag])
        # ...with the same value once rounded to float32, NaN where the trainer logged NaN.
        for step, value in first_per_step(series).items():
            assert np.float32(value).tobytes() == np.float32(logged[step]).tobytes(), (tag, step)
            compared += 1
    assert compared >= 1000
    assert states.last_step == newest.global_step  # the newest checkpoint was the one read


def test_the_trainer_state_settings_reach_the_rules(tmp_path):
    run, _ = only_run([str(checkpoints_only(TRL / "grpo_healthy", tmp_path / "grpo"))])
    assert run.config["max_steps"] == 200 and run.config["logging_steps"] == 1
    calibration = Calibration.from_config(run.config)
    assert calibration.max_steps == 200 and calibration.logging_steps == 1


def test_a_run_that_stopped_early_says_at_which_step_of_how_many(tmp_path):
    run_dir = checkpoints_only(TRL / "grpo_healthy", tmp_path / "grpo")
    shutil.rmtree(run_dir / "checkpoint-200")  # as if training stopped after checkpoint 100
    run, _ = only_run([str(run_dir)])
    assert run.last_step == 100
    health = HealthEngine().assess(run, now=run.last_point_wall_time + 7 * 86400)
    (stall,) = [finding for finding in health.findings if finding.rule == "stall"]
    assert "stopped at step 100 of 200" in stall.message


def test_points_carry_the_time_of_the_first_checkpoint_holding_them(tmp_path):
    run_dir = checkpoints_only(
        TRL / "grpo_healthy", tmp_path / "grpo", {100: 1_800_000_000, 200: 1_800_003_600}
    )
    run, _ = only_run([str(run_dir)])
    loss = run.series["train/loss"]
    assert set(loss.wall_times[loss.steps <= 100].tolist()) == {1_800_000_000.0}
    assert set(loss.wall_times[loss.steps > 100].tolist()) == {1_800_003_600.0}
    assert run.last_point_wall_time == 1_800_003_600.0


def test_a_run_with_both_reads_the_event_files_and_says_so(capsys):
    run, result = only_run([str(TRL / "ppo_healthy")])
    assert run.source == "tfevents"
    assert (
        run.source_note
        == "trainer_state.json also present; reading the event files (more points and wall times)"
    )
    assert result.discovery.superseded == {str(TRL / "ppo_healthy"): "event files"}
    assert main(["snapshot", str(TRL / "ppo_healthy"), "--format", "json", "--fail-on", "never"]) == 0
    (report,) = json.loads(capsys.readouterr().out)["runs"]
    assert report["source"] == {"kind": "tfevents", "note": run.source_note}
    main(["snapshot", str(TRL / "ppo_healthy"), "--fail-on", "never", "--width", "120"])
    assert "trainer_state.json also present; reading the event files" in capsys.readouterr().out


def test_snapshot_of_one_trainer_state_file(capsys):
    state = TRL / "grpo_healthy" / "checkpoint-100" / "trainer_state.json"
    code = main(["snapshot", str(state), "--format", "json", "--fail-on", "never"])
    out = capsys.readouterr()
    assert code == 0, out.err
    (report,) = json.loads(out.out)["runs"]
    assert report["name"] == "grpo_healthy" and report["last_step"] == 100  # that file, not the newest
    assert report["source"]["kind"] == "trainer_state" and "no event files" in report["source"]["note"]
    assert report["config"]["max_steps"] == 200


def test_eval_keys_become_eval_tags():
    assert (tag_of("eval_loss"), tag_of("test_reward"), tag_of("loss")) == (
        "eval/loss",
        "test/reward",
        "train/loss",
    )
    history = [{"loss": 1.5, "step": 1}, {"eval_loss": 2.0, "step": 2}, {"kl": None, "step": 2}]
    document = {"global_step": 2, "log_history": [*history, {"note": "x", "step": 2}]}
    state = parse_trainer_state(json.dumps(document))
    assert sorted(state.scalars) == ["eval/loss", "train/loss"]  # null and strings are not points


def test_a_half_written_newest_file_is_retried_then_said_once(tmp_path):
    path = tmp_path / "out" / "checkpoint-5" / "trainer_state.json"
    path.parent.mkdir(parents=True)
    full = json.dumps({"global_step": 5, "log_history": [{"loss": 1.0, "step": s} for s in range(1, 6)]})
    path.write_text(full[: len(full) // 2])
    reader = TrainerStateReader(str(path))
    first = reader.read()
    assert first.problems == [] and not first.decoded.scalars  # young: still being written
    assert "not JSON" in reader.unfinished()
    os.utime(path, (1_000_000_000, 1_000_000_000))  # it stopped changing long ago: damaged
    second = reader.read()
    assert len(second.problems) == 1 and "not JSON" in second.problems[0]
    assert reader.read().problems == []  # said once: unchanged, not even read again
    path.write_text(full)
    third = reader.read()
    assert third.problems == [] and third.decoded.scalars["train/loss"].steps.tolist() == [1, 2, 3, 4, 5]
    assert reader.unfinished() is None


def test_a_one_shot_load_says_what_a_damaged_newest_file_hides(tmp_path):
    run_dir = checkpoints_only(
        TRL / "grpo_healthy", tmp_path / "grpo", {100: 1_000_000_000, 200: 1_000_000_100}
    )
    newest = run_dir / "checkpoint-200" / "trainer_state.json"
    newest.write_bytes(newest.read_bytes()[:1000])
    os.utime(newest, (1_000_000_100, 1_000_000_100))
    result = load([str(run_dir)])
    assert any("checkpoint-200/trainer_state.json: not JSON" in problem for problem in result.problems)


def test_delivered_points_are_the_consumers_own_arrays(tmp_path):
    """A consumer's series may adopt what a read delivers and write into it (a purge, then an
    append): the reader keeps its own copy to compare the next version of the file with."""
    path = tmp_path / "run" / "checkpoint-5" / "trainer_state.json"
    path.parent.mkdir(parents=True)
    history = [{"loss": 1.0, "step": step} for step in range(1, 6)]
    path.write_text(json.dumps({"global_step": 5, "log_history": history}))
    os.utime(path, (1_000_000_000, 1_000_000_000))
    reader = TrainerStateReader(str(path))
    points = reader.read().decoded.scalars[tag_of("loss")]
    for kept in reader._delivered[tag_of("loss")]:
        assert not np.shares_memory(points.steps, kept) and not np.shares_memory(points.values, kept)
