"""MLflow's local stores: a real TRL GRPO run logged with ``report_to=["tensorboard", "mlflow"]`` (see
tests/fixtures/mlflow/README.md), read from ``mlflow.db`` and from ``mlruns/``, gives the event file's
points and verdicts; its params are its config; nothing is ever written beside the stores; points
logged by the real MLflow client while rltop follows arrive once each.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import signal
import sqlite3
from pathlib import Path

import pytest
from helpers.live import end_all, start_tail
from helpers.mlflow import (
    DATABASE,
    FILESTORE_EVENTS,
    MLRUNS,
    RUN_NAME,
    SQLITE_EVENTS,
    assert_same_points_as_the_event_file,
    findings,
    points_of_tail,
    said,
    start_writer,
    step,
)
from helpers.paths import FIXTURES
from helpers.snapshot import isolate_user_rules, run_cli

from rltop.ingest import sources
from rltop.ingest.follow.discovery import discover
from rltop.ingest.follow.loader import load
from rltop.ingest.sources.mlflow import files as mlflow_files
from rltop.ingest.sources.mlflow.rest import tracking_uri_path


def only_run(path: Path):
    (run,) = load([str(path)]).store.runs.values()
    return run


@pytest.fixture
def database(tmp_path) -> Path:
    """A copy of the real run's ``mlflow.db`` in a folder of its own."""
    folder = tmp_path / "sqlite"
    folder.mkdir()
    shutil.copy(DATABASE, folder / "mlflow.db")
    return folder / "mlflow.db"


@pytest.fixture
def mlruns(tmp_path) -> Path:
    """A copy of the real run's ``mlruns/``."""
    return Path(shutil.copytree(MLRUNS, tmp_path / "filestore" / "mlruns"))


