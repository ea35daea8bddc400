"""trackio databases: a real TRL GRPO run logged with ``report_to=["trackio", "tensorboard"]`` (see
tests/fixtures/trackio/README.md) read from trackio's SQLite database gives the same tags, steps,
values and verdict as its event file. The database is read read-only, only the rows after the last
one seen, and a writer holding a write transaction meanwhile is neither blocked nor misread.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from helpers.paths import FIXTURES
from helpers.snapshot import isolate_user_rules, run_cli, validate, verdicts_at

from rltop.ingest import storage
from rltop.ingest.follow.discovery import discover
from rltop.ingest.follow.loader import load
from rltop.ingest.sources.trackio.kind import list_runs
from rltop.ingest.sources.trackio.reader import TrackioRunReader
from rltop.report.json_report import load_schema

FIXTURE = FIXTURES / "trackio" / "trackio_grpo"
DATABASE = FIXTURE / "trackio" / "huggingface.db"
EVENTS_DIR = next((FIXTURE / "runs").iterdir())
NOW = 1_796_129_130.0  # a minute after the fixture run ended


@pytest.fixture
def trackio_dir(tmp_path) -> Path:
    """A copy of the fixture's TRACKIO_DIR, which tests may write to (rltop itself never does)."""
    folder = tmp_path / "trackio"
    folder.mkdir()
    shutil.copy(DATABASE, folder / DATABASE.name)
    return folder


def only_run(path: Path):
    (run,) = load([str(path)]).store.runs.values()
    return run


def test_the_database_and_the_event_file_hold_the_same_points(trackio_dir) -> None:
    mine, events = only_run(trackio_dir), only_run(EVENTS_DIR)
    assert mine.source == "trackio"
    assert mine.name == "huggingface/dainty-sunset-0"  # <project>/<run name>
    extra = set(mine.series) - set(events.series)
    assert extra and all(tag.startswith("profiling/") for tag in extra)  # TRL's timers skip TensorBoard
    # transformers' TrackioCallback drops the end-of-training figures (train_runtime…) altogether.
    missing = set(events.series) - set(mine.series)
    assert missing == {
        f"train/{key}"
        for key in (
            "train_runtime",
            "train_samples_per_second",
            "train_steps_per_second",
            "train_loss",
            "total_flos",
        )
    }
    for tag in set(events.series) & set(mine.series):
        assert np.array_equal(mine.series[tag].steps, events.series[tag].steps), tag
        assert np.array_equal(
            mine.series[tag].values.astype(np.float32),
            events.series[tag].values.astype(np.float32),
            equal_nan=True,
        ), tag
        assert np.all(np.abs(mine.series[tag].wall_times - events.series[tag].wall_times) < 5.0), tag


def test_the_same_verdict_as_the_event_file(trackio_dir, tmp_path, monkeypatch) -> None:
    isolate_user_rules(monkeypatch, tmp_path)
    (_, mine), (_, theirs) = verdicts_at(trackio_dir, NOW), verdicts_at(EVENTS_DIR, NOW)
    (mine,), (theirs,) = mine.values(), theirs.values()
    assert mine.level == theirs.level and mine.kind == theirs.kind == "GRPO"
    assert [(f.rule, f.tag, f.level, f.step) for f in mine.findings] == [
        (f.rule, f.tag, f.level, f.step) for f in theirs.findings
    ]


def test_the_config_row_is_the_run_config(trackio_dir) -> None:
    config = only_run(trackio_dir).config
    assert (config["beta"], config["num_iterations"], config["max_steps"]) == (0.04, 2, 20)
    assert not any(key.startswith("_") for key in config)  # trackio's _Username, _Created…


def test_reading_never_changes_the_database(trackio_dir) -> None:
    database = trackio_dir / DATABASE.name
    before = hashlib.sha256(database.read_bytes()).hexdigest()
    only_run(trackio_dir)
    assert hashlib.sha256(database.read_bytes()).hexdigest() == before


