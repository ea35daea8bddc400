"""Reading an SQLite database that a training process writes, without writing anything beside it.

trackio keeps its runs in an SQLite database in WAL mode, often in a folder other users read too.
rltop must read it live and never create, change or lock anything there: a ``-wal`` or ``-shm``
file created by a reader belongs to the reader, and when the reader is another user the
training's next write fails ("attempt to write a readonly database").

What SQLite's read-only modes do (SQLite 3.22+, checked on 3.40 and in its source):

- ``mode=ro`` opens the database file read-only, but reads a WAL database through its ``-wal``
  and ``-shm`` files and creates them when they are missing (a reader allowed to write the
  ``-shm`` also writes its read marks there). trackio's every write opens a connection and its
  close removes both files, so between two writes a reader creates them. On a database file of
  0 bytes it even deletes the ``-wal`` (``pagerOpenWalIfPresent``).
- ``mode=ro&readonly_shm=1`` never writes the ``-shm``: with a writer connected it maps the
  writer's index read-only; with none, SQLite rebuilds the index in its own memory from the
  ``-wal`` (``walBeginShmUnreliable``). Both files must exist already, or they are created (or
  the open fails where they cannot be).
- ``immutable=1`` creates nothing and takes no lock, but ignores the ``-wal`` and trusts the file
  not to change while it reads: a checkpoint during the read would tear it.
- ``SQLITE_FCNTL_PERSIST_WAL`` (a writer that keeps its ``-wal`` after closing) leaves the two
  files in place with no writer: the ``readonly_shm`` case with no writer, read from memory.

So each read (`query`):

1. opens the database file and takes, on that descriptor, the SHARED lock every SQLite reader
   holds (a read lock on SQLite's lock bytes; an open file description lock where the system has
   them, which no other descriptor of this process can drop). When a writer is about to write the
   file itself (PENDING or EXCLUSIVE held) the read backs off, tries again a few times, and after
   ``wait`` seconds says `Busy`. The SHARED lock never stops a WAL writer: it writes, commits and
   checkpoints as usual; only its close's clean-up (the last connection checkpoints and removes
   ``-wal``/``-shm``) is skipped while a read holds the lock, and done by its next close. A
   rollback-journal writer waits out the read's milliseconds before it writes the file, as it
   waits for any reader.
2. with the lock held, the files beside the database choose the way to read:

   - no ``-wal`` (trackio between two writes): the file is complete, and nobody may change it
     under the lock (a WAL writer writes the file only through a ``-wal``, which it must create and
     cannot remove while the lock is held; a rollback writer needs an EXCLUSIVE lock): read it
     ``immutable``. If after the query a ``-wal`` appeared or the file changed, the result is
     dropped and the read done again.
   - a ``-wal`` and a ``-shm``: ``mode=ro&readonly_shm=1``. The files exist, the lock keeps them
     from being removed, and nothing is written to them.
   - a ``-wal`` holding rows and no ``-shm`` (left by a crash), or a hot rollback journal (a
     crash in the middle of a write): SQLite cannot read these without writing beside them (a
     ``-shm``; rolling the journal back). A private copy of the database and that file, in the
     system's temporary folder, is read instead (SQLite recovers it there). It is kept while the
     files do not change (no writer is active in that state), and costs one copy of the file
     (0.5 to 0.9 s and 212 MB of temporary space for a 212 MB database, `benchmarks/bench_trackio.py`).
3. the lock is released: nothing beside the database was created, changed, or left locked.

Why not always read a private copy (the database and its ``-wal`` copied to memory or to a
temporary folder)? It is exact too, but every poll would cost a copy of the whole file (0.8 s for
212 MB, where a live poll costs about 1 ms), and a copy of only what changed cannot tell which
pages a checkpoint rewrote. The lock costs the writer nothing measured: trackio-like writes (open,
insert, commit, close) took 0.6 to 1 ms each while a read held it; a writer committing every few
ms as another user beside a reader polling without pause (560,000 polls in 10 s) failed no write,
and the reader got every row once, in order (beside the code before, the same writer got 5,132
"attempt to write a readonly database" errors in 8 s).

Where the file system has no locks (ENOLCK: some network mounts), reads go on without them:
the check after an ``immutable`` query is then the only guard, as without ``fcntl`` (Windows).

Every connection decodes text with ``surrogateescape`` (a damaged cell never raises), and the
errors of a damaged database are `sqlite3.DatabaseError` with a message, never a decoding error.
"""

