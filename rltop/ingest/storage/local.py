"""The local backend of `rltop.ingest.storage`: plain paths, through ``os``.

Reads are ``os.pread`` on a file opened for that one read (one ``open``, one ``fstat``, the
``pread`` calls, one ``close``): the cheapest way to follow a file that may be replaced or deleted
between two reads, and as fast as the reader was before the storage seam existed.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterator

from rltop.ingest.storage import FileStat


class LocalFile:
    """One local file opened for ranged reads."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._fd = -1

    def __enter__(self) -> LocalFile:
        self._fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def stat(self) -> FileStat:
        """``fstat`` of the open file (what was opened, even if the path was replaced since)."""
        return _file_stat(os.fstat(self._fd))

    def read(self, start: int, length: int) -> bytes:
        """``length`` bytes at ``start`` (fewer at the end of the file), whatever the read size limit."""
        first = os.pread(self._fd, length, start)
        if len(first) == length or not first:
            return first
        chunks = [first]
        got = len(first)
        while got < length:
            chunk = os.pread(self._fd, length - got, start + got)
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)


def _file_stat(result: os.stat_result) -> FileStat:
    return FileStat(result.st_size, result.st_mtime, result.st_mtime_ns, (result.st_dev, result.st_ino))


class LocalBackend:
    """Local files and directories."""

    remote = False

    def absolute(self, path: str) -> str:
        """The absolute path."""
        return os.path.abspath(path)

    def check(self, path: str) -> None:
        """FileNotFoundError or PermissionError for a path that cannot be used."""
        if not os.path.exists(path):
            raise FileNotFoundError(errno.ENOENT, "no such file or directory", path)
        if not os.access(path, os.R_OK) or (os.path.isdir(path) and not os.access(path, os.X_OK)):
            raise PermissionError(errno.EACCES, "permission denied", path)

    def stat(self, path: str) -> FileStat:
        """``os.stat`` of ``path``."""
        return _file_stat(os.stat(path))

    def kind(self, path: str) -> str | None:
        """ "file", "directory", or None."""
        if os.path.isfile(path):
            return "file"
        if os.path.isdir(path):
            return "directory"
        return None

    def open(self, path: str) -> LocalFile:
        """The file, for ranged reads."""
        return LocalFile(path)

    def walk(self, root: str, on_problem: Callable[[str], None]) -> Iterator[tuple[str, list[str]]]:
        """``os.walk`` following symlinks that stay inside the tree, each directory once.

        A symlink to a folder inside the tree is an alias (wandb's ``latest-run``): read once, under
        the folder's own name; a loop is said and skipped. A symlink to a folder *outside* the tree
        is not followed, and said: a link to ``/usr`` or to a shared scratch area must not make
        rltop walk it all; give its target as a path to read it.
        """
        seen: set[tuple[int, int]] = set()
        inside = os.path.realpath(root).rstrip(os.sep) + os.sep

        def on_error(error: OSError) -> None:
            on_problem(f"{error.filename}: cannot list directory ({error.strerror}); skipped")

        for directory, subdirs, files in os.walk(os.path.abspath(root), onerror=on_error, followlinks=True):
            try:
                info = os.stat(directory)
            except OSError:
                subdirs[:] = []
                continue
            key = (info.st_dev, info.st_ino)
            if key in seen:
                if _is_loop(directory):
                    on_problem(f"{directory}: symlink loop or repeated directory; skipped")
                subdirs[:] = []  # an alias of a folder read already (wandb's latest-run): read once
                continue
            seen.add(key)
            subdirs[:] = [name for name in subdirs if _stays_inside(directory, name, inside, on_problem)]
            # Real folders before symlinks to folders: a folder and its alias are read under the
            # folder's own name (wandb/offline-run-…, not wandb/latest-run).
            subdirs.sort(key=lambda name: (os.path.islink(os.path.join(directory, name)), name))
            yield directory, sorted(files)

    def is_gone(self, path: str) -> bool:
        """True only when ``path`` does not exist (ENOENT/ENOTDIR)."""
        try:
            os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            return True
        except OSError:
            return False
        return False


def _stays_inside(directory: str, name: str, inside: str, on_problem: Callable[[str], None]) -> bool:
    """False, said once per walk, for a symlinked folder whose target lies outside the tree."""
    path = os.path.join(directory, name)
    if not os.path.islink(path):
        return True
    target = os.path.realpath(path)
    if (target + os.sep).startswith(inside):
        return True
    on_problem(f"{path}: a symlink out of the tree (to {target}); not followed (give it as a path to read)")
    return False


def _is_loop(directory: str) -> bool:
    """True when ``directory`` leads back to one of its own ancestors (a symlink loop)."""
    target = os.path.realpath(directory)
    above = os.path.realpath(os.path.dirname(directory))
    return above == target or above.startswith(target.rstrip(os.sep) + os.sep)


_LOCAL = LocalBackend()


def backend(path: str) -> LocalBackend:
    """The local backend (one for every path)."""
    return _LOCAL
