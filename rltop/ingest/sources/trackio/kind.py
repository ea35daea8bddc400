"""The ``trackio`` source kind: trackio's local SQLite databases, one ``<project>.db`` a project.

trackio (``report_to="trackio"``) keeps each project in ``$TRACKIO_DIR/<project>.db`` (default
``~/.cache/huggingface/trackio``), written while training runs (WAL journal). Each run of the
project becomes an rltop run, read from the member path ``<project>.db::<run id>``
(`rltop.ingest.storage.member_path`), its directory ``<TRACKIO_DIR>/<project>/<run name>``. Every
read goes through `rltop.ingest.storage.sqlite_readonly`: nothing is ever created, changed or left locked
beside the database, and the training's writes are never stopped; each read asks only for the
rows after the last row id seen (`rltop.ingest.sources.trackio.reader`).

The schema is trackio's (checked on trackio 0.43, schema version 2): ``metrics(id, run_id,
timestamp, run_name, step, metrics)`` with the logged dict as JSON, ``configs(run_id, run_name,
config)``. Databases written before trackio 0.24 have no ``run_id``: their runs are told by name.
A ``.db`` file that is not SQLite, or has not trackio's tables, is not a trackio database and holds
no run. A trackio database that cannot be read (damaged, locked by its writer, not readable by
this user) is said, naming the file and what is wrong; a damaged page costs only the rows on it
(`walk_rows`).
"""

from __future__ import annotations

import os
from typing import Any

from rltop.ingest import storage
from rltop.ingest.reading import SourceKind, SourceReader

SUFFIX = ".db"
WALK_ROWS = 50000  # rows per window of a listing that walks the table (a damaged index)
_members_cache: dict[str, tuple[object, list[tuple[str, str]]]] = {}  # db -> (its stamp, members)
_known_runs: dict[str, tuple[dict[str, str], int]] = {}  # db -> (run id -> name, newest row id listed)
# A range of row ids a damaged page kept from being read: (first, last or None: to the end, why).
Gap = tuple[int, "int | None", str]


class Unreadable(ValueError):
    """A trackio database whose runs cannot be listed; the message says what is wrong."""


def is_database(name: str) -> bool:
    """True for a name a trackio project database may have (``<project>.db``)."""
    return name.endswith(SUFFIX) and len(name) > len(SUFFIX)


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


def member_id(ident: str) -> str:
    """A run id (or, in old databases, a run name) as the member part of a path: ``%``, ``/`` and
    ``:`` escaped, so that `rltop.ingest.storage.container` finds the database again."""
    return ident.replace("%", "%25").replace("/", "%2F").replace(":", "%3A").replace("\\", "%5C")


def run_ident(member: str) -> str:
    """The run id (or name) a `member_id` stands for."""
    for escaped, raw in (("%2F", "/"), ("%3A", ":"), ("%5C", "\\"), ("%25", "%")):
        member = member.replace(escaped, raw)
    return member