def tree(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file and folder under ``folder``: (size, mtime_ns)."""
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(folder.rglob("*"))}


@pytest.mark.parametrize("store", ["database", "mlruns"])
def test_the_store_and_the_event_file_hold_the_same_points(store, request) -> None:
    path = request.getfixturevalue(store)
    mine = only_run(path)
    assert mine.name == RUN_NAME  # <experiment>/<run name>
    assert mine.source == ("mlflow-db" if store == "database" else "mlflow-files")
    assert mine.scalar_count() == 1326
    assert_same_points_as_the_event_file(
        mine, only_run(SQLITE_EVENTS if store == "database" else FILESTORE_EVENTS)
    )


@pytest.mark.parametrize("store", ["database", "mlruns"])
def test_the_same_verdict_as_the_event_file(store, request, capsys, tmp_path, monkeypatch) -> None:
    isolate_user_rules(monkeypatch, tmp_path)
    path = request.getfixturevalue(store)
    events = SQLITE_EVENTS if store == "database" else FILESTORE_EVENTS
    documents = []
    for target in (path, events):
        code, out, err = run_cli(capsys, "snapshot", "-f", "json", str(target))
        assert code in (0, 1), err
        documents.append(json.loads(out))
    assert documents[0]["runs"][0]["name"] == RUN_NAME
    assert findings(documents[0]) == findings(documents[1])
    # a healthy 40-step run: completions at the 16-token cap (a warning), nothing critical
    assert [f["rule"] for f in findings(documents[0])] == ["truncation"]
    assert documents[0]["runs"][0]["level"] == documents[1]["runs"][0]["level"] == "warn"


@pytest.mark.parametrize("store", ["database", "mlruns"])
def test_the_params_are_the_run_config(store, request) -> None:
    config = only_run(request.getfixturevalue(store)).config
    assert (config["learning_rate"], config["beta"], config["max_steps"], config["num_generations"]) == (
        0.0001, 0.0, 40, 4,
    )  # fmt: skip
    assert config["report_to"] == ["tensorboard", "mlflow"] and config["epsilon_high"] is None
    assert len(config) == 224


def test_reading_never_writes_beside_the_stores(database, mlruns) -> None:
    folders = [database.parent, mlruns.parent]
    before = [tree(folder) for folder in folders]
    digest = hashlib.sha256(database.read_bytes()).hexdigest()
    only_run(database)
    only_run(mlruns)
    assert [tree(folder) for folder in folders] == before  # no -wal, -shm, -journal, nothing touched
    assert hashlib.sha256(database.read_bytes()).hexdigest() == digest


def test_runs_sharing_a_name_are_told_apart_and_deleted_runs_are_not_read(database) -> None:
    connection = sqlite3.connect(database)
    (run_id,) = connection.execute("SELECT run_uuid FROM runs").fetchone()
    for twin, stage in (("f" * 32, "active"), ("e" * 32, "deleted")):
        connection.execute(
            "INSERT INTO runs (run_uuid, name, status, start_time, lifecycle_stage, experiment_id)"
            " SELECT ?, name, status, start_time + 1, ?, experiment_id FROM runs WHERE run_uuid = ?",
            (twin, stage, run_id),
        )
        connection.execute(
            "INSERT INTO metrics (key, value, timestamp, run_uuid, step, is_nan)"
            " VALUES ('loss', 0, 1, ?, 1, 1)",
            (twin,),
        )
    connection.commit()
    connection.close()
    names = sorted(run.name for run in discover([str(database.parent)]).runs)
    assert names == [f"{RUN_NAME} ({run_id[:8]})", f"{RUN_NAME} (ffffffff)"]
    twin = load([str(database)]).store.runs[f"{RUN_NAME} (ffffffff)"]
    assert math.isnan(twin.series["loss"].values[0])  # is_nan: MLflow stores 0 in value


def test_other_sqlite_files_are_left_to_their_kinds(tmp_path) -> None:
    trackio = FIXTURES / "trackio" / "trackio_grpo" / "trackio" / "huggingface.db"
    shutil.copy(trackio, tmp_path / "huggingface.db")
    other = sqlite3.connect(tmp_path / "optuna.db")
    other.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY)")
    other.commit()
    other.close()
    assert sources.recognise(str(tmp_path / "huggingface.db")).name == "trackio"
    assert sources.recognise(str(tmp_path / "optuna.db")).name == "trackio"  # and trackio finds no run in it
    assert [run.kind for run in discover([str(tmp_path)]).runs] == ["trackio"]


def test_mlflow_tracking_uri_is_read_when_no_path_is_given(database, capsys, tmp_path, monkeypatch) -> None:
    isolate_user_rules(monkeypatch, tmp_path)
    assert tracking_uri_path("sqlite:////x/mlflow.db") == "/x/mlflow.db"
    assert tracking_uri_path("file:///x/mlruns") == "/x/mlruns"
    assert tracking_uri_path("mlflow://host:5000") == "mlflow://host:5000"
    assert [tracking_uri_path(uri) for uri in ("databricks", "postgresql://u@h/db", "")] == [None] * 3
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{database}")
    code, out, err = run_cli(capsys, "snapshot", "-f", "json")
    assert code == 0, err  # a warning at most: exit 0
    assert [run["name"] for run in json.loads(out)["runs"]] == [RUN_NAME]


def test_a_metrics_file_write_wakes_its_run(mlruns) -> None:
    run = next(p for p in (mlruns / "0").iterdir() if p.is_dir())
    assert mlflow_files.owner(str(run / "metrics" / "rewards" / "x" / "mean")) == str(run / "meta.yaml")
    assert mlflow_files.owner(str(run / "params" / "beta")) == str(run / "meta.yaml")
    assert mlflow_files.owner(str(mlruns.parent / "metrics" / "eval.json")) is None  # not a run's folder
    assert sources.owner_of(str(run / "metrics" / "loss")) == str(run / "meta.yaml")
    # A file event on a metrics file wakes the run's meta.yaml, though veRL's console logs claim the
    # name "loss" too (it has no suffix): without that, each point waited for the 5 s sweep.
    from watchdog.events import FileModifiedEvent

    from rltop.ingest.follow.native import ChangeSignal, _Handler

    signal_ = ChangeSignal()
    _Handler(signal_, []).dispatch(FileModifiedEvent(str(run / "metrics" / "loss")))
    assert signal_.take() == ({str(run / "meta.yaml")}, False)


@pytest.mark.parametrize("store", ["sqlite", "files"])
def test_points_logged_while_rltop_follows_arrive_once_each(store, tmp_path, database) -> None:
    if store == "sqlite":
        folder, uri = database.parent, f"sqlite:///{database}"
    else:
        folder = tmp_path / "live"
        folder.mkdir()
        uri = (folder / "mlruns").as_uri()
    writer = tail = None
    try:
        writer = start_writer(uri, "live", "calm-river-1", 3, tmp_path)
        said(writer, "ready")
        tail, out, err = start_tail(str(folder))
        for number in range(1, 4):
            step(writer, number)
            out.wait(
                lambda lines, n=number: (
                    sum(f'"step": {n},' in line and "calm-river-1" in line for line in lines) >= 2
                ),
                f"the points of step {number}",
                timeout=120,
            )
        said(writer, "done")
        assert writer.wait(timeout=120) == 0
        tail.send_signal(signal.SIGINT)
        assert tail.wait(timeout=30) == 0, err.lines
    finally:
        end_all(writer, tail)
    name = "live/calm-river-1" if store == "sqlite" else "mlruns/live/calm-river-1"  # under the root given
    got = [point for point in points_of_tail(out.lines) if point[0] == name]
    assert got == sorted(
        [(name, "loss", s, 1.0 / s) for s in range(1, 4)] + [(name, "reward", s, s / 10) for s in range(1, 4)]
    )
