"""The ``trackio`` source kind: trackio's local SQLite databases, one ``<project>.db`` a project.

trackio (``report_to="trackio"``) keeps each project in ``$TRACKIO_DIR/<project>.db`` (default
``~/.cache/huggingface/trackio``), written while training runs (WAL journal). Each run of the
project becomes an rltop run, read from the member path ``<project>.db::<run id>``
(`rltop.ingest.storage.member_path`), its directory ``<TRACKIO_DIR>/<project>/<run name>``. The
database is opened read-only (a ``mode=ro`` URI, ``query_only``), one short read at a time, so
rltop never takes a write lock that could stall the training process; each read asks only for the
rows after the last row id seen (`rltop.ingest.trackio_reader`).

The schema is trackio's (checked on trackio 0.43, schema version 2): ``metrics(id, run_id,
timestamp, run_name, step, metrics)`` with the logged dict as JSON, ``configs(run_id, run_name,
config)``. Databases written before trackio 0.24 have no ``run_id``: their runs are told by name.
A ``.db`` file without trackio's tables is not a trackio database and holds no run.
"""

from __future__ import annotations

import os
from typing import Any

from rltop.ingest import storage
from rltop.ingest.reading import SourceKind, SourceReader

SUFFIX = ".db"
_members_cache: dict[str, tuple[object, list[tuple[str, str]]]] = {}  # db -> (its stamp, members)
_known_runs: dict[str, tuple[dict[str, str], int]] = {}  # db -> (run id -> name, newest row id listed)


def is_database(name: str) -> bool:
    """True for a name a trackio project database may have (``<project>.db``)."""
    return name.endswith(SUFFIX) and len(name) > len(SUFFIX)


def connect(path: str) -> Any:
    """A read-only connection to the database ``path`` (sqlite3.Error when it cannot be opened).

    ``mode=ro`` never writes nor takes a write lock; ``query_only`` refuses any write on this
    connection even by mistake; a short busy timeout keeps a poll from waiting on the writer. A
    WAL database needs its ``-shm`` index, which SQLite creates beside it when no writer has; in a
    folder rltop may not write to, a database no writer has open (no ``-wal`` file) is read as
    ``immutable`` instead: no index, no lock, nothing to stall.
    """
    import pathlib
    import sqlite3

    uri = pathlib.Path(os.path.abspath(path)).as_uri() + "?mode=ro"
    try:
        connection = sqlite3.connect(uri, uri=True, timeout=0.5, check_same_thread=False)
        connection.execute("PRAGMA query_only = 1")
        connection.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()  # opens it for real
    except sqlite3.OperationalError:
        if os.path.exists(path + "-wal") or not os.path.exists(path):
            raise
        connection = sqlite3.connect(uri + "&immutable=1", uri=True, timeout=0.5, check_same_thread=False)
        connection.execute("PRAGMA query_only = 1")
    return connection


def columns(connection: Any, table: str) -> set[str]:
    """The column names of ``table`` (empty when it does not exist)."""
    return {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}


def stamp(path: str) -> object:
    """What changes whenever the database may hold new rows: the file's and its WAL's size and time."""
    marks = []
    for name in (path, path + "-wal"):
        try:
            info = os.stat(name)
        except OSError:
            marks.append(None)
            continue
        marks.append((info.st_ino, info.st_size, info.st_mtime_ns))
    return tuple(marks)


def project_of(path: str) -> str:
    """The project a database holds: its file name without ``.db``."""
    return storage.name(path)[: -len(SUFFIX)]


def list_runs(path: str) -> list[tuple[str, str]]:
    """(member path, run directory) of every run in the database, in creation order.

    A run's directory is ``<folder of the database>/<project>/<run name>`` (a name two runs
    share gets the start of its run id): the path its name and display name are made of.

    Empty for a file that is not a trackio database (or cannot be opened now). Asked again only
    when the database changed, and then only about the rows added since (a rowid range).
    """
    import sqlite3

    key = stamp(path)
    cached = _members_cache.get(path)
    if cached is not None and cached[0] == key:
        return cached[1]
    known = _known_runs.get(path, ({}, 0))
    try:
        connection = connect(path)
        try:
            found = _runs(connection, *known)
        finally:
            connection.close()
    except sqlite3.Error:
        found = None
    if found is None:
        _known_runs.pop(path, None)
        return []
    _known_runs[path] = found
    project = storage.join(storage.parent(path), project_of(path))
    counts: dict[str, int] = {}
    for name in found[0].values():
        counts[name] = counts.get(name, 0) + 1
    members = [
        (storage.member_path(path, ident),
         storage.join(project, name.replace("/", "_") if counts[name] == 1 else f"{name} ({ident[:8]})"))
        for ident, name in found[0].items()
    ]  # fmt: skip
    _members_cache[path] = (key, members)
    return members


def _runs(connection: Any, known: dict[str, str], seen: int) -> tuple[dict[str, str], int] | None:
    """(run id -> run name, the newest metrics row id) with the rows after ``seen`` looked at.

    Runs are told by name in databases without run ids. None: not trackio's schema.
    """
    metrics = columns(connection, "metrics")
    if not {"id", "timestamp", "step", "metrics", "run_name"} <= metrics:
        return None
    ident = "run_id" if "run_id" in metrics else "run_name"
    (newest,) = connection.execute("SELECT max(id) FROM metrics").fetchone()
    newest = newest or 0
    if newest < seen:  # rows gone: the database was replaced or pruned; list it anew
        known, seen = {}, 0
    runs = dict(known)
    if ident in columns(connection, "configs"):
        for run, name in connection.execute(f"SELECT {ident}, run_name FROM configs ORDER BY id"):
            runs.setdefault(str(run), str(name))
    # A run whose config row is missing (an old database, a config written late) still has rows:
    # the rows added since the last listing say which (grouped on the rowid range only).
    # The first listing walks the run index; later ones only the rowid range of the new rows.
    scan = "metrics NOT INDEXED" if seen else "metrics"
    query = f"SELECT {ident}, min(id) FROM {scan} WHERE id > ? GROUP BY {ident} ORDER BY min(id)"
    for run, first in connection.execute(query, (seen,)).fetchall():
        if str(run) not in runs:
            (name,) = connection.execute("SELECT run_name FROM metrics WHERE id = ?", (first,)).fetchone()
            runs[str(run)] = str(name)
    return runs, newest


def output_dir(directory: str) -> str:
    """The folder holding ``$TRACKIO_DIR`` (``<it>/<project>/<run>``): the output_dir, when
    TRACKIO_DIR was set inside it."""
    return storage.parent(storage.parent(storage.parent(directory)))


def _open(path: str) -> SourceReader:
    from rltop.ingest.trackio_reader import TrackioRunReader  # numpy: only once a run is read

    return TrackioRunReader(path)


KIND = SourceKind(
    name="trackio",
    label="trackio databases",
    pattern="<project>.db",
    claims=is_database,
    run_directory=storage.parent,  # the database's folder (each run's own: `list_runs`)
    order=lambda path: path,
    open=_open,
    output_dir=output_dir,
    rank=5,  # as W&B run files: both are read where both are (neither hides the other's runs)
    why="more points and wall times",
    summary="read from trackio's database (read-only; the rows after the last one seen)",
    quiet_hint="training stopped, or trackio has not flushed its rows yet",
    members=list_runs,
)
