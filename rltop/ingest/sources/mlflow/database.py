"""The ``mlflow-db`` source kind: MLflow's SQLite tracking store (``mlflow.db``, the default since 3.7).

``MLFLOW_TRACKING_URI=sqlite:///mlflow.db`` (or no setting at all with MLflow >= 3.7) keeps every
experiment and run in one SQLite file, written while training runs. Each active run of an active
experiment becomes an rltop run, read from the member path ``mlflow.db::<run id>``
(`rltop.ingest.storage.member_path`); its directory is ``<folder of the database>/<experiment>/<run
name>`` (names as `rltop.ingest.sources.mlflow.server.run_folders` makes them: the start of the run id when
two runs share a name). Every read goes through `rltop.ingest.storage.sqlite_readonly` exactly as trackio's
databases are read: nothing is created, changed or left locked beside the database, the training's
writes are never stopped, and a read asks only for the metric rows after the last rowid seen
(`rltop.ingest.sources.mlflow.database_reader`).

A ``.db`` file is MLflow's when it has MLflow's tables (``experiments``, ``runs``, ``metrics``,
``params``); any other ``.db`` is left to the next kind (trackio). The check is one query, asked again
only when the file changed.
"""

from __future__ import annotations

import threading

from rltop.ingest import storage
from rltop.ingest.reading import SourceKind, SourceReader
from rltop.ingest.sources.mlflow.server import folder, run_folders
from rltop.ingest.sources.trackio import kind as trackio_db

TABLES = frozenset({"experiments", "runs", "metrics", "params"})
_verdicts: dict[str, tuple[object, bool]] = {}  # database -> (its stamp, has MLflow's tables)
_members: dict[str, tuple[object, list[tuple[str, str]]]] = {}  # database -> (its stamp, members)
_lock = threading.Lock()


class Unreadable(ValueError):
    """An MLflow database whose runs cannot be listed; the message says what is wrong."""


def _tables(connection: object) -> set[str]:
    rows = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")  # type: ignore[attr-defined]
    return {str(row[0]) for row in rows}


def is_mlflow_database(path: str) -> bool:
    """True when the SQLite file at ``path`` has MLflow's tables (False: another kind's, unreadable now)."""
    import sqlite3

    from rltop.ingest.storage import sqlite_readonly

    if storage.is_url(path):
        return False  # SQLite reads local files only
    key = trackio_db.stamp(path)
    with _lock:
        cached = _verdicts.get(path)
    if cached is not None and cached[0] == key:
        return cached[1]
    try:
        verdict = sqlite_readonly.query(path, _tables) >= TABLES
    except (
        sqlite_readonly.NotSQLite,
        sqlite_readonly.Busy,
        sqlite_readonly.CopyFailed,
        sqlite3.Error,
        OSError,
    ):
        return False  # asked again at the next listing
    with _lock:
        _verdicts[path] = (key, verdict)
    return verdict


RUNS = (
    "SELECT r.run_uuid, coalesce(r.name, r.run_uuid), r.experiment_id, coalesce(e.name, r.experiment_id)"
    " FROM runs r LEFT JOIN experiments e ON e.experiment_id = r.experiment_id"
    " WHERE r.lifecycle_stage = 'active' AND coalesce(e.lifecycle_stage, 'active') = 'active'"
    " ORDER BY r.start_time, r.run_uuid"
)


def _runs(connection: object) -> list[tuple[str, ...]]:
    """(run id, run name, experiment id, experiment name) of every active run, in start order."""
    rows = connection.execute(RUNS)  # type: ignore[attr-defined]
    return [tuple("" if cell is None else str(cell) for cell in row) for row in rows]


def list_runs(path: str) -> list[tuple[str, str]]:
    """(member path, run directory) of every active run in the database.

    `Unreadable` (its message says what is wrong) when the database cannot be read now and was not
    listed before; a database listed before keeps its runs then. Asked again only when it changed.
    """
    import sqlite3

    from rltop.ingest.storage import sqlite_readonly

    key = trackio_db.stamp(path)
    with _lock:
        cached = _members.get(path)
    if cached is not None and cached[0] == key:
        return cached[1]
    try:
        runs = sqlite_readonly.query(path, _runs)
    except (sqlite_readonly.Empty, FileNotFoundError):
        return []
    except (sqlite_readonly.NotSQLite, sqlite_readonly.Busy, sqlite_readonly.CopyFailed, sqlite3.Error,
            OSError) as error:  # fmt: skip
        if cached is not None:
            return cached[1]
        raise Unreadable(f"{sqlite_readonly.problem(error)}; its runs are not read") from None
    experiments: dict[str, str] = {}
    by_experiment: dict[str, list[tuple[str, str]]] = {}
    for run_id, name, experiment_id, experiment in runs:  # type: ignore[misc]
        experiments[experiment_id] = experiment
        by_experiment.setdefault(experiment_id, []).append((run_id, name))
    experiment_folders = run_folders(list(experiments.items()))
    members = []
    for experiment_id, experiment_runs in by_experiment.items():
        experiment_folder = experiment_folders.get(experiment_id, folder(experiment_id))
        for run_id, run_folder in run_folders(experiment_runs).items():
            directory = storage.join(storage.parent(path), experiment_folder, run_folder)
            members.append((storage.member_path(path, run_id), directory))
    with _lock:
        _members[path] = (key, members)
    return members


def _open(path: str) -> SourceReader:
    from rltop.ingest.sources.mlflow.database_reader import (
        MlflowDatabaseReader,  # numpy: only once a run is read
    )

    return MlflowDatabaseReader(path)


KIND = SourceKind(
    name="mlflow-db",
    label="MLflow databases",
    pattern="mlflow.db",
    claims=trackio_db.is_database,  # any .db: `accepts` looks for MLflow's tables (trackio's come next)
    run_directory=storage.parent,
    order=lambda path: path,
    open=_open,
    output_dir=lambda directory: storage.parent(storage.parent(directory)),  # the database's folder
    rank=5,
    why="more points and wall times",
    summary="read from MLflow's database (read-only; the rows after the last one seen)",
    quiet_hint="training stopped, or it logs to another MLflow store",
    members=list_runs,
    accepts=is_mlflow_database,
)
