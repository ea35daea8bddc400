"""The ``tfevents`` source kind: TensorBoard event files, as transformers and TRL write them.

A run is a directory that directly holds ``events.out.tfevents.*`` files, read in the order of the
timestamp in their names (restarts and several writers: the order they were started), each with
its own incremental reader (`rltop.ingest.sources.tfevents.tfrecord.reader.EventFileReader`).

transformers writes every ``trainer.train()`` call into ``<output_dir>/runs/<datetime>_<host>/``:
such session folders of one ``output_dir`` may be one run (`rltop.ingest.follow.sessions`).
"""

from __future__ import annotations

import re

from rltop.ingest import storage
from rltop.ingest.reading import SourceKind, SourceReader

MARK = "tfevents"  # what TensorBoard looks for in a name
SESSIONS_FOLDER = "runs"  # transformers' TensorBoardCallback writes <output_dir>/runs/<datetime>_<host>
_TIMESTAMP = re.compile(r"^events\.out\.tfevents\.(\d+(?:\.\d+)?)")


def is_event_file(name: str) -> bool:
    """True for the names TensorBoard reads as event files: any name holding ``tfevents``.

    Writers name them ``events.out.tfevents.<time>.<host>...``, but TensorBoard (and so tbparse)
    reads every file whose name contains ``tfevents`` (``io_wrapper.IsTensorFlowEventsFile``), and
    users rename them (``run1.tfevents``): rltop reads what TensorBoard reads. Editors' and
    writers' temporary copies are left out.
    """
    return MARK in name and not name.endswith((".tmp", ".swp", "~"))


def event_file_order(name: str) -> tuple[float, str]:
    """Sort key: the writer's start time from the file name, then the name itself."""
    match = _TIMESTAMP.match(name)
    return (float(match.group(1)) if match else float("inf"), name)


def experiment_of(directory: str) -> str | None:
    """The ``output_dir`` of a session folder ``<output_dir>/runs/<session>``, else None."""
    parent = storage.parent(directory.rstrip("/"))
    if storage.name(parent) != SESSIONS_FOLDER:
        return None
    return storage.parent(parent) or None


def _open(path: str) -> SourceReader:
    from rltop.ingest.sources.tfevents.tfrecord.reader import (
        EventFileReader,  # numpy: only once a file is read
    )

    return EventFileReader(path)


KIND = SourceKind(
    name="tfevents",
    label="event files",
    pattern="events.out.tfevents.*",
    claims=is_event_file,
    run_directory=storage.parent,
    order=lambda path: event_file_order(storage.name(path)),
    open=_open,
    output_dir=lambda directory: experiment_of(directory) or directory,
    rank=10,
    why="more points and wall times",
    sessions=True,
)