def list_runs(path: str) -> list[tuple[str, str]]:
    """(member path, run directory) of every run in the database, in creation order.

    A run's directory is ``<folder of the database>/<project>/<run name>`` (a name two runs
    share gets the start of its run id): the path its name and display name are made of.

    Empty for a file that is not a trackio database. `Unreadable` (its message says what is wrong)
    for a database that cannot be read now: damaged, locked by its writer, not readable; a database
    listed before keeps its runs then (their readers say what is wrong). Asked again only when the
    database changed, and then only about the rows added since (a rowid range).
    """
    import sqlite3

    from rltop.ingest.storage import sqlite_readonly

    key = stamp(path)
    cached = _members_cache.get(path)
    if cached is not None and cached[0] == key:
        return cached[1]
    known = _known_runs.get(path, ({}, 0))
    damage: list[str] = []
    try:
        found = sqlite_readonly.query(path, lambda connection: _runs(connection, *known, damage))
    except (sqlite_readonly.Empty, FileNotFoundError):
        found = None  # being created, or gone since the folder was listed
    except sqlite_readonly.NotSQLite as error:
        raise Unreadable(f"{sqlite_readonly.problem(error)}; skipped") from None
    except (sqlite_readonly.Busy, sqlite_readonly.CopyFailed, sqlite3.Error, OSError) as error:
        if cached is not None:
            return cached[1]
        raise Unreadable(f"{sqlite_readonly.problem(error)}; its runs are not read") from None
    if found is not None and not found[0] and damage:
        raise Unreadable(f"damaged SQLite database ({damage[0]}); no run could be read in it")
    if found is None:
        _known_runs.pop(path, None)
        _members_cache[path] = (key, [])
        return []
    _known_runs[path] = found
    project = storage.join(storage.parent(path), project_of(path))
    counts: dict[str, int] = {}
    for name in found[0].values():
        counts[name] = counts.get(name, 0) + 1
    members = [
        (storage.member_path(path, member_id(ident)),
         storage.join(project, _folder(name) if counts[name] == 1 else f"{_folder(name)} ({ident[:8]})"))
        for ident, name in found[0].items()
    ]  # fmt: skip
    _members_cache[path] = (key, members)
    return members


def _folder(name: str) -> str:
    """A run name as one folder name (its ``/`` would make it a path)."""
    return name.replace("/", "_").replace(os.sep, "_") or "_"


def trackio_schema(connection: Any) -> str | None:
    """The column that tells runs apart (``run_id``, ``run_name`` in old databases), or None when
    the database has not trackio's ``metrics`` table (its ``id`` the rowid)."""
    info = {row[1]: row for row in connection.execute("PRAGMA table_info(metrics)")}
    if not {"id", "timestamp", "step", "metrics", "run_name"} <= set(info):
        return None
    _, _, kind, _, _, primary = info["id"]
    if primary != 1 or str(kind).upper() != "INTEGER":  # not the rowid: "id > ?" would not walk it
        return None
    return "run_id" if "run_id" in info else "run_name"


def _runs(
    connection: Any, known: dict[str, str], seen: int, damage: list[str]
) -> tuple[dict[str, str], int] | None:
    """(run id -> run name, the newest metrics row id) with the rows after ``seen`` looked at.

    Runs are told by name in databases without run ids. None: not trackio's schema. What a
    damaged table or index said is added to ``damage``.
    """
    import sqlite3

    damage.clear()  # what an earlier attempt of this read found (`sqlite_readonly.query` may retry)
    ident = trackio_schema(connection)
    if ident is None:
        return None
    try:
        (newest,) = connection.execute("SELECT max(id) FROM metrics").fetchone()
    except sqlite3.DatabaseError as error:  # the table's last page is damaged: the walk finds the newest
        damage.append(str(error))
        newest = None
    newest = newest if isinstance(newest, int) else None
    if newest is not None and newest < seen:  # rows gone: the database was replaced or pruned
        known, seen = {}, 0
    runs = dict(known)
    try:
        if ident in columns(connection, "configs"):
            for run, name in connection.execute(f"SELECT {ident}, run_name FROM configs ORDER BY id"):
                if isinstance(run, str) and run:
                    runs.setdefault(run, str(name))
    except sqlite3.DatabaseError as error:  # a damaged configs table: the metrics rows still name the runs
        damage.append(str(error))
    # A run whose config row is missing (an old database, a config written late) still has rows:
    # the rows added since the last listing say which (grouped on the rowid range only).
    # The first listing walks the run index; later ones only the rowid range of the new rows.
    scan = "metrics NOT INDEXED" if seen else "metrics"
    query = f"SELECT {ident}, min(id) FROM {scan} WHERE id > ? GROUP BY {ident} ORDER BY min(id)"
    try:
        firsts = connection.execute(query, (seen,)).fetchall()
        for run, first in firsts:
            if isinstance(run, str) and run and run not in runs:
                (name,) = connection.execute("SELECT run_name FROM metrics WHERE id = ?", (first,)).fetchone()
                runs[run] = str(name)
    except sqlite3.DatabaseError as error:  # a damaged index or page: walk the table, past the damage
        damage.append(str(error))
        newest = _walk_runs(connection, ident, seen, runs)
    return runs, max(newest or 0, seen)


