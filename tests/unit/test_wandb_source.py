"""W&B run files (``.wandb``): a real TRL GRPO run logged with ``report_to=["wandb", "tensorboard"]``
(``WANDB_MODE=offline``, see tests/fixtures/wandb/README.md) read from its ``.wandb`` file gives the
same tags, steps, values and verdict as its event file; cut or damaged files never crash the reader
nor lose a point before the damage; without the wandb package rltop says what to install (exit 2)."""

from __future__ import annotations

import json
import shutil

import numpy as np
from helpers.snapshot import isolate_user_rules, run_cli, validate, verdicts_at
from helpers.wandb_files import (  # noqa: F401 (fixtures among them)
    EVENTS_DIR,
    FIXTURE,
    NOW,
    ROOT,
    RUN_FILE,
    WANDB_DIR,
    WITHOUT_WANDB,
    last_history_record,
    only_run,
    points,
    points_up_to,
    read_bytes,
    records_of,
)

from rltop.health.rules.stall import run_finished
from rltop.ingest.follow.loader import load
from rltop.ingest.sources.wandb import leveldb_log
from rltop.ingest.sources.wandb.kind import record_class
from rltop.ingest.sources.wandb.reader import WandbFileReader
from rltop.ingest.sources.wandb.records import RunRecords
from rltop.report.json_report import load_schema


def test_the_wandb_file_and_the_event_file_hold_the_same_points() -> None:
    wandb_run, events_run = only_run(WANDB_DIR), only_run(EVENTS_DIR)
    assert wandb_run.source == "wandb" and events_run.source == "tfevents"
    extra = set(wandb_run.series) - set(events_run.series)
    # TRL's profiling timers log to W&B only (trl.extras.profiling); everything else is shared.
    assert extra and all(tag.startswith("profiling/") for tag in extra)
    assert set(events_run.series) <= set(wandb_run.series)
    for tag, events in events_run.series.items():
        mine = wandb_run.series[tag]
        assert np.array_equal(mine.steps, events.steps), tag
        # Event files store float32; W&B keeps the float64 the trainer logged.
        assert np.array_equal(
            mine.values.astype(np.float32), events.values.astype(np.float32), equal_nan=True
        ), tag
        assert not mine.single_precision
        assert np.all(np.abs(mine.wall_times - events.wall_times) < 5.0), tag  # both loggers' clocks


def test_the_same_verdict_from_both_files(tmp_path, monkeypatch) -> None:
    isolate_user_rules(monkeypatch, tmp_path)
    (_, wandb_health), (_, events_health) = verdicts_at(WANDB_DIR, NOW), verdicts_at(EVENTS_DIR, NOW)
    (mine,), (theirs,) = wandb_health.values(), events_health.values()
    assert mine.level == theirs.level
    assert [(f.rule, f.tag, f.level, f.step) for f in mine.findings] == [
        (f.rule, f.tag, f.level, f.step) for f in theirs.findings
    ]
    assert mine.kind == theirs.kind == "GRPO"


def test_config_summary_and_exit_records() -> None:
    run = only_run(RUN_FILE)
    config = run.config
    assert (config["beta"], config["num_iterations"], config["max_steps"]) == (0.04, 2, 20)
    assert config["output_dir"] == "out_16/wandb_grpo"
    assert run.exit_code == 0  # the exit record: finished cleanly
    # transformers puts train_runtime & co. in the W&B summary only: read as the event file's tags.
    assert run.series["train/train_runtime"].steps.tolist() == [20]
    from rltop.health.calibration import Calibration

    assert run_finished(run, Calibration.from_config(config))


def test_discovered_from_the_wandb_folder_its_run_folder_or_the_file() -> None:
    names = {str(path): list(load([str(path)]).store.runs) for path in (WANDB_DIR, RUN_FILE.parent, RUN_FILE)}
    # A run is its run id (the folders of a resumed run are its sessions).
    assert names == {
        str(WANDB_DIR): ["run-ntz0o0gs"],
        str(RUN_FILE.parent): ["run-ntz0o0gs"],
        str(RUN_FILE): ["run-ntz0o0gs"],
    }


def test_beside_event_files_of_the_same_output_dir_the_event_files_are_read() -> None:
    result = load([str(FIXTURE.parent)])
    (run,) = result.store.runs.values()
    assert run.source == "tfevents"
    assert "W&B run files also present" in run.source_note


