"""Polled reading of one trackio run: the rows its project database gained since the last read.

A read asks only for the metric rows after the last row id seen (the rowid range is an index
walk, so a poll costs what was added), in one short read-only transaction, at most `BATCH_ROWS`
rows at a time. Nothing is asked while neither the database nor its WAL changed. A row's step is
the ``train/global_step`` transformers' ``TrackioCallback`` logs with every row (trackio's own
``step`` column for rows without it: TRL's profiling timers), its wall time trackio's
``timestamp``. Values are floats (``"NaN"``/``"Infinity"`` as trackio stores them); media,
tables and histograms are not points. The run's config row becomes the run's config. A database
whose rows went away (replaced, or the run deleted and logged again) is read again (RELOADED).
"""

from __future__ import annotations

import json
import math
from datetime import datetime
from typing import Any

from rltop.ingest import storage
from rltop.ingest.reading import Columns, Decoded, ReadResult, points_of
from rltop.ingest.trackio_db import columns, connect, stamp

BATCH_ROWS = 20000  # rows per read: a long history comes in a few windows, each published at once
STEP_KEY = "train/global_step"
_SPECIAL = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def number(value: Any) -> float | None:
    """A logged value as a float, None when it is not a number (bools, media, tables, null)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        return _SPECIAL.get(value)
    return None


def wall_time(timestamp: Any) -> float:
    """trackio's ISO 8601 timestamp as seconds since the epoch (0.0 when unreadable)."""
    try:
        return datetime.fromisoformat(str(timestamp)).timestamp()
    except ValueError:
        return 0.0


class TrackioRunReader:
    """Follows one run (``<project>.db::<run id>``) of a trackio database."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.database = storage.container(path)
        self.run = path[len(self.database) + len(storage.MEMBER) :]
        self.reset()

    pending_bytes = 0  # rows are whole or absent: nothing waits for the rest of a record

    def reset(self) -> None:
        """Forget everything read: the next read starts at the first row."""
        self._last_id = 0
        self._stamp: object = None
        self._config_text: Any = None
        self._identity: object = None

    def unfinished(self) -> str | None:
        """Nothing: a row is committed whole or not at all."""
        return None

    def read(self) -> ReadResult:
        """The rows added since the previous read (nothing, without a query, when nothing changed)."""
        import sqlite3

        result = ReadResult()
        current = stamp(self.database)
        if current == self._stamp:
            return result
        try:
            connection = connect(self.database)
        except sqlite3.Error as error:
            result.problems.append(f"{self.database}: cannot open read-only: {error}")
            return result
        try:
            rows, config, restart = self._query(connection)
        except sqlite3.OperationalError as error:
            if "locked" in str(error) or "busy" in str(error):
                return result  # the writer is committing: the next poll reads it
            result.problems.append(f"{self.database}: cannot read: {error}")
            return result
        except sqlite3.DatabaseError as error:
            result.problems.append(f"{self.database}: not a readable trackio database: {error}")
            return result
        finally:
            connection.close()
        if restart:
            result.problems.append(
                f"{self.path}: rows already read are gone (database replaced); reading it again"
            )
            self.reset()
            result.restarted = True
            return result
        result.decoded = self._decode(rows, config)
        result.bytes_read = sum(len(row[3]) for row in rows) + (len(config) if config else 0)
        if len(rows) >= BATCH_ROWS:
            result.more = True  # the stamp stays: the next read asks for the rest
        else:
            self._stamp = current
        return result

    def _query(self, connection: Any) -> tuple[list[tuple], Any, bool]:
        """(new rows, the config row when it changed, the rows read before are gone)."""
        ident = "run_id" if "run_id" in columns(connection, "metrics") else "run_name"
        (newest,) = connection.execute("SELECT max(id) FROM metrics").fetchone()
        if self._last_id and (newest or 0) < self._last_id:
            return [], None, True
        # The first window finds the run's rows through its index; every later one (a live poll, the
        # next window of a long history) walks only the rowid range after the last row seen.
        scan = "metrics NOT INDEXED" if self._last_id else "metrics"
        rows = connection.execute(
            f"SELECT id, timestamp, step, metrics FROM {scan}"
            f" WHERE id > ? AND {ident} = ? ORDER BY id LIMIT ?",
            (self._last_id, self.run, BATCH_ROWS),
        ).fetchall()
        config = None
        if ident in columns(connection, "configs"):
            found = connection.execute(
                f"SELECT config FROM configs WHERE {ident} = ?", (self.run,)
            ).fetchone()
            if found is not None and found[0] != self._config_text:
                config = self._config_text = found[0]
        return rows, config, False

    def _decode(self, rows: list[tuple], config: Any) -> Decoded:
        columns_by_tag: Columns = {}
        for row_id, timestamp, row_step, text in rows:
            self._last_id = max(self._last_id, int(row_id))
            try:
                logged = json.loads(text)
            except ValueError:
                continue
            if not isinstance(logged, dict):
                continue
            step = logged.get(STEP_KEY, row_step)
            if isinstance(step, bool) or not isinstance(step, (int, float)) or not math.isfinite(step):
                continue
            wall = wall_time(timestamp)
            for key, value in logged.items():
                value = number(value)
                if value is None or key == STEP_KEY or key.startswith("_"):
                    continue
                column = columns_by_tag.setdefault(key, ([], [], []))
                column[0].append(int(step))
                column[1].append(wall)
                column[2].append(value)
        decoded = Decoded(scalars=points_of(columns_by_tag))
        if config is not None:
            decoded.config = _config(config)
        return decoded


def _config(text: Any) -> dict[str, Any] | None:
    """The run's config as the rules read it (trackio's own ``_Username``… keys left out)."""
    try:
        document = json.loads(text)
    except ValueError:
        return None
    if not isinstance(document, dict):
        return None
    return {key: value for key, value in document.items() if not str(key).startswith("_")} or None
