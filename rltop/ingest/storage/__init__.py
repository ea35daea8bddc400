"""Every path operation of ``rltop.ingest``: list, stat, read a byte range, exists, is gone.

A path is a local path or a URL (``s3://bucket/exp``, ``gs://…``, ``memory://…``, ``file://…``, any
fsspec URL). Each kind of path has a *backend*, one module each:

- `rltop.ingest.storage.local`: local paths, through ``os`` (``pread`` on an open file, ``os.walk``);
- `rltop.ingest.storage.remote`: every URL, through fsspec (s3fs, gcsfs, …: optional extras).

Callers never touch ``os``/``open()`` for run files; they ask this module, which picks the backend
from the path. A new backend is one module with a ``backend(path) -> Backend`` function (see
`Backend`), named in `BACKENDS` under the URL schemes it serves.

Paths keep the form the user gave them (``s3://bucket/exp/run``): the helpers below split and join
them without ``os.path.normpath``/``abspath``, which would break ``s3://`` into ``s3:/``.

* `sqlite_readonly` -- reading an SQLite database that a training process writes, without writing
  anything beside it.
"""

from __future__ import annotations

import importlib
import os
import posixpath
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

# URL scheme -> backend module; "" is plain local paths, "*" any URL scheme not named.
BACKENDS = {"": "rltop.ingest.storage.local", "*": "rltop.ingest.storage.remote"}
# An MLflow tracking server: read through its REST API, shown as a tree of runs (mlflow_server).
BACKENDS.update(dict.fromkeys(("http", "https", "mlflow"), "rltop.ingest.sources.mlflow.server"))
_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*(?:::[A-Za-z][A-Za-z0-9+.\-]*)*)://")


class StorageError(OSError):
    """A path's storage cannot be used at all (missing backend package, bad URL)."""


class MissingBackend(ValueError):
    """The package a URL scheme needs is not installed (the message names what to install)."""


class Unreachable(OSError):
    """The storage behind a path did not answer (network, server down, credentials refused).

    Unlike a missing or unreadable file, this is about every path of that storage at once: the
    watcher says it once and retries with back-off (`rltop.ingest.follow.watcher`).
    """


@dataclass(frozen=True)
class FileStat:
    """What a listing or a stat tells about one file."""

    size: int
    mtime: float  # seconds since the epoch (0.0 when the backend does not know)
    version: object = None  # changes whenever the content may have changed (mtime_ns, an ETag)
    identity: object = None  # the same file object (device and inode); None where unknowable


class FileHandle(Protocol):
    """One opened file: its stat, and byte ranges of it (closed by the ``with`` block)."""

    def stat(self) -> FileStat:
        """Size, modification time and identity of the opened file."""

    def read(self, start: int, length: int) -> bytes:
        """``length`` bytes at ``start`` (fewer at the end of the file)."""

    def __enter__(self) -> FileHandle: ...

    def __exit__(self, *exc: object) -> None: ...


class Backend(Protocol):
    """The operations a storage backend provides (see `rltop.ingest.storage.local` for the model)."""

    remote: bool  # polled (every `DEFAULT_REMOTE_POLL` s by default), never watched with file events

    def absolute(self, path: str) -> str:
        """The path in its canonical form (absolute; no trailing slash)."""

    def check(self, path: str) -> None:
        """Raise ``DiscoveryError``-worthy OSErrors for a path that cannot be used at all."""

    def stat(self, path: str) -> FileStat:
        """Stat one file (FileNotFoundError, PermissionError, `Unreachable`)."""

    def kind(self, path: str) -> str | None:
        """ "file", "directory", or None when nothing is there (never raises for a missing path)."""

    def open(self, path: str) -> FileHandle:
        """Open one file for ranged reads."""

    def walk(self, root: str, on_problem: Callable[[str], None]) -> Iterator[tuple[str, list[str]]]:
        """(directory, names of the files in it) for every directory under ``root``, sorted."""

    def is_gone(self, path: str) -> bool:
        """True only when ``path`` certainly does not exist (an access or network error is not that)."""


DEFAULT_REMOTE_POLL = 10.0  # seconds between polls of a remote path (each poll stats the active files)


def restart_reason(
    handle: FileHandle, stat: FileStat, read_identity: object, read_version: object, seen: int, head: bytes
) -> str | None:
    """Why what a reader took from a file no longer describes it (None when it still does, or when
    nothing was read yet: ``read_version`` None). ``read_identity`` and ``read_version`` are the
    file's identity and version at the last read, ``seen`` the largest size taken in, ``head`` its
    first bytes as read."""
    if read_version is None:
        return None
    if stat.identity != read_identity:
        return "was replaced"
    if stat.size < seen:
        return "shrank"
    # Truncated and rewritten past the old size between two reads keeps the inode and grows: only
    # the first bytes (a new writer's first record) tell. A file whose version (mtime, ETag) did not
    # change was not written at all: an idle poll reads nothing.
    if head and stat.version != read_version and handle.read(0, len(head)) != head:
        return "was rewritten"
    return None