def _walk_runs(connection: Any, ident: str, seen: int, runs: dict[str, str]) -> int:
    """Add the runs of the rows after ``seen`` to ``runs``, walking the table's readable rows; the
    newest row id read."""
    last = seen
    while True:
        rows, _, last_read = walk_rows(connection, f"id, {ident}, run_name", last, WALK_ROWS)
        for _, run, name in rows:
            if isinstance(run, str) and run:
                runs.setdefault(run, str(name))
        if last_read == last:
            return last
        last = last_read


def walk_rows(
    connection: Any, select: str, after: int, limit: int, params: tuple = ()
) -> tuple[list[tuple], list[Gap], int]:
    """(rows, gaps, the last row id read): up to ``limit`` rows of ``metrics`` after the row id
    ``after``, in id order, ``select`` starting with ``id`` (its own placeholders numbered, bound
    to ``params``), walking the table itself.

    A damaged page does not end the walk: the ids it hides are a gap and the rows after it are
    read (the next readable id is found by seeking: by steps doubling from the damage, then
    halving back). A row whose id can be found but whose content cannot be read is a gap of one.
    """
    import sqlite3

    rows: list[tuple] = []
    gaps: list[Gap] = []
    last = after
    sql = f"SELECT {select} FROM metrics NOT INDEXED WHERE id > ? ORDER BY id LIMIT ?"
    while len(rows) < limit:
        try:
            for row in connection.execute(sql, (*params, last, limit - len(rows))):
                if isinstance(row[0], int):  # out of order too: the caller sees that a page is misplaced
                    rows.append(row)
                    last = max(last, row[0])
            return rows, gaps, last
        except sqlite3.DatabaseError as error:
            reason = str(error)
        found = _next_readable(connection, last)
        if found is None:
            gaps.append((last + 1, None, reason))
            return rows, gaps, last
        if found > last + 1:
            gaps.append((last + 1, found - 1, reason))
        try:
            row = connection.execute(
                f"SELECT {select} FROM metrics NOT INDEXED WHERE id = ?", (*params, found)
            ).fetchone()
        except sqlite3.DatabaseError:
            row = None
        if row is None:
            gaps.append((found, found, reason))
        else:
            rows.append(row)
        last = found
    return rows, gaps, last


_MAX_ID = 2**63 - 1


def _next_readable(connection: Any, after: int) -> int | None:
    """The smallest row id after ``after`` that a seek can reach (None: none can)."""

    def seek(start: int) -> int | None | bool:  # the first id >= start; None: past the end; False: damaged
        import sqlite3

        try:
            found = connection.execute(
                "SELECT id FROM metrics NOT INDEXED WHERE id >= ? ORDER BY id LIMIT 1", (start,)
            ).fetchone()
        except sqlite3.DatabaseError:
            return False
        return found[0] if found is not None and isinstance(found[0], int) else None

    step, failed = 1, after
    while True:
        probe = min(after + step, _MAX_ID)
        found = seek(probe)
        if found is not False:
            break
        failed = probe
        if probe == _MAX_ID:
            return None
        step *= 2
    low, high, best = failed + 1, probe - 1, found  # seek(failed) damaged, seek(probe) readable
    while low <= high:
        middle = (low + high) // 2
        result = seek(middle)
        if result is False:
            low = middle + 1
        else:
            best, high = result, middle - 1
    return best if isinstance(best, int) else None


def output_dir(directory: str) -> str:
    """The folder holding ``$TRACKIO_DIR`` (``<it>/<project>/<run>``): the output_dir, when
    TRACKIO_DIR was set inside it."""
    return storage.parent(storage.parent(storage.parent(directory)))


def _open(path: str) -> SourceReader:
    from rltop.ingest.sources.trackio.reader import TrackioRunReader  # numpy: only once a run is read

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