from __future__ import annotations

import atexit
import errno
import os
import pathlib
import shutil
import sqlite3
import struct
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

try:
    import fcntl
except ImportError:  # Windows: no POSIX locks; reads rely on the check after the query alone
    fcntl = None  # type: ignore[assignment]

T = TypeVar("T")

WAIT = 0.5  # seconds a read waits for a writer holding the file before it says Busy
WAIT_AGAIN = 0.02  # the same, when the previous read was Busy too: a poll never waits long on a lock
HEADER = 100  # bytes of the database header
MAGIC = b"SQLite format 3\x00"
JOURNAL_MAGIC = bytes.fromhex("d9d505f920a163d7")  # the header of a rollback journal not yet done
WAL_HEADER = 32  # a -wal shorter than its header holds no frame
# SQLite's lock bytes (os_unix.c): PENDING, RESERVED, then the 510 bytes of the SHARED range.
PENDING_BYTE = 0x40000000
RESERVED_BYTE = PENDING_BYTE + 1
SHARED_FIRST = PENDING_BYTE + 2
SHARED_SIZE = 510
YOUNG_WAL = 2.0  # seconds: a -wal this new without its -shm is a writer opening the database

_OFD = fcntl is not None and sys.platform.startswith("linux") and struct.calcsize("P") == 8
_FLOCK = "hhqqi4x"  # struct flock on 64-bit Linux: type, whence, start, len, pid (0 for OFD locks)

_serial_guard = threading.Lock()
_serial: dict[str, threading.Lock] = {}  # database -> held while this process reads it
_copies: dict[str, tuple[object, str]] = {}  # database -> (the files' state, the private folder)
_locked: set[str] = set()  # databases whose last read found them locked


class Busy(Exception):
    """The writer holds the database for now (it is writing the file, or keeps it locked)."""


class NotSQLite(Exception):
    """The file is not an SQLite database: its first bytes say so."""


class Empty(NotSQLite):
    """The file is shorter than a database header: empty, or its writer is creating it."""


class CopyFailed(Exception):
    """The private copy a crash's leftovers are read from could not be made (the message says why)."""


class _Changed(Exception):
    """The database changed while it was read immutable: the result is dropped."""


def query(path: str, work: Callable[[sqlite3.Connection], T], wait: float | None = None) -> T:
    """``work(connection)`` run on a consistent state of the database ``path``, read without writing
    anything beside it (the module's docstring says how); its result.

    ``work`` only reads (it may run more than once). Raises `NotSQLite` (`Empty`), `Busy` (a writer
    held the file for ``wait`` seconds: `WAIT`, or `WAIT_AGAIN` while the database stays locked),
    `sqlite3.DatabaseError` (a damaged database: its message says how; `sqlite3.OperationalError`:
    it cannot be read), `CopyFailed`, OSError (the file cannot be opened).
    """
    real = os.path.realpath(path)
    if wait is None:
        wait = WAIT_AGAIN if real in _locked else WAIT
    try:
        result = _query(real, work, wait)
    except Busy:
        _locked.add(real)
        raise
    _locked.discard(real)
    return result


def _query(real: str, work: Callable[[sqlite3.Connection], T], wait: float) -> T:
    deadline = time.monotonic() + wait
    pause = 0.001
    with _serial_lock(real):
        while True:
            try:
                return _attempt(real, work)
            except (Busy, _Changed) as why:
                if time.monotonic() + pause > deadline:
                    raise Busy(str(why) or "the writer changed it during every read") from None
                if isinstance(why, Busy):
                    time.sleep(pause)
                    pause = min(pause * 2, 0.05)


def problem(error: BaseException) -> str:
    """What is wrong with a database, in a few words (for a line that names the file)."""
    if isinstance(error, Busy):
        return "locked by its writer"  # the same words whatever the lock: a repeated line is said once
    if isinstance(error, NotSQLite):
        return f"not an SQLite database ({error})"
    if isinstance(error, CopyFailed):
        return str(error)
    if isinstance(error, OSError):
        return f"cannot be opened: {error.strerror or error}"
    if isinstance(error, sqlite3.OperationalError):
        return f"cannot be read ({error})"
    return f"damaged SQLite database ({error})"


