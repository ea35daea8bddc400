"""Make this process see file permissions as an ordinary user does (the tests run as root).

Installed before rltop runs (``install()``): ``chmod 000`` on a directory then denies
listing it and opening or stat-ing anything inside it (EACCES), exactly where the kernel would
for a non-root user, so the tests can take permissions away and give them back for real.
"""

from __future__ import annotations

import builtins
import errno
import io
import os
import stat

_under = "/"  # only directories at or below this one are checked (the test's own tree)
_real_stat = os.stat
_real_scandir = os.scandir
_real_open = builtins.open
_real_os_open = os.open


def _mode(path: str) -> int | None:
    try:
        return stat.S_IMODE(_real_stat(path).st_mode)
    except OSError:
        return None


def _check(path, list_it: bool = False) -> None:
    """Raise EACCES if a non-root user could not reach ``path`` (or list it, with ``list_it``)."""
    if isinstance(path, int):
        return
    full = os.path.abspath(os.fsdecode(path))
    parent = os.path.dirname(full)
    while parent.startswith(_under):
        mode = _mode(parent)
        if mode is not None and not mode & stat.S_IXOTH:
            raise PermissionError(errno.EACCES, "Permission denied", full)
        up = os.path.dirname(parent)
        if up == parent:
            break
        parent = up
    if list_it and full.startswith(_under):
        mode = _mode(full)
        if mode is not None and not mode & stat.S_IROTH:
            raise PermissionError(errno.EACCES, "Permission denied", full)


def _stat(path, *args, **kwargs):
    _check(path)
    return _real_stat(path, *args, **kwargs)


def _scandir(path="."):
    _check(path, list_it=True)
    return _real_scandir(path)


def _open(file, *args, **kwargs):
    _check(file)
    return _real_open(file, *args, **kwargs)


def _os_open(path, *args, **kwargs):
    _check(path)
    return _real_os_open(path, *args, **kwargs)


def install(under: str, setattr=setattr) -> None:
    """Check permissions below ``under`` (``setattr``: pytest's ``monkeypatch.setattr``, to undo it)."""
    global _under
    _under = os.path.abspath(under)
    setattr(os, "stat", _stat)
    setattr(os, "scandir", _scandir)
    setattr(os, "open", _os_open)
    setattr(builtins, "open", _open)
    setattr(io, "open", _open)