def test_the_latest_run_alias_is_read_once_under_the_run_folder(tmp_path) -> None:
    wandb = tmp_path / "wandb"
    shutil.copytree(RUN_FILE.parent, wandb / RUN_FILE.parent.name)
    (wandb / "latest-run").symlink_to(RUN_FILE.parent.name)  # as the wandb SDK makes it
    result = load([str(wandb)])
    (run,) = result.store.runs.values()
    assert [session.label for session in run.sessions] == [RUN_FILE.parent.name]
    assert result.problems == []


def test_a_growing_file_delivers_each_point_once(tmp_path) -> None:
    """Appended a few bytes at a time (block trailers, FIRST/MIDDLE/LAST chunks cut anywhere)."""
    data = RUN_FILE.read_bytes()
    path = tmp_path / "run-live.wandb"
    path.write_bytes(b"")
    reader = WandbFileReader(str(path))
    delivered: list[tuple[str, int, float]] = []
    step = 97  # bytes per write: cuts every header, chunk and block trailer at shifting places
    written = 0
    for size in [*range(0, len(data), step), len(data)]:
        with path.open("ab") as handle:  # appended, as a writer does
            handle.write(data[written:size])
        written = size
        result = reader.read()
        assert result.problems == [], size
        delivered.extend(
            (t, int(s), float(v))
            for t, p in result.decoded.scalars.items()
            for s, v in zip(p.steps, p.values)
        )
    whole = WandbFileReader(str(RUN_FILE)).read().decoded.scalars
    assert sorted(delivered) == sorted(
        (t, int(s), float(v)) for t, p in whole.items() for s, v in zip(p.steps, p.values)
    )


def test_damage_resynchronises_and_reads_the_records_after_it(tmp_path) -> None:
    data = bytearray(RUN_FILE.read_bytes())
    records = records_of(bytes(data))
    # Garbage over a whole stretch of the second block, lengths and checksums included.
    damage_start, damage_end = leveldb_log.BLOCK + 1000, leveldb_log.BLOCK + 3000
    data[damage_start:damage_end] = bytes(range(256)) * 7 + bytes(range(208))
    got, problems, _ = read_bytes(tmp_path, bytes(data))
    assert len(problems) == 1 and "corrupt data at byte" in problems[0]
    clean = bytes(RUN_FILE.read_bytes())
    first_hit = next(offset for offset, end, _ in records if end > damage_start)
    assert points_up_to(clean, first_hit) <= got
    # Every record starting after the damage is read again (same steps: the step metric is known).
    after = [r for r in records if r[0] >= damage_end]
    Record = record_class()
    decoder = RunRecords(step_metrics={"*": "train/global_step"})
    for _, _, payload in after:
        message = Record()
        message.ParseFromString(payload)
        decoder.take(message)
    later = {p for p in points(decoder.drain()) if not p[0].startswith("train/train_")}
    assert later <= got


def test_a_file_that_is_not_a_wandb_file_is_said_once(tmp_path) -> None:
    path = tmp_path / "run-x.wandb"
    path.write_bytes(b"not a W&B file at all" * 10)
    reader = WandbFileReader(str(path))
    assert "no W&B header" in reader.read().problems[0]
    assert reader.read().problems == []


def test_a_replaced_file_is_read_again(tmp_path) -> None:
    data = RUN_FILE.read_bytes()
    path = tmp_path / "run-r.wandb"
    path.write_bytes(data)
    reader = WandbFileReader(str(path))
    first = reader.read()
    assert first.decoded.scalars
    replacement = tmp_path / "new.wandb"
    replacement.write_bytes(data[: len(data) // 2])
    replacement.replace(path)
    again = reader.read()
    assert again.restarted and "reading it again" in again.problems[0]


def test_snapshot_of_a_wandb_folder(capsys, tmp_path, monkeypatch) -> None:
    isolate_user_rules(monkeypatch, tmp_path)
    code, out, err = run_cli(capsys, "snapshot", str(WANDB_DIR), "--format", "json")
    assert code == 0, err
    document = json.loads(out)
    assert validate(document, load_schema()) == []
    (run,) = document["runs"]
    assert run["finished"] and run["exit_code"] == 0 and run["source"]["kind"] == "wandb"


def test_a_damaged_file_header_in_front_of_good_records_is_read(tmp_path) -> None:
    damaged = bytearray(RUN_FILE.read_bytes())
    damaged[1] ^= 0x20  # ":W&B" -> ":w&B"
    got, problems, _ = read_bytes(tmp_path, bytes(damaged))
    assert problems == [f"{tmp_path / 'run-cut.wandb'}: damaged W&B file header; reading its records anyway"]
    whole, _, _ = read_bytes(tmp_path, RUN_FILE.read_bytes())
    assert got == whole
