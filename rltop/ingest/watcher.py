"""Live tailing: a thread that follows every event file under the watched paths and feeds consumers.

How it works:

- **native mode** (default): watchdog's observer (inotify on Linux) says which event file grew or
  that the tree changed shape; the watcher waits ``COALESCE`` seconds after the first event of a
  burst, then reads every reported file once, from its offset. A sweep every ``NATIVE_SWEEP``
  seconds lists the runs again and reads every file, which catches what inotify can miss
  silently (a watch limit hit below the root, an overflowed queue, a symlinked directory).
- **polling mode** (``poll=SECONDS``, or automatic): every interval, read the files that are
  still being written (an idle read costs one open and fstat), list the runs again, and now and
  then read the old files too. Chosen automatically, and said once, when the paths are on a
  network file system (inotify never sees other machines' writes) or the observer cannot start.

Consumers get `ChangeBatch` values through ``on_batch``, called on the watcher thread; they keep
their own `Store` and apply batches with `apply_batch` in their own thread (the dashboard posts
the batch as a message, ``rltop tail`` hands it over through a queue). The watcher never shares a
mutable store and never waits for the consumer.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

from rltop.ingest.discovery import check_paths, compile_filter
from rltop.ingest.feed import FALLBACK, FILE_ERROR, WAITING, ChangeBatch, RunEvent
from rltop.ingest.fstype import network_filesystem
from rltop.ingest.native import ChangeSignal, NativeObserver, failure_reason
from rltop.ingest.tracker import STALL_AFTER, Tracker

DEFAULT_POLL = 1.0  # seconds between polls in polling mode
NATIVE_SWEEP = 5.0  # seconds between safety sweeps in native mode
COALESCE = 0.02  # seconds to let a burst of file events finish before reading
MIN_RESCAN = 0.25  # polling lists the runs at most this often (directory walks cost more)
FLUSH_POINTS = 200_000  # a batch this big goes out at once (progressive first load)
NATIVE, POLLING = "native", "polling"


class Watcher:
    """Follows the runs under ``paths`` in its own thread; ``on_batch`` receives every change."""

    def __init__(
        self,
        paths: list[str],
        on_batch: Callable[[ChangeBatch], None],
        poll: float | None = None,
        tags: str | None = None,
        runs: str | None = None,
        stall_after: float = STALL_AFTER,
    ) -> None:
        if poll is not None and not poll > 0:
            raise ValueError(f"poll interval must be positive, got {poll}")
        self.paths = list(paths)
        self.on_batch = on_batch
        self.poll_interval = DEFAULT_POLL if poll is None else float(poll)
        self.mode = POLLING if poll is not None else NATIVE
        self._forced_poll = poll is not None
        self._tracker = Tracker(
            self.paths, compile_filter(tags, "--tags"), compile_filter(runs, "--runs"), stall_after
        )
        self.caught_up = threading.Event()  # set once everything already on disk was delivered
        self._signal = ChangeSignal()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._observer: NativeObserver | None = None
        self._initial = True
        self._reported_errors: set[str] = set()  # internal errors already said (each said once)

    # -- life cycle -----------------------------------------------------------------------------

    def start(self) -> None:
        """Start the thread; raises DiscoveryError at once for a path that does not exist."""
        if self._thread is not None:
            raise RuntimeError("Watcher.start() called twice")
        check_paths(self.paths)
        self._thread = threading.Thread(target=self._run, name="rltop-watcher", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 1.0) -> None:
        """Stop the thread and the observer; returns within about ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        self._stopping.set()
        self._signal.wake()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(max(0.0, (deadline - time.monotonic()) * 0.8))
        self._stop_observer(max(0.05, deadline - time.monotonic()))

    @property
    def running(self) -> bool:
        """The thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def _stop_observer(self, timeout: float) -> None:
        observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop(timeout)

    # -- the thread -----------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            self._start_watching()
            self._cycle(rescan=True, poll=False)
            if not self._tracker.runs:
                self._tracker.batch.events.append(RunEvent(WAITING, None, self._waiting_message()))
            self._flush(caught_up=True)
            self._initial = False
            self.caught_up.set()
            self._loop()
        except Exception as error:  # a bug outside one cycle: say so rather than go silent
            self._tracker.batch.events.append(
                RunEvent(
                    FILE_ERROR,
                    None,
                    f"watching stopped by an internal error ({type(error).__name__}: "
                    f"{error}); please report it",
                )
            )
            self._flush()
        finally:
            self._stop_observer(0.5)

    def _waiting_message(self) -> str:
        where = ", ".join(os.path.abspath(p) for p in self.paths)
        if self._tracker.ignored:
            return f"no run under {where} matches --runs yet; waiting for one"
        return f"no event files (events.out.tfevents.*) under {where} yet; waiting for them"

    def _start_watching(self) -> None:
        """Native events when they can be trusted, else polling (said once, with the reason)."""
        if self._forced_poll:
            return
        network = network_filesystem(self.paths)
        if network is not None:
            path, kind = network
            self._fall_back(
                f"{os.path.abspath(path)} is on {kind}, where file events miss writes made on other machines"
            )
            return
        observer = NativeObserver(self.paths, self._signal)
        try:
            observer.start()
        except Exception as error:  # OSError (limits), UnsupportedLibcError, ImportError...
            self._fall_back(failure_reason(error))
            return
        self._observer = observer
        if self._stopping.is_set():
            self._stop_observer(0.5)

    def _fall_back(self, reason: str) -> None:
        self.mode = POLLING
        message = (
            f"{reason}; polling every {self.poll_interval:g} s instead (--poll SECONDS sets the interval)"
        )
        self._tracker.batch.events.append(RunEvent(FALLBACK, None, message))

    def _loop(self) -> None:
        interval = self.poll_interval if self.mode == POLLING else NATIVE_SWEEP
        next_poll = time.monotonic() + interval
        next_rescan = next_poll
        while not self._stopping.is_set():
            woke = self._signal.wait(max(0.0, next_poll - time.monotonic()))
            if self._stopping.is_set():
                break
            if woke:
                self._stopping.wait(COALESCE)  # the rest of the burst arrives meanwhile
            files, tree_changed = self._signal.take()
            now = time.monotonic()
            poll = now >= next_poll
            if poll:
                next_poll = now + interval
            rescan = tree_changed or (poll and now >= next_rescan)
            if rescan:
                next_rescan = now + max(interval, MIN_RESCAN)
            if self._tracker.note_changed(files):
                rescan = True
            self._cycle(rescan=rescan, poll=poll)

    def _cycle(self, rescan: bool, poll: bool) -> None:
        """One round: list the runs again if needed, read what changed, check for stalls, deliver."""
        tracker = self._tracker
        try:
            if rescan:
                tracker.rescan(read_all=self.mode == NATIVE)
            if poll:
                tracker.mark_due(everything=self.mode == NATIVE)
                if self._observer is not None:
                    self._observer.rewatch()
            tracker.read_dirty(self._stopping.is_set, self._flush_if_big)
            tracker.check_stalls()
        except Exception as error:  # a bug must not end tailing; each distinct one is said once
            message = f"internal error while watching ({type(error).__name__}: {error}); still watching"
            if message not in self._reported_errors:
                tracker.batch.events.append(RunEvent(FILE_ERROR, None, message))
                self._reported_errors.add(message)
        self._flush()

    def _flush_if_big(self) -> None:
        if self._tracker.batch.point_count() >= FLUSH_POINTS or self._tracker.flush_due:
            self._flush()

    def _flush(self, caught_up: bool = False) -> None:
        """Hand the gathered changes to the consumer (nothing is sent once stopping)."""
        batch = self._tracker.take_batch()
        batch.initial = self._initial
        batch.caught_up = caught_up
        if batch.is_empty() or self._stopping.is_set():
            return
        self.on_batch(batch)