@contextmanager
def _serial_lock(real: str) -> Iterator[None]:
    """One read of a database at a time in this process: a plain POSIX lock is dropped by the close
    of any descriptor of the file in the process, SQLite's included."""
    with _serial_guard:
        lock = _serial.setdefault(real, threading.Lock())
    with lock:
        yield


def _attempt(real: str, work: Callable[[sqlite3.Connection], T]) -> T:
    fd = os.open(real, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        before = os.fstat(fd)
        if before.st_size < HEADER:
            start = _read_at(fd, HEADER, 0)
            if MAGIC.startswith(start[: len(MAGIC)]) or not start.strip(b"\0"):
                raise Empty("empty" if not start else f"{len(start)} bytes")  # its first page to come
            raise NotSQLite("no SQLite header")
        locked = _lock_shared(fd)
        try:
            header = _read_at(fd, HEADER, 0)
            if not header.startswith(MAGIC):
                raise NotSQLite("no SQLite header")
            sides = _sidecars(real)
            connection, recheck = _open(real, fd, header, before, sides)
            try:
                try:
                    connection.execute("BEGIN")  # one snapshot for every statement of ``work``
                    result = work(connection)
                except (sqlite3.Error, UnicodeDecodeError) as error:
                    raise _failure(error, _moved(real, before, sides, recheck), recheck) from None
                if _moved(real, before, sides, recheck):
                    raise _Changed("the writer changed it during the read")
                return result
            finally:
                connection.close()
        finally:
            if locked:
                _unlock(fd)
    finally:
        os.close(fd)


def _moved(real: str, before: os.stat_result, sides: tuple, recheck: bool) -> bool:
    """The database was replaced during the read or, read immutable (``recheck``), changed."""
    try:
        now = os.stat(real)
    except OSError:
        return True
    if not recheck:
        return (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino)
    return _state(now) != _state(before) or _sidecars(real) != sides


def _failure(error: BaseException, moved: bool, recheck: bool) -> BaseException:
    """What a failed query raises: `_Changed` (read again), `Busy`, or the damage as DatabaseError."""
    if moved:
        return _Changed("the writer changed it during the read")
    if isinstance(error, UnicodeDecodeError):  # SQLite's message quoted bytes that are not UTF-8
        return sqlite3.DatabaseError(bytes(error.object).decode("utf-8", "backslashreplace"))
    if not recheck and isinstance(error, sqlite3.OperationalError) and _transient(error):
        return Busy(str(error))  # SQLite's reader protocol raced the writer: read again
    return error


def _transient(error: sqlite3.OperationalError) -> bool:
    """An error of a reader racing its writer (read again), not damage."""
    text = str(error)
    return any(word in text for word in ("locked", "busy", "readonly", "read-only", "recovery"))


def _state(info: os.stat_result) -> tuple[int, int, int, int]:
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


def _sidecars(real: str) -> tuple[object, object, object]:
    """The ``-wal``, ``-shm`` and ``-journal`` beside the database: (inode, size, mtime) or None."""
    marks = []
    for suffix in ("-wal", "-shm", "-journal"):
        try:
            info = os.stat(real + suffix)
        except OSError:
            marks.append(None)
            continue
        marks.append((info.st_ino, info.st_size, info.st_mtime_ns))
    return tuple(marks)  # type: ignore[return-value]


def _open(real: str, fd: int, header: bytes, before: os.stat_result, sides: tuple) -> tuple:
    """(a connection to read with, whether the result must be checked against a change)."""
    wal, shm, journal = sides
    uri = pathlib.Path(real).as_uri()
    if wal is not None and shm is not None:
        return _connect(uri + "?mode=ro&readonly_shm=1"), False
    if wal is not None and wal[1] >= WAL_HEADER:
        if time.time() - wal[2] / 1e9 < YOUNG_WAL:
            raise Busy("its writer is opening it")
        return _connect(_private_copy(real, fd, "-wal", (_state(before), sides))), True
    if header[18] == 1 and journal is not None and _hot_journal(real, fd):
        return _connect(_private_copy(real, fd, "-journal", (_state(before), sides))), True
    return _connect(uri + "?immutable=1"), True


def _connect(target: str) -> sqlite3.Connection:
    uri = target if target.startswith("file:") else pathlib.Path(target).as_uri()
    connection = sqlite3.connect(uri, uri=True, timeout=0.05, isolation_level=None, check_same_thread=False)
    connection.text_factory = _text
    connection.execute("PRAGMA query_only = 1")
    return connection


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def _hot_journal(real: str, fd: int) -> bool:
    """A rollback journal left by a writer that stopped in the middle of a write (nobody holds
    RESERVED, and its header is not zeroed): the database file may hold half of that write."""
    try:
        with open(real + "-journal", "rb") as journal:
            start = journal.read(len(JOURNAL_MAGIC))
    except OSError:
        return False
    return start == JOURNAL_MAGIC and not _held(fd, RESERVED_BYTE)


def _private_copy(real: str, fd: int, suffix: str, state: object) -> str:
    """A copy of the database and its ``suffix`` file in a private temporary folder (the same one
    while ``state`` holds); the copy's database path."""
    cached = _copies.get(real)
    if cached is not None and cached[0] == state:
        return os.path.join(cached[1], "copy.db")
    if cached is not None:
        shutil.rmtree(cached[1], ignore_errors=True)
        del _copies[real]
    if not _copies:
        atexit.register(_forget_copies)
    folder = tempfile.mkdtemp(prefix="rltop-sqlite-")
    target = os.path.join(folder, "copy.db")
    try:
        with open(target, "wb") as out:  # through our descriptor: closing another drops its lock
            offset = 0
            while chunk := _read_at(fd, 1 << 20, offset):
                out.write(chunk)
                offset += len(chunk)
        shutil.copyfile(real + suffix, target + suffix)
    except OSError as error:
        shutil.rmtree(folder, ignore_errors=True)
        raise CopyFailed(
            f"its {suffix} (left by a crash) is read from a copy in {tempfile.gettempdir()}, "
            f"which failed: {error.strerror or error}"
        ) from None
    _copies[real] = (state, folder)
    return target


def _forget_copies() -> None:
    for _, folder in _copies.values():
        shutil.rmtree(folder, ignore_errors=True)
    _copies.clear()


def _read_at(fd: int, size: int, offset: int) -> bytes:
    if hasattr(os, "pread"):
        return os.pread(fd, size, offset)
    os.lseek(fd, offset, os.SEEK_SET)
    return os.read(fd, size)


def _lock_shared(fd: int) -> bool:
    """SQLite's SHARED lock on ``fd`` (False: this file system has no locks; `Busy`: a writer holds
    PENDING or EXCLUSIVE). As SQLite takes it: PENDING read-locked first, so that a writer
    waiting for readers to leave is not starved."""
    if fcntl is None:
        return False
    try:
        if not _try(fd, fcntl.F_RDLCK, PENDING_BYTE, 1):
            raise Busy("it is writing the file")
        try:
            if not _try(fd, fcntl.F_RDLCK, SHARED_FIRST, SHARED_SIZE):
                raise Busy("it holds the database exclusively")
        finally:
            _try(fd, fcntl.F_UNLCK, PENDING_BYTE, 1)
    except OSError as error:  # ENOLCK, EOPNOTSUPP…: no locks here; the recheck guards the read
        if error.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL, errno.EBADF):
            return False
        raise
    return True


def _unlock(fd: int) -> None:
    _try(fd, fcntl.F_UNLCK, SHARED_FIRST, SHARED_SIZE)


def _held(fd: int, byte: int) -> bool:
    """Another connection holds a write lock on ``byte`` (RESERVED: a writer mid-transaction)."""
    if fcntl is None:
        return False
    try:
        if not _try(fd, fcntl.F_RDLCK, byte, 1):
            return True
        _try(fd, fcntl.F_UNLCK, byte, 1)
    except OSError:
        return False
    return False


def _try(fd: int, kind: int, start: int, length: int) -> bool:
    """Set a lock without waiting; False when another holder's lock conflicts."""
    try:
        if _OFD:
            fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack(_FLOCK, kind, os.SEEK_SET, start, length, 0))
        elif kind == fcntl.F_UNLCK:
            fcntl.lockf(fd, fcntl.LOCK_UN, length, start, os.SEEK_SET)
        else:
            fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB, length, start, os.SEEK_SET)
    except OSError as error:
        if error.errno in (errno.EAGAIN, errno.EACCES):
            return False
        raise
    return True