def metrics_row(connection, run_id: str, step: int, values: dict) -> None:
    """A row as trackio writes it (sqlite_storage.SQLiteStorage.log)."""
    connection.execute(
        "INSERT INTO metrics (timestamp, run_id, run_name, step, metrics) VALUES (?, ?, ?, ?, ?)",
        (
            "2026-12-01T12:45:00.000000+00:00",
            run_id,
            "dainty-sunset-0",
            step,
            json.dumps({**values, "train/global_step": step}),
        ),
    )


def test_only_the_rows_after_the_last_one_seen_while_a_writer_holds_its_lock(trackio_dir) -> None:
    database = trackio_dir / DATABASE.name
    writer = sqlite3.connect(database, isolation_level=None)
    writer.execute("PRAGMA journal_mode = WAL")  # as trackio opens it
    ((member, _),) = list_runs(str(database))
    run_id = member.rpartition(storage.MEMBER)[2]
    reader = TrackioRunReader(member)
    first = reader.read()
    assert len(first.decoded.scalars["train/loss"]) == 20
    assert reader.read().decoded.scalars == {}  # nothing new: nothing delivered (no query either)
    writer.execute("BEGIN IMMEDIATE")  # the training process in the middle of a write
    metrics_row(writer, run_id, 21, {"train/loss": 0.5, "train/reward": "NaN"})
    during = reader.read()  # neither blocked nor seeing the uncommitted row
    assert during.problems == [] and "train/loss" not in during.decoded.scalars
    writer.execute("COMMIT")
    after = reader.read()
    loss = after.decoded.scalars["train/loss"]
    assert loss.steps.tolist() == [21] and loss.values.tolist() == [0.5]
    assert np.isnan(after.decoded.scalars["train/reward"].values[0])
    assert "train/global_step" not in after.decoded.scalars
    writer.close()


def test_a_new_run_in_the_database_becomes_a_new_rltop_run(trackio_dir) -> None:
    database = trackio_dir / DATABASE.name
    writer = sqlite3.connect(database, isolation_level=None)
    writer.execute(
        "INSERT INTO configs (run_id, run_name, config, created_at) VALUES (?, ?, ?, ?)",
        ("second", "clever-moon-1", json.dumps({"beta": 0.0}), "2026-12-01T13:00:00+00:00"),
    )
    connection = writer
    connection.execute(
        "INSERT INTO metrics (timestamp, run_id, run_name, step, metrics) VALUES (?, ?, ?, ?, ?)",
        ("2026-12-01T13:00:01+00:00", "second", "clever-moon-1", 1, json.dumps({"train/loss": 1.0})),
    )
    writer.close()
    found = discover([str(trackio_dir)])
    assert [run.name for run in found.runs] == ["huggingface/clever-moon-1", "huggingface/dainty-sunset-0"]
    store = load([str(trackio_dir)]).store
    assert store.runs["huggingface/clever-moon-1"].series["train/loss"].values.tolist() == [1.0]
    assert len(store.runs["huggingface/dainty-sunset-0"].series["train/loss"]) == 20


def test_an_sqlite_file_that_is_not_trackio_holds_no_run(tmp_path) -> None:
    other = tmp_path / "optuna.db"
    connection = sqlite3.connect(other)
    connection.execute("CREATE TABLE trials (id INTEGER PRIMARY KEY, value REAL)")
    connection.commit()
    connection.close()
    (tmp_path / "garbage.db").write_bytes(b"not sqlite" * 100)
    assert discover([str(tmp_path)]).runs == []
    found = discover([str(other)])
    assert found.runs == [] and "no run in it" in found.problems[0]


def test_snapshot_of_a_trackio_folder(capsys, trackio_dir, tmp_path, monkeypatch) -> None:
    isolate_user_rules(monkeypatch, tmp_path)
    code, out, err = run_cli(capsys, "snapshot", str(trackio_dir), "--format", "json")
    assert code == 0, err
    document = json.loads(out)
    assert validate(document, load_schema()) == []
    (run,) = document["runs"]
    assert run["name"] == "huggingface/dainty-sunset-0" and run["finished"]


