"""The ``mlflow-files`` source kind: MLflow's file store (``mlruns/``, the default before MLflow 3.7).

Layout (MLflow's ``FileStore``)::

    mlruns/<experiment id>/meta.yaml                 name: <experiment name>
    mlruns/<experiment id>/<run id>/meta.yaml        run_id:, run_name:, lifecycle_stage:, status:
    mlruns/<experiment id>/<run id>/metrics/<key>    one line a point: "<timestamp ms> <value> <step>"
    mlruns/<experiment id>/<run id>/params/<key>     the param's value

A ``/`` in a metric key is a folder (``metrics/rewards/length_reward/mean``). A run is recognised
by its ``meta.yaml`` (the one holding a ``run_id``); it is read from the member path
``<run folder>/meta.yaml::run`` (`rltop.ingest.storage.member_path`) and named
``<experiment>/<run name>`` under the ``mlruns`` folder (the start of the run id when two runs of
one experiment share a name). Deleted runs (``lifecycle_stage: deleted``, or under ``.trash``) are
not read. Each metrics file is tailed by byte offset (`rltop.ingest.sources.mlflow.files_reader`).

A write to a metrics file names no file rltop watches by name: `owner` maps it to its run's
``meta.yaml``, so that native file events wake the run at once.
"""

from __future__ import annotations

import os
import threading

from rltop.ingest import storage
from rltop.ingest.reading import SourceKind, SourceReader
from rltop.ingest.sources.content_check import HeadCheck
from rltop.ingest.sources.mlflow.server import folder, run_folders

META = "meta.yaml"
MEMBER = "run"
TRASH = ".trash"
_names_lock = threading.Lock()
_names: dict[str, tuple[object, dict[str, str]]] = {}  # experiment folder -> (its state, run id -> name)


def meta_fields(text: bytes | str) -> dict[str, str]:
    """The top-level ``key: value`` scalars of an MLflow ``meta.yaml`` (quotes removed)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if not line or line[0] in " \t#-" or ":" not in line:
            continue
        key, _, value = line.partition(":")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] == "'":
            value = value[1:-1].replace("''", "'")
        elif len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
        fields[key.strip()] = value
    return fields


def _is_run_meta(head: bytes, whole: bool) -> bool:
    fields = meta_fields(head)
    return bool(fields.get("run_id") or fields.get("run_uuid")) and "experiment_id" in fields


is_run_meta = HeadCheck(_is_run_meta, head_bytes=64 << 10)


def read_meta(path: str) -> dict[str, str]:
    """The fields of the ``meta.yaml`` at ``path`` ({} when it cannot be read)."""
    try:
        with storage.open_file(path) as handle:
            return meta_fields(handle.read(0, 64 << 10))
    except storage.Unreachable:
        raise
    except OSError:
        return {}


def _run_names(experiment: str) -> dict[str, str]:
    """run id -> run name of every active run folder in ``experiment`` (kept while it is unchanged)."""
    try:
        state = (
            storage.stat(experiment).version
            if storage.is_url(experiment)
            else os.stat(experiment).st_mtime_ns
        )
    except OSError:
        state = None
    with _names_lock:
        cached = _names.get(experiment)
    if cached is not None and cached[0] == state and state is not None:
        return cached[1]
    names: dict[str, str] = {}
    try:
        entries = sorted(os.listdir(experiment)) if not storage.is_url(experiment) else []
    except OSError:
        entries = []
    for entry in entries:
        meta = read_meta(os.path.join(experiment, entry, META))
        ident = meta.get("run_id") or meta.get("run_uuid")
        if ident and meta.get("lifecycle_stage", "active") == "active":
            names[ident] = meta.get("run_name") or ident
    with _names_lock:
        _names[experiment] = (state, names)
    return names


def list_run(path: str) -> list[tuple[str, str]]:
    """[(member path, run directory)] of the run whose ``meta.yaml`` is ``path`` ([] for a deleted run)."""
    if TRASH in storage.parts(path):
        return []
    meta = read_meta(path)
    ident = meta.get("run_id") or meta.get("run_uuid")
    if not ident or meta.get("lifecycle_stage", "active") != "active":
        return []
    run_folder = storage.parent(path)
    experiment = storage.parent(run_folder)
    store = storage.parent(experiment)
    names = dict(_run_names(experiment))
    names.setdefault(ident, meta.get("run_name") or ident)
    experiment_name = read_meta(storage.join(experiment, META)).get("name") or storage.name(experiment)
    run_name = run_folders(list(names.items()))[ident]
    directory = storage.join(store, folder(experiment_name), run_name)
    return [(storage.member_path(path, MEMBER), directory)]


def owner(path: str) -> str | None:
    """The run ``meta.yaml`` a written file belongs to: ``…/<run id>/metrics/<key…>`` or
    ``…/<run id>/params/<key>`` -> ``…/<run id>/meta.yaml`` (None for any other file: a folder
    named ``metrics`` elsewhere is not a run's). String work only: native file events ask it for
    every write."""
    parts = path.split(os.sep)
    for index in range(len(parts) - 2, 0, -1):
        if parts[index] in ("metrics", "params") and is_run_id(parts[index - 1]):
            return os.sep.join([*parts[:index], META])
    return None


def is_run_id(name: str) -> bool:
    """True for a name MLflow gives a run folder: 32 hexadecimal digits (a uuid4's hex)."""
    return len(name) == 32 and all(c in "0123456789abcdef" for c in name)


def _open(path: str) -> SourceReader:
    from rltop.ingest.sources.mlflow.files_reader import MlflowFilesReader  # numpy: only once a run is read

    return MlflowFilesReader(path)


KIND = SourceKind(
    name="mlflow-files",
    label="MLflow file stores",
    pattern="mlruns/<experiment>/<run>/meta.yaml",
    claims=lambda name: name == META,
    run_directory=storage.parent,
    order=lambda path: path,
    open=_open,
    output_dir=lambda directory: storage.parent(storage.parent(storage.parent(directory))),  # holds mlruns/
    rank=5,
    why="more points and wall times",
    summary="read from MLflow's file store (each metrics file from its offset)",
    quiet_hint="training stopped, or it logs to another MLflow store",
    members=list_run,
    accepts=is_run_meta,
    owner=owner,
)
