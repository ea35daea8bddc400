"""The ``wandb`` source kind: the wandb SDK's run files, ``wandb/[offline-]run-<date>-<id>/run-<id>.wandb``.

In online mode too, the SDK writes every record it sends to this transaction log first, so it is
there, growing, while the run trains. A run is a run id, ``wandb/run-<id>``: the folder holding
its file, or the folders of its sessions when it was resumed (`run_directory`). Its output_dir is
the folder holding ``wandb/``: where transformers also wrote event files there
(``report_to=["wandb", "tensorboard"]`` with ``WANDB_DIR`` set to the output_dir), the event files
are read and the note says so.

The framing and the tailing are rltop's (`rltop.ingest.sources.wandb.leveldb_log`,
`rltop.ingest.sources.wandb.reader`);
the records are decoded with the wandb package's protobuf classes, the optional extra
``rltop[wandb]``. This module stays import-light: discovery imports it before the first frame.
"""

from __future__ import annotations

import re
from typing import Any

from rltop.ingest import storage
from rltop.ingest.reading import SourceKind, SourceReader

SUFFIX = ".wandb"
RUN_FOLDER = re.compile(r"^(?:offline-)?run-(\d{8}_\d{6})-(.+)$")  # [offline-]run-<date>_<time>-<run id>
WANDB_FOLDER = "wandb"  # the SDK's default run root (``WANDB_DIR``/wandb)
WANDB_EXTRA = "pip install 'rltop[wandb]'"


class MissingWandb(ImportError):
    """The wandb package (its protobuf classes) is not installed."""


def is_run_file(name: str) -> bool:
    """True for a W&B run file name (``run-<id>.wandb``)."""
    return name.endswith(SUFFIX) and len(name) > len(SUFFIX)


def marks_runs(name: str) -> bool:
    """A file or folder name that says W&B runs are here (``wandb``, ``offline-run-…``, ``*.wandb``)."""
    return name == WANDB_FOLDER or name.startswith(("run-", "offline-run-")) or is_run_file(name)


def record_class() -> Any:
    """``wandb.proto.wandb_internal_pb2.Record`` (`MissingWandb` when wandb is not installed)."""
    try:
        from wandb.proto import wandb_internal_pb2
    except ImportError:
        raise MissingWandb(
            f"reading W&B run files needs the wandb package, which is not installed: {WANDB_EXTRA}"
        ) from None
    return wandb_internal_pb2.Record


def missing_wandb() -> str | None:
    """The one line naming the extra to install when wandb is missing, else None."""
    try:
        record_class()
    except MissingWandb as error:
        return str(error)
    return None


def run_directory(path: str) -> str:
    """The run a ``.wandb`` file belongs to: ``<wandb folder>/run-<run id>``.

    A resumed run (``wandb.init(id=..., resume=...)``) writes a new folder with the same run id;
    every folder of one id is one rltop run, each folder one session of it, read in date order
    (a later session replaces what the earlier ones logged from its first step on, as for event
    files). A folder not named by the SDK is a run of its own.
    """
    folder = storage.parent(path)
    found = RUN_FOLDER.match(storage.name(folder))
    return storage.join(storage.parent(folder), f"run-{found.group(2)}") if found else folder


def reading_order(path: str) -> tuple[str, str]:
    """Sort key of a run's files: the date in their folder's name (sessions in the order they began)."""
    found = RUN_FOLDER.match(storage.name(storage.parent(path)))
    return (found.group(1) if found else "", path)


def output_dir(directory: str) -> str:
    """``<out>/wandb/run-…`` -> ``<out>``; any other run folder is its own output_dir."""
    parent = storage.parent(directory.rstrip("/"))
    if storage.name(parent) == WANDB_FOLDER:
        return storage.parent(parent) or parent
    return directory


def _open(path: str) -> SourceReader:
    from rltop.ingest.sources.wandb.reader import WandbFileReader  # numpy and wandb: only once a file is read

    return WandbFileReader(path)


KIND = SourceKind(
    name="wandb",
    label="W&B run files",
    pattern="wandb/*run-*/run-*.wandb",
    claims=is_run_file,
    run_directory=run_directory,
    order=reading_order,
    open=_open,
    output_dir=output_dir,
    rank=5,
    why="more points and wall times",
    summary="read from the W&B run file (the wandb SDK's local log, online or offline)",
    quiet_hint="training stopped, or wandb buffers: it writes its run file a 32 KiB block at a time",
    requirement=missing_wandb,
    marks=marks_runs,
)