def test_every_project_of_a_trackio_dir_is_read(trackio_dir) -> None:
    shutil.copy(trackio_dir / DATABASE.name, trackio_dir / "grpo-sweep.db")  # a second project
    names = [run.name for run in discover([str(trackio_dir)]).runs]
    assert names == ["grpo-sweep/dainty-sunset-0", "huggingface/dainty-sunset-0"]


def test_a_long_history_comes_in_windows_each_row_once(trackio_dir, monkeypatch) -> None:
    import rltop.ingest.sources.trackio.reader as reader_module

    monkeypatch.setattr(reader_module, "BATCH_ROWS", 7)
    ((member, _),) = list_runs(str(trackio_dir / DATABASE.name))
    reader = TrackioRunReader(member)
    steps: list[int] = []
    for _ in range(100):
        result = reader.read()
        loss = result.decoded.scalars.get("train/loss")
        steps.extend([] if loss is None else loss.steps.tolist())
        if not result.more:
            break
    assert steps == list(range(1, 21))
    assert reader.read().decoded.scalars == {}


def test_a_database_from_before_run_ids_tells_runs_by_name(tmp_path) -> None:
    """trackio < 0.24 wrote no run_id (its schema, as sqlite_storage created it then)."""
    database = tmp_path / "old-project.db"
    connection = sqlite3.connect(database)
    connection.execute(
        "CREATE TABLE metrics (id INTEGER PRIMARY KEY AUTOINCREMENT, timestamp TEXT NOT NULL, "
        "run_name TEXT NOT NULL, step INTEGER NOT NULL, metrics TEXT NOT NULL)"
    )
    connection.execute(
        "CREATE TABLE configs (id INTEGER PRIMARY KEY AUTOINCREMENT, run_name TEXT NOT NULL, "
        "config TEXT NOT NULL, created_at TEXT NOT NULL, UNIQUE(run_name))"
    )
    connection.execute(
        "INSERT INTO configs (run_name, config, created_at) VALUES (?, ?, ?)",
        ("first", json.dumps({"beta": 0.1}), "2025-01-01T00:00:00+00:00"),
    )
    for run, step in (("first", 1), ("second", 1), ("first", 2)):
        connection.execute(
            "INSERT INTO metrics (timestamp, run_name, step, metrics) VALUES (?, ?, ?, ?)",
            ("2025-01-01T00:00:01+00:00", run, step, json.dumps({"train/loss": step / 2})),
        )
    connection.commit()
    connection.close()
    store = load([str(tmp_path)]).store
    assert sorted(store.runs) == ["old-project/first", "old-project/second"]
    assert store.runs["old-project/first"].series["train/loss"].steps.tolist() == [1, 2]
    assert store.runs["old-project/first"].config == {"beta": 0.1}


def test_member_paths_and_folders_named_with_colons() -> None:
    assert storage.container("/t/trackio/p.db::0976abc") == "/t/trackio/p.db"
    assert storage.container("/data/exp::1/events.out.tfevents.1.h") == "/data/exp::1/events.out.tfevents.1.h"
    assert storage.container("/t/plain/events.out.tfevents.1.h") == "/t/plain/events.out.tfevents.1.h"


def test_one_database_given_names_its_runs_by_project(trackio_dir) -> None:
    (run,) = discover([str(trackio_dir / DATABASE.name)]).runs
    assert run.name == "huggingface/dainty-sunset-0"


def test_wandb_and_trackio_runs_side_by_side_are_all_read(trackio_dir) -> None:
    wandb = FIXTURES / "wandb" / "wandb_grpo" / "wandb"
    shutil.copytree(wandb, trackio_dir.parent / "wandb")  # ./wandb and ./trackio of one folder
    found = discover([str(trackio_dir.parent / "wandb"), str(trackio_dir)])
    assert sorted((run.kind, run.note) for run in found.runs) == [
        ("trackio", "read from trackio's database (read-only; the rows after the last one seen)"),
        ("wandb", "read from the W&B run file (the wandb SDK's local log, online or offline)"),
    ]
    assert found.superseded == {}
