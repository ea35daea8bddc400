"""Native file events (inotify on Linux, FSEvents on macOS) through watchdog, reduced to two facts.

The observer's threads only note *which event file grew* and *whether the tree changed shape*
(a file or directory created, deleted or moved) in a `ChangeSignal`; the watcher thread does all
reading. Only the event kinds rltop needs are asked from the kernel, so rltop's own reads (open,
close-no-write) never wake it, and writes to other files (model weights) cost one cheap name check:
the files that matter are those a source kind claims (`rltop.ingest.sources`: event files,
trainer_state.json); a new directory (a checkpoint, a session folder) changes the tree.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import threading
import time
import warnings

from watchdog.events import (
    EVENT_TYPE_ATTRIB,
    EVENT_TYPE_CLOSED,
    EVENT_TYPE_MODIFIED,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileAttribEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)

from rltop.ingest.sources import is_source_file, owner_of
from rltop.ingest.sources.completions import is_completions_file

_WANTED = [
    FileModifiedEvent, FileAttribEvent, FileCreatedEvent, FileDeletedEvent, FileMovedEvent,
    DirCreatedEvent, DirDeletedEvent, DirMovedEvent,
]  # fmt: skip
_GROWTH = (EVENT_TYPE_MODIFIED, EVENT_TYPE_ATTRIB, EVENT_TYPE_CLOSED)

# watchdog speaks through `logging` (queue overflow) and `warnings` (a harmless race when nested
# directories are created at once, as `os.makedirs("runs/<date>")` by every SummaryWriter does):
# neither may reach the terminal of `rltop tail` or the dashboard. The sweep covers what is lost.
logging.getLogger("watchdog").addHandler(logging.NullHandler())
warnings.filterwarnings("ignore", message="Callback with id", category=RuntimeWarning, module="watchdog")


class ChangeSignal:
    """Thread-safe inbox from whoever notices changes (observer threads) to the watcher thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._files: set[str] = set()
        self._tree_changed = False
        self._event = threading.Event()

    def file_changed(self, path: str) -> None:
        """A source file was written to (or its permissions changed)."""
        with self._lock:
            self._files.add(path)
        self._event.set()

    def tree_changed(self) -> None:
        """Files or directories were created, deleted or moved: the runs must be listed again."""
        with self._lock:
            self._tree_changed = True
        self._event.set()

    def wake(self) -> None:
        """Wake the waiting watcher without reporting a change (used to stop it)."""
        self._event.set()

    def wait(self, timeout: float) -> bool:
        """Block until something was reported or ``timeout`` passed; True when woken."""
        return self._event.wait(timeout)

    def take(self) -> tuple[set[str], bool]:
        """What was reported since the last call: (changed source files, tree changed)."""
        with self._lock:
            files, tree = self._files, self._tree_changed
            self._files, self._tree_changed = set(), False
            self._event.clear()
        return files, tree


class _Handler(FileSystemEventHandler):
    """Turns watchdog events into `ChangeSignal` calls; runs on watchdog's dispatcher thread."""

    def __init__(self, signal: ChangeSignal, aliases: list[tuple[str, str]]) -> None:
        super().__init__()
        self._signal = signal
        self._aliases = aliases  # (watched real path prefix, the user's path prefix)

    def _user_path(self, path: str) -> str:
        """Events name files under the resolved root; discovery names them under the user's."""
        for real, user in self._aliases:
            if path.startswith(real):
                return user + path[len(real) :]
        return path

    def dispatch(self, event: FileSystemEvent) -> None:
        """Called by watchdog for every event (kept cheap: checkpoints write many)."""
        if event.is_directory:
            self._signal.tree_changed()  # only created/deleted/moved directories are asked for
            return
        src = os.fsdecode(event.src_path)
        if event.event_type in _GROWTH:
            if self._aliases:
                src = self._user_path(src)
            owned = owner_of(src)  # first: veRL's console logs claim names without a suffix too ("loss")
            if owned is not None:
                self._signal.file_changed(owned)  # an MLflow metrics file: its run's meta.yaml
            elif is_source_file(os.path.basename(src)):
                self._signal.file_changed(src)
            elif is_completions_file(os.path.basename(src)):
                self._signal.tree_changed()  # a completions file written: its folder is listed again
            return
        dest = os.fsdecode(getattr(event, "dest_path", "") or "")
        names = [os.path.basename(src)] + ([os.path.basename(dest)] if dest else [])
        if any(is_source_file(name) or is_completions_file(name) for name in names):
            self._signal.tree_changed()


