"""Polled reading of one trackio run: the rows its project database gained since the last read.

A read asks only for the metric rows after the last row id seen (the rowid range is an index
walk, so a poll costs what was added), in one short read that writes nothing beside the database
(`rltop.ingest.storage.sqlite_readonly`), at most `BATCH_ROWS` rows at a time. Nothing is asked while
neither the database nor its WAL changed. A row's step is the ``train/global_step``
transformers' ``TrackioCallback`` logs with every row (trackio's own ``step`` column for rows
without it: TRL's profiling timers), its wall time trackio's ``timestamp``. Values are floats
(``"NaN"``/``"Infinity"`` as trackio stores them); media, tables and histograms are not points.
The run's config row becomes the run's config. A database whose rows went away (replaced, or the
run deleted and logged again) is read again (RELOADED).

Odd rows never raise: a step that is not an integer of int64's range (``1e300``, ``2**70``,
infinite), a value too large for a float (a 400-digit integer), a metrics cell that is not a JSON
object (NULL, damaged, a list) are skipped and counted, and each reason is said once per run
with the count (``x.db::<run id>: 3 points skipped: step out of range``), when the run's reading
has caught up. A damaged page costs only its rows, said once with their ids
(`rltop.ingest.sources.trackio.kind.walk_rows`).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from datetime import datetime
from typing import Any

from rltop.ingest import storage
from rltop.ingest.reading import Columns, Decoded, ReadResult, points_of
from rltop.ingest.sources.trackio.kind import Gap, columns, run_ident, stamp, trackio_schema, walk_rows

BATCH_ROWS = 20000  # rows per read: a long history comes in a few windows, each published at once
STEP_KEY = "train/global_step"
INT64 = 2**63  # steps are int64: [-INT64, INT64)
_SPECIAL = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
_LARGEST = 1.7976931348623157e308  # the largest float: a larger integer has no float value

# Why points or rows were skipped, as said once per run after their count (`skipped_line`).
STEP_RANGE = "step out of range"
STEP_TYPE = "step not a number"
VALUE_RANGE = "value too large for a float"
NOT_OBJECT = "metrics not a JSON object"  # a whole row: its points are not even known
OUT_OF_ORDER = "a damaged page: rows there may be missing"


def number(value: Any) -> float | None:
    """A logged value as a float, None when it is not a number (bools, media, tables, null).

    OverflowError for an integer too large for a float (no value to show: skipped and counted).
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        return value
    if isinstance(value, int):
        if -_LARGEST <= value <= _LARGEST:
            return float(value)
        raise OverflowError("integer too large for a float")
    if isinstance(value, str):
        return _SPECIAL.get(value)
    return None


def step_of(value: Any) -> int | str:
    """A logged step as an int64, or why it is not one (`STEP_RANGE`, `STEP_TYPE`)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return STEP_TYPE
    if isinstance(value, float) and not math.isfinite(value):
        return STEP_RANGE
    step = int(value)
    return step if -INT64 <= step < INT64 else STEP_RANGE


def wall_time(timestamp: Any) -> float:
    """trackio's ISO 8601 timestamp as seconds since the epoch (0.0 when unreadable)."""
    try:
        return datetime.fromisoformat(str(timestamp)).timestamp()
    except (ValueError, OverflowError, OSError):
        return 0.0


def logged_dict(text: Any) -> dict[str, Any] | None:
    """A metrics cell as the dict trackio logged (None: NULL, not JSON, not an object, not UTF-8)."""
    if isinstance(text, str):
        try:
            text = text.encode("utf-8")  # text SQLite could not decode came as surrogates
        except UnicodeEncodeError:
            return None
    if not isinstance(text, bytes):
        return None
    try:
        logged = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return logged if isinstance(logged, dict) else None


