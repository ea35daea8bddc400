"""An MLflow tracking server as a storage backend: its experiments and runs as a tree of run files.

``rltop http://host:5000`` (or ``https://…``, ``mlflow://host:5000``; a path after the port is the
server's own prefix, ``https://host/mlflow``) follows every active run of every active experiment.
The server is shown to discovery and the watcher as a tree, so that they list, poll, retry and say
"unreachable" exactly as for any remote store (`rltop.ingest.storage`)::

    <server>/<experiment name>/<run name>/<run id>.mlflow-run

A run's name is ``<experiment>/<run name>``; two runs of one experiment that share a name (MLflow's
random names repeat under a fixed seed) get the start of their run id: ``capable-auk-759 (8d58ed80)``.
A ``/`` in a name becomes ``_`` (it would make a folder).

Requests: listing the tree is one ``experiments/search`` and one ``runs/search`` per 1,000 runs;
the state of the followed runs (their latest metrics and params) is one ``runs/search`` per 100
runs, shared by every run read within `FRESH` seconds. A run's reader
(`rltop.ingest.sources.mlflow.server_reader`) then asks only for the histories whose latest point moved.
Nothing is ever written to the server (`rltop.ingest.sources.mlflow.rest`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from rltop.ingest import storage
from rltop.ingest.reading import SourceKind, SourceReader
from rltop.ingest.sources.mlflow.rest import Client
from rltop.ingest.storage import FileStat

SUFFIX = ".mlflow-run"
FRESH = 0.5  # seconds a runs/search answer serves every reader (one request per poll, not per run)
RUNS_PER_FILTER = 100  # run ids per ``run_id IN (…)`` filter
# latest point of a metric as runs/search gives it: (step, timestamp ms, value as sent)
Latest = tuple[int, int, Any]


@dataclass
class RunState:
    """What ``runs/search`` says about one run."""

    run_id: str
    experiment_id: str
    name: str
    status: str = ""
    start_time: int = 0  # ms
    end_time: int = 0
    latest: dict[str, Latest] = field(default_factory=dict)
    params: dict[str, str] = field(default_factory=dict)

    @property
    def mtime(self) -> float:
        """When the run last logged a point (its start without one), in seconds."""
        newest = max((point[1] for point in self.latest.values()), default=0)
        return max(newest, self.end_time, self.start_time) / 1000.0


def run_state(run: dict[str, Any]) -> RunState | None:
    """A `RunState` of one run of a ``runs/search`` answer (None for a run without an id)."""
    info, data = run.get("info") or {}, run.get("data") or {}
    run_id = str(info.get("run_id") or info.get("run_uuid") or "")
    if not run_id:
        return None
    latest: dict[str, Latest] = {}
    for metric in data.get("metrics") or ():
        value = metric.get("value")
        if isinstance(value, float) and value != value:
            value = "NaN"  # a bare NaN in the JSON: equal to itself, or the metric would move on every poll
        try:
            latest[str(metric["key"])] = (int(metric.get("step", 0)), int(metric.get("timestamp", 0)), value)
        except (KeyError, TypeError, ValueError):
            continue
    params = {str(p.get("key")): str(p.get("value", "")) for p in data.get("params") or () if "key" in p}
    return RunState(
        run_id=run_id, experiment_id=str(info.get("experiment_id", "")),
        name=str(info.get("run_name") or run_id), status=str(info.get("status", "")),
        start_time=_int(info.get("start_time")), end_time=_int(info.get("end_time")),
        latest=latest, params=params,
    )  # fmt: skip


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def folder(name: str) -> str:
    """A name as one folder name (a ``/`` would make a path)."""
    return name.replace("/", "_").replace("\\", "_").strip() or "_"


def run_folders(runs: list[tuple[str, str]]) -> dict[str, str]:
    """run id -> folder of (run id, run name) pairs of one experiment: the name, with the start of
    the run id when runs share it."""
    counts: dict[str, int] = {}
    for _, name in runs:
        counts[folder(name)] = counts.get(folder(name), 0) + 1
    return {ident: folder(name) if counts[folder(name)] == 1 else f"{folder(name)} ({ident[:8]})"
            for ident, name in runs}  # fmt: skip


class MlflowServer:
    """One tracking server, as a `rltop.ingest.storage.Backend` (the tree in the module's docstring)."""

    remote = True

    def __init__(self, base: str) -> None:
        self.base = base
        self.client = Client(base)
        self._lock = threading.RLock()
        self._files: dict[str, str] = {}  # run file path -> run id
        self._folders: set[str] = set()
        self._listed = -1.0  # monotonic time of the last listing
        self.states: dict[str, RunState] = {}
        self._followed: set[str] = set()  # run ids whose readers ask for their state
        self._states_time = -1.0

    # -- listing -----------------------------------------------------------------------------------

    def experiments(self) -> dict[str, str]:
        """experiment id -> name of every active experiment."""
        found: dict[str, str] = {}
        token = None
        while True:
            answer = self.client.search_experiments(token)
            for experiment in answer.get("experiments") or ():
                if "experiment_id" in experiment:
                    found[str(experiment["experiment_id"])] = str(experiment.get("name", ""))
            token = answer.get("next_page_token")
            if not token:
                return found

    def search(self, experiment_ids: list[str], filter_string: str = "") -> list[RunState]:
        """Every active run of ``experiment_ids`` matching ``filter_string`` (all pages)."""
        states: list[RunState] = []
        for first in range(0, len(experiment_ids), 100):
            token = None
            while True:
                answer = self.client.search_runs(experiment_ids[first : first + 100], filter_string, token)
                states.extend(s for s in map(run_state, answer.get("runs") or ()) if s is not None)
                token = answer.get("next_page_token")
                if not token:
                    break
        return states

    def list_tree(self) -> None:
        """List every experiment and run again (the tree, and every run's state)."""
        experiments = self.experiments()
        states = self.search(sorted(experiments)) if experiments else []
        by_experiment: dict[str, list[RunState]] = {}
        for state in states:
            by_experiment.setdefault(state.experiment_id, []).append(state)
        names = run_folders([(ident, name) for ident, name in experiments.items()])
        files: dict[str, str] = {}
        folders: set[str] = set()
        for experiment, runs in by_experiment.items():
            directory = storage.join(self.base, names.get(experiment, folder(experiment)))
            folders.add(directory)
            for ident, run in run_folders([(s.run_id, s.name) for s in runs]).items():
                folders.add(storage.join(directory, run))
                files[storage.join(directory, run, ident + SUFFIX)] = ident
        with self._lock:
            self._files, self._folders = files, folders
            self.states.update({state.run_id: state for state in states})
            self._listed = self._states_time = time.monotonic()

    def _listing(self, fresh: bool = False) -> None:
        if self._listed < 0 or (fresh and time.monotonic() - self._listed > FRESH):
            self.list_tree()

    # -- run states --------------------------------------------------------------------------------

    def state(self, run_id: str) -> RunState | None:
        """The run's latest metrics and params, at most `FRESH` seconds old (None: not an active run)."""
        with self._lock:
            self._followed.add(run_id)
            if time.monotonic() - self._states_time > FRESH or run_id not in self.states:
                self._refresh_states()
            return self.states.get(run_id)

    def _refresh_states(self) -> None:
        """One ``runs/search`` per 100 followed runs: their latest metrics and params."""
        followed = sorted(self._followed)
        experiments = sorted({self.states[r].experiment_id for r in followed if r in self.states})
        if not experiments:
            self.list_tree()
            return
        found: dict[str, RunState] = {}
        for first in range(0, len(followed), RUNS_PER_FILTER):
            chunk = followed[first : first + RUNS_PER_FILTER]
            quoted = ", ".join("'" + ident.replace("'", "") + "'" for ident in chunk)
            for state in self.search(experiments, f"attributes.run_id IN ({quoted})"):
                found[state.run_id] = state
        for ident in followed:
            if ident in found:
                self.states[ident] = found[ident]
            else:
                self.states.pop(ident, None)  # deleted, or moved out of the active experiments
        self._states_time = time.monotonic()

    # -- the Backend protocol ----------------------------------------------------------------------

    def absolute(self, path: str) -> str:
        """The path without a trailing slash."""
        return path.rstrip("/")

    def check(self, path: str) -> None:
        """`NotMlflow` (one line) when the server does not answer MLflow's API; `Unreachable` when it
        does not answer; FileNotFoundError for a run or experiment that is not there."""
        if path.rstrip("/") == self.base:
            self.client.search_experiments()
            return
        if self.kind(path) is None:
            raise FileNotFoundError(2, "no such experiment or run on the server", path)

    def stat(self, path: str) -> FileStat:
        """A run file: its last logged time, and a version that changes with its latest points."""
        ident = self.run_id(path)
        if ident is None:
            raise IsADirectoryError(21, "an experiment, not a run", path)
        state = self.states.get(ident)
        if state is None:
            raise FileNotFoundError(2, "no such run", path)
        version = tuple(sorted(state.latest.items()))
        return FileStat(len(state.latest), state.mtime, version, None)

    def run_id(self, path: str) -> str | None:
        """The run id a run file path stands for (None for any other path)."""
        path = path.rstrip("/")
        with self._lock:
            self._listing()
            if path in self._files:
                return self._files[path]
        name = storage.name(path)
        return name[: -len(SUFFIX)] if name.endswith(SUFFIX) else None

    def kind(self, path: str) -> str | None:
        """ "directory" for the server, an experiment or a run folder, "file" for a run file."""
        path = path.rstrip("/")
        if path == self.base:
            return "directory"
        with self._lock:
            for fresh in (False, True):
                self._listing(fresh)
                if path in self._files:
                    return "file"
                if path in self._folders:
                    return "directory"
        return None

    def open(self, path: str) -> Any:
        """Runs are read through the REST API (`rltop.ingest.sources.mlflow.server_reader`), not as bytes."""
        raise IsADirectoryError(21, "an MLflow run is read through the tracking server's API", path)

    def walk(self, root: str, on_problem: Callable[[str], None]) -> Iterator[tuple[str, list[str]]]:
        """(run folder, [its run file]) of every active run under ``root``, listed anew."""
        self.list_tree()
        root = root.rstrip("/")
        with self._lock:
            files = sorted(self._files)
        for path in files:
            if path.startswith(root + "/"):
                yield storage.parent(path), [storage.name(path)]

    def is_gone(self, path: str) -> bool:
        """True when the server answers and has no such run or experiment."""
        try:
            return self.kind(path) is None
        except storage.Unreachable:
            return False


_servers: dict[str, MlflowServer] = {}
_servers_lock = threading.Lock()


def backend(path: str) -> MlflowServer:
    """The server ``path`` is on: the longest server URL already in use that ``path`` starts with,
    else a new one at ``path`` (the URL the user gave: a server, with its prefix if any)."""
    key = path.rstrip("/")
    with _servers_lock:
        for base in sorted(_servers, key=len, reverse=True):
            if key == base or key.startswith(base + "/"):
                return _servers[base]
        server = _servers[key] = MlflowServer(key)
    return server


def forget_servers() -> None:
    """Drop every server's client and listing (tests that start servers one after another)."""
    with _servers_lock:
        _servers.clear()


def is_run_file(name: str) -> bool:
    """True for the name of a run file of the tree (``<run id>.mlflow-run``)."""
    return name.endswith(SUFFIX) and len(name) > len(SUFFIX)


def _open(path: str) -> SourceReader:
    from rltop.ingest.sources.mlflow.server_reader import MlflowServerReader  # numpy: only once a run is read

    return MlflowServerReader(path)


KIND = SourceKind(
    name="mlflow",
    label="MLflow runs",
    pattern="http(s)://host:port",
    claims=is_run_file,
    run_directory=storage.parent,
    order=lambda path: path,
    open=_open,
    output_dir=storage.parent,  # the experiment: each run is read whole from the server
    rank=5,
    why="more points and wall times",
    summary="read from the MLflow tracking server (read-only; only the points logged since the last poll)",
    quiet_hint="training stopped, or it logs to another tracking server",
    virtual=True,
)
