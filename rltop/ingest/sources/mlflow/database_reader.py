"""Polled reading of one run of an MLflow SQLite database: the metric rows added since the last read.

MLflow's ``metrics`` table (``key, value, timestamp, run_uuid, step, is_nan``) is a rowid table that
only grows while training logs; a read asks for the run's rows after the last rowid seen (through
the ``run_uuid`` index: a poll costs what was added), at most `BATCH_ROWS` at a time, in one short
read that writes nothing beside the database (`rltop.ingest.storage.sqlite_readonly`). Nothing is asked while
neither the database nor its journal changed. ``is_nan`` rows are NaN points (MLflow stores 0 in
``value``); timestamps are milliseconds. The run's ``params`` become its config
(`rltop.ingest.sources.mlflow.params`). A database whose rows went away (replaced) is read again (RELOADED).
"""

from __future__ import annotations

import math
from typing import Any

from rltop.ingest import storage
from rltop.ingest.reading import Columns, Decoded, ReadResult, points_of, step_fits
from rltop.ingest.sources.mlflow.params import config_of, tag_of
from rltop.ingest.sources.trackio.kind import stamp

BATCH_ROWS = 20000  # rows per read: a long history comes in a few windows, each published at once


class MlflowDatabaseReader:
    """Follows one run (``mlflow.db::<run id>``) of an MLflow database."""

    pending_bytes = 0  # rows are whole or absent

    def __init__(self, path: str) -> None:
        self.path = path
        self.database = storage.container(path)
        self.run_id = path[len(self.database) + len(storage.MEMBER) :]
        self.reset()

    def reset(self) -> None:
        """Forget everything read: the next read starts at the first row."""
        self._last_rowid = 0
        self._stamp: object = None
        self._params: dict[str, str] | None = None

    def unfinished(self) -> str | None:
        """Nothing: a row is committed whole or not at all."""
        return None

    def read(self) -> ReadResult:
        """The rows added since the previous read (nothing, without a query, when nothing changed)."""
        import sqlite3

        from rltop.ingest.storage import sqlite_readonly

        result = ReadResult()
        current = stamp(self.database)
        if current == self._stamp:
            return result
        try:
            rows, params, restart = sqlite_readonly.query(self.database, self._query)
        except sqlite_readonly.Empty:
            return result
        except sqlite_readonly.Busy as error:
            result.problems.append(
                f"{self.database}: {sqlite_readonly.problem(error)}; its rows could not be read now"
            )
            return result
        except (sqlite_readonly.NotSQLite, sqlite_readonly.CopyFailed, sqlite3.Error, OSError) as error:
            result.problems.append(f"{self.database}: {sqlite_readonly.problem(error)}")
            return result
        if restart:
            result.problems.append(
                f"{self.path}: rows already read are gone (database replaced); reading it again"
            )
            self.reset()
            result.restarted = True
            return result
        if rows:
            self._last_rowid = rows[-1][0]
        result.decoded = _decoded(rows)
        result.bytes_read = 40 * len(rows)
        if params and params != self._params:
            self._params = params
            result.decoded.config = config_of(params)
            result.bytes_read += 1
        if len(rows) >= BATCH_ROWS:
            result.more = True  # the stamp stays: the next read asks for the rest
        else:
            self._stamp = current
        return result

    def _query(self, connection: Any) -> tuple[list[tuple], dict[str, str], bool]:
        """(the run's new metric rows, its params, the rows read before are gone). Only reads."""
        (newest,) = connection.execute("SELECT max(rowid) FROM metrics").fetchone()
        if self._last_rowid and (not isinstance(newest, int) or newest < self._last_rowid):
            return [], {}, True
        rows = connection.execute(
            "SELECT rowid, key, value, timestamp, step, is_nan FROM metrics"
            " WHERE run_uuid = ? AND rowid > ? ORDER BY rowid LIMIT ?",
            (self.run_id, self._last_rowid, BATCH_ROWS),
        ).fetchall()
        params = dict(connection.execute("SELECT key, value FROM params WHERE run_uuid = ?", (self.run_id,)))
        return rows, {str(k): str(v) for k, v in params.items()}, False


def _decoded(rows: list[tuple]) -> Decoded:
    """Points per tag of metric rows (rowid, key, value, timestamp, step, is_nan)."""
    columns: Columns = {}
    for _, key, value, timestamp, step, is_nan in rows:
        if not isinstance(key, str) or not step_fits(step) or isinstance(value, (str, bytes)):
            continue
        try:
            point = math.nan if is_nan else float(value)
            wall = float(timestamp) / 1000.0
        except (TypeError, ValueError, OverflowError):
            continue
        column = columns.setdefault(tag_of(key), ([], [], []))
        column[0].append(step)
        column[1].append(wall)
        column[2].append(point)
    return Decoded(scalars=points_of(columns))