class TrackioRunReader:
    """Follows one run (``<project>.db::<run id>``) of a trackio database."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.database = storage.container(path)
        self.run = run_ident(path[len(self.database) + len(storage.MEMBER) :])
        self._key = self.run.encode("utf-8", "surrogateescape")  # bound as the stored bytes
        self.reset()

    pending_bytes = 0  # rows are whole or absent: nothing waits for the rest of a record

    def reset(self) -> None:
        """Forget everything read: the next read starts at the first row."""
        self._last_id = 0
        self._stamp: object = None
        self._config_text: Any = None
        self._skipped: Counter[str] = Counter()  # reason -> points (or rows) skipped
        self._said: set[str] = set()  # reasons already said
        self._gaps_said: set[tuple[int, int | None]] = set()

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
            rows, config, restart, gaps, last, full = sqlite_readonly.query(self.database, self._query)
        except sqlite_readonly.Empty:
            return result  # being created (or emptied): nothing to read yet
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
        if config is not None and config != self._config_text:
            self._config_text = config
        else:
            config = None
        self._last_id = max(self._last_id, last)
        result.decoded = self._decode(rows, config)
        result.bytes_read = sum(_size(row[3]) for row in rows) + _size(config)
        result.problems.extend(self._gap_lines(gaps))
        if full:
            result.more = True  # the stamp stays: the next read asks for the rest
        else:
            self._stamp = current
            result.problems.extend(self._skipped_lines())
        return result

    def _query(self, connection: Any) -> tuple[list[tuple], Any, bool, list[Gap], int, bool]:
        """(new rows, the config row, the rows read before are gone, the gaps of a damaged table,
        the last row id looked at, the window was full). Only reads: it may run twice."""
        import sqlite3

        ident = trackio_schema(connection)
        if ident is None:
            raise sqlite3.DatabaseError("trackio's metrics table is missing")
        try:
            (newest,) = connection.execute("SELECT max(id) FROM metrics").fetchone()
        except sqlite3.DatabaseError:
            newest = None  # a damaged last page: the walk below steps over it
        if self._last_id and isinstance(newest, int) and newest < self._last_id:
            return [], None, True, [], 0, False
        rows, gaps, last, full = self._rows(connection, ident)
        config = None
        try:
            if ident in columns(connection, "configs"):
                found = connection.execute(
                    f"SELECT config FROM configs WHERE {ident} = CAST(? AS TEXT)", (self._key,)
                ).fetchone()
                config = None if found is None else found[0]
        except sqlite3.DatabaseError:
            pass  # a damaged configs table: the points are read all the same
        return rows, config, False, gaps, last, full

    def _rows(self, connection: Any, ident: str) -> tuple[list[tuple], list[Gap], int, bool]:
        """The run's rows after the last row seen: (id, timestamp, step, metrics) each, the gaps a
        damaged table left, the last row id looked at, the window was full.

        The rowid range is walked, never an index (a damaged index, or one that disagrees with its
        table, would hide rows silently), every run's row ids with it, only the ids of the other
        runs' rows: ids out of order say that a page holds a copy of another (its own rows lost),
        and a live poll looks only at the rows added since. A table SQLite finds damaged is walked
        past the damage (`walk_rows`).
        """
        import sqlite3

        mine = f"{ident} = CAST(?1 AS TEXT)"
        select = (
            f"id, {mine}, CASE WHEN {mine} THEN timestamp END, CASE WHEN {mine} THEN step END,"
            f" CASE WHEN {mine} THEN metrics END"
        )
        gaps: list[Gap] = []
        try:
            rows = connection.execute(
                f"SELECT {select} FROM metrics NOT INDEXED WHERE id > ? ORDER BY id LIMIT ?",
                (self._key, self._last_id, BATCH_ROWS),
            ).fetchall()
            last = rows[-1][0] if rows else self._last_id
        except sqlite3.DatabaseError:
            rows, gaps, last = walk_rows(connection, select, self._last_id, BATCH_ROWS, (self._key,))
        full = len(rows) >= BATCH_ROWS
        if any(later[0] <= earlier[0] for earlier, later in zip(rows, rows[1:])):
            rows = in_order(rows, self._last_id)  # each row once, in order
            last = max(last, rows[-1][0]) if rows else last
            gaps.append((self._last_id + 1, last, OUT_OF_ORDER))
        return [(row[0], *row[2:]) for row in rows if row[1] == 1], gaps, last, full

    def _decode(self, rows: list[tuple], config: Any) -> Decoded:
        columns_by_tag: Columns = {}
        skipped = self._skipped
        for _, timestamp, row_step, text in rows:
            logged = logged_dict(text)
            if logged is None:
                skipped[NOT_OBJECT] += 1
                continue
            values: list[tuple[str, float]] = []
            for key, value in logged.items():
                if key == STEP_KEY or key.startswith("_"):
                    continue
                try:
                    point = number(value)
                except OverflowError:
                    skipped[VALUE_RANGE] += 1
                    continue
                if point is not None:
                    values.append((key, point))
            if not values:
                continue
            step = step_of(logged.get(STEP_KEY, row_step))
            if isinstance(step, str):
                skipped[step] += len(values)
                continue
            wall = wall_time(timestamp)
            for key, point in values:
                column = columns_by_tag.setdefault(key, ([], [], []))
                column[0].append(step)
                column[1].append(wall)
                column[2].append(point)
        decoded = Decoded(scalars=points_of(columns_by_tag))
        if config is not None:
            decoded.config = _config(config)
        return decoded

    def _skipped_lines(self) -> list[str]:
        """Each reason for skipped points not said yet for this run, with its count so far."""
        lines = []
        for reason, count in sorted(self._skipped.items()):
            if reason not in self._said:
                self._said.add(reason)
                lines.append(f"{self.path}: {skipped_line(count, reason)}")
        return lines

    def _gap_lines(self, gaps: list[Gap]) -> list[str]:
        lines = []
        for first, last, why in gaps:
            if why == OUT_OF_ORDER:
                if OUT_OF_ORDER not in self._said:
                    self._said.add(OUT_OF_ORDER)
                    lines.append(f"{self.path}: row ids out of order from {first} to {last} ({OUT_OF_ORDER})")
            elif (first, last) not in self._gaps_said:
                self._gaps_said.add((first, last))
                end = "the end" if last is None else str(last)
                lines.append(
                    f"{self.path}: rows {first} to {end} of the database cannot be read ({why}); skipped"
                )
        return lines


def skipped_line(count: int, reason: str) -> str:
    """``3 points skipped: step out of range``, ``1 row skipped: metrics not a JSON object``."""
    noun = "row" if reason == NOT_OBJECT else "point"
    return f"{count} {noun}{'s' * (count != 1)} skipped: {reason}"


def in_order(rows: list[tuple], after: int) -> list[tuple]:
    """``rows`` (their row id first) after ``after``, sorted by id, each id once: what a table walk
    gives when a damaged page holds a copy of another page (its rows again, out of place)."""
    unique: dict[int, tuple] = {}
    for found in rows:
        if found[0] > after:
            unique.setdefault(found[0], found)
    return [unique[key] for key in sorted(unique)]


def _size(text: Any) -> int:
    return len(text) if isinstance(text, (str, bytes)) else 0


def _config(text: Any) -> dict[str, Any] | None:
    """The run's config as the rules read it (trackio's own ``_Username``… keys left out)."""
    document = logged_dict(text)
    if document is None:
        return None
    return {key: value for key, value in document.items() if not str(key).startswith("_")} or None