class NativeObserver:
    """A watchdog observer on every root, recursive for directories."""

    def __init__(self, roots: list[str], signal: ChangeSignal) -> None:
        self.roots = [os.path.abspath(r) for r in roots]
        # A root given through a symlink (logs -> /scratch/...) is watched at its real path: inotify
        # does not follow a symlink it is pointed at.
        self._watched = {root: os.path.realpath(root) for root in self.roots}
        aliases = [
            (real.rstrip(os.sep) + os.sep, root.rstrip(os.sep) + os.sep)
            for root, real in self._watched.items()
            if real != root
        ]
        self._handler = _Handler(signal, aliases)
        self._observer = None
        self._lock = threading.Lock()

    def start(self) -> None:
        """Start watching; raises (OSError for inotify limits, ...) when native events are unavailable."""
        from watchdog.observers import Observer

        observer = Observer()  # inotify_init() here: EMFILE at the instance limit
        self._observer = observer
        try:
            for root in self.roots:
                self._schedule(root)
            observer.start()  # the watches are added here: ENOSPC at the watch limit
        except BaseException:
            self.stop()
            raise

    def _schedule(self, root: str) -> None:
        real = os.path.realpath(root)
        self._watched[root] = real
        self._observer.schedule(
            self._handler, real, recursive=os.path.isdir(real), event_filter=list(_WANTED)
        )

    def rewatch(self) -> None:
        """Watch again any root that was deleted (its watch died with it) and exists again."""
        with self._lock:
            observer = self._observer
            if observer is None:
                return
            alive = {e.watch.raw_path for e in list(observer.emitters) if e.is_alive()}
            for root in self.roots:
                real = self._watched[root]
                if real in alive or not os.path.exists(root):
                    continue
                with contextlib.suppress(KeyError, OSError, RuntimeError):
                    for emitter in [e for e in list(observer.emitters) if e.watch.raw_path == real]:
                        observer.unschedule(emitter.watch)
                    self._schedule(root)

    def stop(self, timeout: float = 1.0) -> None:
        """Stop the observer and its threads (idempotent)."""
        with self._lock:
            observer, self._observer = self._observer, None
        if observer is None:
            return
        deadline = time.monotonic() + timeout

        def stop_observer() -> None:
            with contextlib.suppress(Exception):
                observer.stop()  # also closes the inotify instance, even if never started

        # watchdog's stop() joins its emitter threads without a timeout: bound it, so that stopping
        # (SIGTERM to `rltop watch` or `tail`, quitting the dashboard) never hangs on it.
        stopper = threading.Thread(target=stop_observer, name="rltop-observer-stop", daemon=True)
        stopper.start()
        stopper.join(timeout)
        if observer.is_alive():
            observer.join(max(0.0, deadline - time.monotonic()))


def _limit(name: str) -> str:
    try:
        with open(f"/proc/sys/fs/inotify/{name}", encoding="ascii") as handle:
            return handle.read().strip()
    except OSError:
        return "?"


def failure_reason(error: BaseException) -> str:
    """Why the native observer could not start, with the fix when there is one (one line)."""
    code = getattr(error, "errno", None)
    if code == errno.ENOSPC:
        return (
            f"inotify watch limit reached (fs.inotify.max_user_watches = {_limit('max_user_watches')}; "
            "raise it with: sudo sysctl fs.inotify.max_user_watches=524288)"
        )
    if code == errno.EMFILE:
        return (
            f"inotify instance limit reached (fs.inotify.max_user_instances = "
            f"{_limit('max_user_instances')}; raise it with: sudo sysctl fs.inotify.max_user_instances=1024)"
        )
    text = " ".join(str(error).split()) or type(error).__name__
    return f"native file events unavailable ({text})"