def scheme(path: str) -> str:
    """The URL scheme of ``path`` (``"s3"``, ``"simplecache::s3"``), or ``""`` for a local path."""
    found = _URL.match(path)
    return found.group(1) if found else ""


def is_url(path: str) -> bool:
    """True for URLs (``s3://…``), False for local paths."""
    return bool(scheme(path))


def backend(path: str) -> Backend:
    """The backend serving ``path`` (`MissingBackend` when its package is not installed)."""
    name = scheme(path)
    module = BACKENDS.get(name.split("::")[-1] if name else "", BACKENDS["*"] if name else BACKENDS[""])
    return importlib.import_module(module).backend(path)


def _split(path: str) -> tuple[str, str]:
    """(``"s3://"``, ``"bucket/exp"``) for a URL, (``""``, path) for a local path."""
    found = _URL.match(path)
    if not found:
        return "", path
    return path[: found.end()], path[found.end() :]


def display(path: str) -> str:
    """How to show a root the user gave: a URL as given, a local path made absolute (no I/O)."""
    return path if is_url(path) else os.path.abspath(path)


def absolute(path: str) -> str:
    """The canonical form of ``path`` (local: absolute; URL: as its backend names it)."""
    return backend(path).absolute(path) if is_url(path) else os.path.abspath(path)


def parent(path: str) -> str:
    """The directory holding ``path`` (``s3://b/x/y`` -> ``s3://b/x``)."""
    prefix, rest = _split(path)
    if not prefix:
        return os.path.dirname(path)
    return prefix + posixpath.dirname(rest.rstrip("/"))


def name(path: str) -> str:
    """The last component of ``path``."""
    prefix, rest = _split(path)
    return posixpath.basename(rest.rstrip("/")) if prefix else os.path.basename(path)


def join(directory: str, *names: str) -> str:
    """``directory/name…`` for either kind of path."""
    if is_url(directory):
        return posixpath.join(directory, *names)
    return os.path.join(directory, *names)


def relative(path: str, root: str) -> str:
    """``path`` relative to ``root`` (``"."`` for the root itself), ``/``-separated."""
    path_prefix, path_rest = _split(path)
    root_prefix, root_rest = _split(root)
    if path_prefix or root_prefix:
        if path_prefix != root_prefix:
            return path
        return posixpath.relpath("/" + path_rest.strip("/"), "/" + root_rest.strip("/"))
    return os.path.relpath(path, root).replace(os.sep, "/")


def parts(path: str) -> list[str]:
    """The components of the canonical form (``s3://b/logs`` -> ``["s3:", "b", "logs"]``)."""
    prefix, rest = _split(absolute(path))
    if prefix:
        return [prefix[:-2], *(p for p in rest.split("/") if p)]
    return [p for p in os.path.normpath(rest).split(os.sep) if p]


# A run that is one part of a file holding several (a trackio database holds a project's runs) is
# read from the "member path" ``<file>::<member>``: stat, mtime, kind and is_gone answer for the
# file, so discovery, the watcher and loads treat it as the run's file; its reader opens the file.
MEMBER = "::"


def member_path(path: str, member: str) -> str:
    """The path of ``member`` inside the file ``path`` (``/t/project.db::<run id>``)."""
    return f"{path}{MEMBER}{member}"


def container(path: str) -> str:
    """The file a member path points into (any other path unchanged: a member has no ``/``, so a
    folder whose name holds ``::`` is no member path)."""
    if is_url(path):
        return path
    head, mark, member = path.rpartition(MEMBER)
    return head if mark and "/" not in member and os.sep not in member else path


def stat(path: str) -> FileStat:
    """Stat one file (raises FileNotFoundError, PermissionError, `Unreachable`, OSError)."""
    return backend(path).stat(container(path))


def mtime(path: str) -> float | None:
    """Modification time of ``path`` (None when it cannot be stat'ed; `Unreachable` propagates)."""
    try:
        return backend(path).stat(container(path)).mtime
    except Unreachable:
        raise
    except OSError:
        return None


def open_file(path: str) -> FileHandle:
    """Open ``path`` for ranged reads (use as a context manager)."""
    return backend(path).open(path)


def kind(path: str) -> str | None:
    """ "file", "directory", or None when nothing is at ``path``."""
    return backend(path).kind(container(path))


def walk(root: str, on_problem: Callable[[str], None]) -> Iterator[tuple[str, list[str]]]:
    """(directory, file names) under ``root``; problems (an unlistable folder) go to ``on_problem``."""
    return backend(root).walk(root, on_problem)


def is_gone(path: str) -> bool:
    """True only when ``path`` does not exist: a permission error (EACCES) is not a deletion."""
    return backend(path).is_gone(container(path))


def check(path: str) -> None:
    """Raise OSError (FileNotFoundError, PermissionError, `Unreachable`) for a path that cannot be used."""
    backend(path).check(path)


def is_remote(path: str) -> bool:
    """True for paths whose backend is polled over a network (every URL)."""
    return is_url(path) and backend(path).remote
