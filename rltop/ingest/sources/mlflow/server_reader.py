"""Polled reading of one run of an MLflow tracking server: only the points logged since the last read.

A read asks the server for the run's latest point of every metric (``runs/search``, shared by every
run read in the same poll: `rltop.ingest.sources.mlflow.server.MlflowServer.state`) and fetches only the
histories whose latest point moved, from the offset already read (``metrics/get-history`` pages,
`PARALLEL` at a time). MLflow orders a history by timestamp, step and value, so new points come
after the offset; the page starts one point early and that point must be the last one read, which
proves nothing moved below the offset. Else the history is fetched whole once and its points after
the last one read are taken; points logged with a timestamp older than that one (an explicit
``timestamp=``, another writer's clock) cannot be told from those read before: their count is said
once, and they are not read. A run's params become its config
(`rltop.ingest.sources.mlflow.params`), as TRL's ``args/text_summary`` does for event files.

When the server stops answering in the middle of a read, the histories fetched so far are kept and
returned; the others are asked again on the next read (nothing is read twice, nothing lost).
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from rltop.ingest import storage
from rltop.ingest.reading import Columns, Decoded, ReadResult, points_of
from rltop.ingest.sources.mlflow import server as mlflow_server
from rltop.ingest.sources.mlflow.params import config_of, tag_of
from rltop.ingest.sources.mlflow.rest import NotMlflow
from rltop.ingest.sources.trackio.reader import number
from rltop.ingest.storage import StorageError

OUT_OF_ORDER = "{} point(s) logged with a timestamp before the last one read (another clock?): not read"
PAGE = 5000  # points per get-history page
PARALLEL = 8  # histories fetched at once (one keep-alive connection each)
BUDGET = 200_000  # points per read: a longer first read comes in windows, each published at once
Point = tuple[int, int, Any]  # timestamp ms, step, value as sent (MLflow's order: timestamp, step, value)

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def pool() -> ThreadPoolExecutor:
    """The threads that fetch histories (shared by every run; created on first use)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(PARALLEL, thread_name_prefix="rltop-mlflow")
        return _pool


def point_of(metric: dict[str, Any]) -> Point | None:
    """(timestamp, step, value) of one metric of a get-history answer (None when malformed)."""
    try:
        return int(metric.get("timestamp", 0)), int(metric.get("step", 0)), metric.get("value")
    except (TypeError, ValueError):
        return None


class MlflowServerReader:
    """Follows one run (``<server>/<experiment>/<run>/<run id>.mlflow-run``)."""

    pending_bytes = 0  # points come whole from the server

    def __init__(self, path: str) -> None:
        self.path = path
        self.server = mlflow_server.backend(path)
        self.run_id = storage.name(path)[: -len(mlflow_server.SUFFIX)]
        self.reset()

    def reset(self) -> None:
        """Forget everything read: the next read starts at every history's first point."""
        self._offsets: dict[str, int] = {}  # key -> points read
        self._last: dict[str, Point] = {}  # key -> the last point read
        self._latest: dict[str, Any] = {}  # key -> its latest point when it was read
        self._params: dict[str, str] | None = None
        self._said: set[str] = set()

    def unfinished(self) -> str | None:
        """Nothing: the server gives whole points."""
        return None

    def read(self) -> ReadResult:
        """The points logged since the previous read (`BUDGET` at most: ``more`` then)."""
        result = ReadResult()
        state = self.server.state(self.run_id)  # Unreachable: the watcher retries with back-off
        if state is None:
            return result  # deleted: the next listing says so
        if state.params != self._params:
            self._params = dict(state.params)
            result.decoded.config = config_of(state.params)
            result.bytes_read += 1
        changed = [key for key, latest in state.latest.items() if self._latest.get(key) != latest]
        columns: Columns = {}
        taken = 0
        while changed and taken < BUDGET:
            batch, changed = changed[:PARALLEL], changed[PARALLEL:]
            futures = [(key, pool().submit(self._fetch, key)) for key in batch]
            failed: BaseException | None = None
            for key, future in futures:
                try:
                    points, size, note = future.result()
                except FileNotFoundError:
                    continue  # the run was deleted meanwhile: the next listing says so
                except OSError as error:  # Unreachable, or an answer that is no history
                    failed = failed or error
                    continue
                self._latest[key] = state.latest[key]
                result.bytes_read += size
                taken += len(points)
                if note and key not in self._said:
                    self._said.add(key)
                    result.problems.append(f"{self.path}: {key}: {note}")
                self._add(columns, key, points)
            if failed is not None:
                if not result.bytes_read:
                    raise failed if isinstance(failed, storage.Unreachable) else storage.Unreachable(failed)
                changed = []  # what was fetched is returned; the rest comes on the next read
        result.more = bool(changed)
        result.decoded = _with_config(Decoded(scalars=points_of(columns)), result.decoded.config)
        if state.latest:
            result.mtime = state.mtime
        return result

    def _fetch(self, key: str) -> tuple[list[Point], int, str]:
        """(the new points of ``key``, bytes received, a note to say once or "")."""
        offset = self._offsets.get(key, 0)
        start = max(offset - 1, 0)
        try:
            points, size = self._history(key, start)
        except NotMlflow:
            raise
        except StorageError:
            if not offset:
                raise
            points, size = [], 0  # the server refused the offset's page token: the whole history below
        note = ""
        if offset:
            if points and points[0] == self._last.get(key):
                points = points[1:]
            else:  # points were logged below the offset (an older timestamp): take what follows the last
                everything, more = self._history(key, 0)
                size += more
                last = self._last.get(key)
                points = [p for p in everything if last is None or _order(p) > _order(last)]
                hidden = len(everything) - len(points) - offset  # before the last one read, not known apart
                note = OUT_OF_ORDER.format(hidden) if hidden > 0 else ""
                self._offsets[key] = len(everything)
                if points:
                    self._last[key] = points[-1]
                return points, size, note
        self._offsets[key] = start + len(points) + (1 if offset else 0)
        if points:
            self._last[key] = points[-1]
        return points, size, note

    def _history(self, key: str, offset: int) -> tuple[list[Point], int]:
        """Every point of ``key``'s history from ``offset`` on (all its pages) and the bytes received."""
        points: list[Point] = []
        size = 0
        while True:
            answer = self.server.client.metric_history(self.run_id, key, offset + len(points), PAGE)
            metrics = answer.get("metrics") or []
            size += 64 + 48 * len(metrics)  # about what each point costs on the wire
            points.extend(p for p in map(point_of, metrics) if p is not None)
            if not answer.get("next_page_token") or not metrics:
                return points, size

    def _add(self, columns: Columns, key: str, points: list[Point]) -> None:
        tag = tag_of(key)
        for timestamp, step, value in points:
            try:
                point = number(value)
            except OverflowError:
                continue
            if point is None:
                continue
            column = columns.setdefault(tag, ([], [], []))
            column[0].append(step)
            column[1].append(timestamp / 1000.0)
            column[2].append(point)


def _order(point: Point) -> tuple[int, int, float]:
    """MLflow's order of a history: timestamp, step, value."""
    try:
        value = number(point[2])
    except OverflowError:
        value = None
    return point[0], point[1], value if value is not None else 0.0


def _with_config(decoded: Decoded, config: dict[str, Any] | None) -> Decoded:
    decoded.config = config
    return decoded
