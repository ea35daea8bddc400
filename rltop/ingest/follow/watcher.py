"""Live tailing: threads that follow every source file under the watched paths and feed consumers.

How it works:

- **native mode** (default for local paths): watchdog's observer (inotify on Linux) says which
  source file grew or that the tree changed shape (a new checkpoint folder, a new event file); the
  watcher waits ``COALESCE`` seconds after the first event of a burst, then reads every reported
  file once, from its offset. A sweep every ``NATIVE_SWEEP`` seconds lists the runs again and
  reads every file, which catches what inotify can miss silently (a watch limit hit below the
  root, an overflowed queue, a symlinked directory).
- **polling mode** (``poll=SECONDS``, or automatic): every interval, read the files that are
  still being written (an idle read costs one open and fstat), list the runs again, and now and
  then read the old files too. Chosen automatically, and said once, when the paths are on a
  network file system (inotify never sees other machines' writes) or the observer cannot start.
- **remote paths** (``s3://…`` and every other fsspec URL) are always polled, every
  `DEFAULT_REMOTE_POLL` seconds unless ``poll`` says otherwise: a poll stats the active files (one
  metadata request each; an unchanged file downloads nothing) and reads only what was appended; the
  prefix is listed again every `REMOTE_RELIST_POLLS` polls (new runs, new files). Each remote root
  has its own thread, so a store that stops answering never holds up the others: it is said once,
  tried again with back-off (`rltop.ingest.follow.reachability`), and "reachable again" is said once.

Consumers get `ChangeBatch` values through ``on_batch``, called on a watcher thread; they keep
their own `Store` and apply batches with `apply_batch` in their own thread (the dashboard posts
the batch as a message, ``rltop tail`` hands it over through a queue). The watcher never shares a
mutable store and never waits for the consumer.

A consumer that passes ``on_progress`` (the dashboard) gets the first read in as few batches as
possible: the points are held and delivered once the first read is over, or every
`FIRST_READ_DELIVER_EVERY` seconds for a log that takes longer, and ``on_progress`` says how far
the read got in between. Each delivery is appended to every series, so one delivery instead of one
per 200k points saves the growing and copying of each series (0.2 CPU-s of a 6M-point log).
Without it (``rltop tail``, ``rltop watch``) batches go out every `FLUSH_POINTS` points.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from rltop.ingest import sources, storage
from rltop.ingest.feed import FALLBACK, FILE_ERROR, REACHABLE, WAITING, ChangeBatch, RunEvent
from rltop.ingest.follow.discovery import check_paths, compile_filter, root_labels
from rltop.ingest.follow.fstype import network_filesystem
from rltop.ingest.follow.native import ChangeSignal, NativeObserver, failure_reason
from rltop.ingest.follow.reachability import Reachability
from rltop.ingest.follow.run_tracker import RunTracker
from rltop.ingest.storage import DEFAULT_REMOTE_POLL, Unreachable

DEFAULT_POLL = 1.0  # seconds between polls in polling mode
NATIVE_SWEEP = 5.0  # seconds between safety sweeps in native mode (at least)
MAX_NATIVE_SWEEP = 60.0  # ... and at most, when a sweep of many runs costs more (200 runs: 60 ms)
SWEEP_BUDGET = 0.001  # share of a core the safety sweeps may take (hundreds of runs; the idle goal is 0.5 %)
COALESCE = 0.02  # seconds to let a burst of file events finish before reading
MIN_RESCAN = 0.25  # polling lists the runs at most this often (directory walks cost more)
REMOTE_RELIST_POLLS = 3  # a remote prefix is listed again every this many polls (LIST requests cost)
FLUSH_POINTS = 200_000  # a batch this big goes out at once (progressive first load)
FIRST_READ_DELIVER_EVERY = 4.0  # seconds a first read may hold its points (with ``on_progress``)
NATIVE, POLLING = "native", "polling"


class Watcher:
    """Follows the runs under ``paths`` in background threads; ``on_batch`` receives every change.

    Local paths share one thread (native file events or polling); each remote URL has its own.
    """

    def __init__(
        self,
        paths: list[str],
        on_batch: Callable[[ChangeBatch], None],
        poll: float | None = None,
        tags: str | None = None,
        runs: str | None = None,
        on_progress: Callable[[int, int], None] | None = None,
    ) -> None:
        if poll is not None and not poll > 0:
            raise ValueError(f"poll interval must be positive, got {poll}")
        self.paths = list(paths)
        self.on_batch = on_batch
        self.on_progress = on_progress  # (points read and held, runs found) during a first read
        tag_filter, run_filter = compile_filter(tags, "--tags"), compile_filter(runs, "--runs")
        labels = dict(zip(self.paths, root_labels(self.paths)))
        local = [path for path in self.paths if not storage.is_url(path)]
        groups = [local] if local else []
        groups += [[path] for path in self.paths if storage.is_url(path)]
        self._followers = [
            _Follower(self, group, [labels[p] for p in group], poll, RunTracker(
                group, tag_filter, run_filter, labels=[labels[p] for p in group]))
            for group in groups
        ]  # fmt: skip
        self.caught_up = threading.Event()  # set once everything already on disk was delivered
        self._lock = threading.Lock()
        self._first_reads = len(self._followers)  # followers still doing their first read
        self._held = [0] * len(self._followers)  # each follower's points read and not delivered yet
        self._found = [0] * len(self._followers)  # each follower's runs found so far
        self._started = False

    # -- life cycle -----------------------------------------------------------------------------

    def start(self) -> None:
        """Start the threads; raises DiscoveryError at once for a path that does not exist."""
        if self._started:
            raise RuntimeError("Watcher.start() called twice")
        check_paths(self.paths)
        self._started = True
        for follower in self._followers:
            follower.start()

    def stop(self, timeout: float = 1.0) -> None:
        """Stop every thread and observer; returns within about ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        for follower in self._followers:
            follower.stopping.set()
            follower.signal.wake()
        for follower in self._followers:
            follower.stop(max(0.05, deadline - time.monotonic()))

    @property
    def running(self) -> bool:
        """Every thread is alive."""
        return self._started and all(follower.running for follower in self._followers)

    @property
    def mode(self) -> str:
        """``native`` when the local paths are followed through file events, else ``polling``."""
        return self._followers[0].mode if self._followers else POLLING

    @property
    def poll_interval(self) -> float:
        """Seconds between polls of the first group of paths (the local ones, if any)."""
        return self._followers[0].poll_interval if self._followers else DEFAULT_POLL

    def deliver(self, batch: ChangeBatch, first_read_done: bool, follower: _Follower) -> None:
        """Hand one follower's batch to the consumer; the last first read to finish says "caught up"."""
        # Split and joined here, in the follower's thread and outside the lock (a 6M-point first
        # read joins 144 MB): the consumer's thread then only adopts each tag's columns.
        batch.settle(join=True)
        with self._lock:
            if first_read_done:
                self._first_reads -= 1
            batch.caught_up = first_read_done and self._first_reads == 0
            index = self._followers.index(follower)
            told = self._held[index] != 0
            self._held[index] = 0  # this batch carries them
            if self.on_progress is not None:
                # The progress goes with the batch, so a consumer never counts these points twice.
                batch.held = self._progress()
            if not batch.is_empty():
                self.on_batch(batch)
            elif told and self.on_progress is not None:  # (its held points were dropped: a reload)
                self.on_progress(*batch.held)
            if batch.caught_up:
                self.caught_up.set()

    def progress(self, follower: _Follower, points: int, runs: int) -> None:
        """A follower's first read holds ``points`` points and has found ``runs`` runs."""
        with self._lock:
            index = self._followers.index(follower)
            self._held[index], self._found[index] = points, runs
            if self.on_progress is not None:
                self.on_progress(*self._progress())

    def _progress(self) -> tuple[int, int]:
        """(points held by every first read, runs found by every follower)."""
        return sum(self._held), sum(self._found)


class _Follower:
    """One thread following some roots of one storage: all the local ones, or one remote root."""

    def __init__(self, owner: Watcher, paths: list[str], labels: list[str], poll: float | None,
                 tracker: RunTracker) -> None:  # fmt: skip
        self.owner = owner
        self.paths = paths
        self.remote = any(storage.is_remote(path) for path in paths)
        if self.remote:
            self.poll_interval = DEFAULT_REMOTE_POLL if poll is None else float(poll)
            self.mode = POLLING
        else:
            self.poll_interval = DEFAULT_POLL if poll is None else float(poll)
            self.mode = POLLING if poll is not None else NATIVE
        self._forced_poll = poll is not None or self.remote
        self._tracker = tracker
        self.reachability = Reachability(", ".join(paths), self.poll_interval)
        self.signal = ChangeSignal()
        self.stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._observer: NativeObserver | None = None
        self._initial = True
        self._reported_errors: set[str] = set()  # internal errors already said (each said once)
        self._delivered_at = time.monotonic()  # when the last batch went out (the first read's holds)
        self._progress_told = 0  # points held when the progress was last told

    def start(self) -> None:
        """Start the thread."""
        self._thread = threading.Thread(target=self._run, name="rltop-watcher", daemon=True)
        self._thread.start()

    def stop(self, timeout: float) -> None:
        """Stop the thread and the observer (the caller set ``stopping`` already)."""
        deadline = time.monotonic() + timeout
        self.stopping.set()
        self.signal.wake()
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
            self._delivered_at = time.monotonic()  # the first read's hold counts from here
            self._cycle(rescan=True, poll=False)
            if not self._tracker.runs and not self.reachability.down:
                self._tracker.batch.events.append(RunEvent(WAITING, None, self._waiting_message()))
            self._flush(first_read_done=True)
            self._initial = False
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
            self._flush(first_read_done=self._initial)  # the other roots' consumers must not wait on it
        finally:
            self._stop_observer(0.5)

    def _waiting_message(self) -> str:
        where = ", ".join(storage.absolute(p) for p in self.paths)
        if self._tracker.ignored:
            return f"no run under {where} matches --runs yet; waiting for one"
        return f"no {sources.what_is_read()} under {where} yet; waiting for them"

    def _start_watching(self) -> None:
        """Native events when they can be trusted, else polling (said once, with the reason)."""
        if self._forced_poll:
            return
        network = network_filesystem(self.paths)
        if network is not None:
            path, kind = network
            self._fall_back(
                f"{storage.absolute(path)} is on {kind}, where file events miss writes made on other machines"
            )
            return
        observer = NativeObserver(self.paths, self.signal)
        try:
            observer.start()
        except Exception as error:  # OSError (limits), UnsupportedLibcError, ImportError...
            self._fall_back(failure_reason(error))
            return
        self._observer = observer
        if self.stopping.is_set():
            self._stop_observer(0.5)

    def _fall_back(self, reason: str) -> None:
        self.mode = POLLING
        message = (
            f"{reason}; polling every {self.poll_interval:g} s instead (--poll SECONDS sets the interval)"
        )
        self._tracker.batch.events.append(RunEvent(FALLBACK, None, message))

    def _loop(self) -> None:
        interval = self.poll_interval if self.mode == POLLING else NATIVE_SWEEP
        relist = interval * REMOTE_RELIST_POLLS if self.remote else max(interval, MIN_RESCAN)
        next_poll = time.monotonic() + interval
        next_rescan = next_poll if not self.remote else time.monotonic() + relist
        while not self.stopping.is_set():
            wake_at = max(next_poll, time.monotonic() + self.reachability.wait())
            woke = self.signal.wait(max(0.0, wake_at - time.monotonic()))
            if self.stopping.is_set():
                break
            if woke:
                self.stopping.wait(COALESCE)  # the rest of the burst arrives meanwhile
            files, tree_changed = self.signal.take()
            now = time.monotonic()
            poll = now >= next_poll
            if poll:
                next_poll = now + interval
            rescan = tree_changed or (poll and now >= next_rescan) or self.reachability.down
            if rescan:
                next_rescan = now + relist
            if self._tracker.note_changed(files) or self._tracker.rescan_due:
                rescan = True
            started = time.thread_time()
            self._cycle(rescan=rescan, poll=poll)
            if poll and self.mode == NATIVE and not self.remote:
                # The sweep only backs up the native events: with hundreds of runs it is spaced
                # out so that it stays within SWEEP_BUDGET of a core.
                cost = time.thread_time() - started
                interval = min(max(NATIVE_SWEEP, cost / SWEEP_BUDGET), MAX_NATIVE_SWEEP)
                next_poll = now + interval
                if rescan:  # only a sweep that listed pushes the next listing back (else a sweep
                    # more often than MIN_RESCAN would push it back forever and never list)
                    next_rescan = now + max(interval, MIN_RESCAN)

    def _cycle(self, rescan: bool, poll: bool) -> None:
        """One round: list the runs again if needed, read what changed, deliver."""
        tracker = self._tracker
        try:
            if rescan:
                tracker.rescan(read_all=self.mode == NATIVE)
            if poll:
                tracker.mark_due(everything=self.mode == NATIVE)
                if self._observer is not None:
                    self._observer.rewatch()
            tracker.read_dirty(self.stopping.is_set, self._flush_if_big)
            tracker.scan_completions(force=rescan)
            if tracker.rescan_due:  # a file vanished: the listing says whether it or its run went
                tracker.rescan(read_all=False)
        except Unreachable as error:  # the store did not answer: said once, then retried later
            warning = self.reachability.failed(str(error))
            if warning is not None:
                tracker.batch.events.append(RunEvent(FILE_ERROR, None, warning))
        except Exception as error:  # a bug must not end tailing; each distinct one is said once
            message = f"internal error while watching ({type(error).__name__}: {error}); still watching"
            if message not in self._reported_errors:
                tracker.batch.events.append(RunEvent(FILE_ERROR, None, message))
                self._reported_errors.add(message)
        else:
            back = self.reachability.succeeded()
            if back is not None:
                tracker.batch.events.append(RunEvent(REACHABLE, None, back))
        self._flush()

    def _flush_if_big(self) -> None:
        tracker = self._tracker
        points = tracker.batch.point_count()
        if tracker.flush_due:
            self._flush()
        elif self._holds_first_read():
            # Told every FLUSH_POINTS points, and at once when a reload dropped some.
            if (
                points >= self._progress_told + FLUSH_POINTS or points < self._progress_told
            ) and not self.stopping.is_set():
                self._progress_told = points
                self.owner.progress(self, points, len(tracker.runs))
        elif points >= FLUSH_POINTS:
            self._flush()

    def _holds_first_read(self) -> bool:
        """The first read keeps its points for one delivery (a consumer that follows its progress)."""
        return (
            self._initial
            and self.owner.on_progress is not None
            and time.monotonic() - self._delivered_at < FIRST_READ_DELIVER_EVERY
        )

    def _flush(self, first_read_done: bool = False) -> None:
        """Hand the gathered changes to the consumer (nothing is sent once stopping)."""
        batch = self._tracker.take_batch()
        batch.initial = self._initial
        batch.live = not self._initial
        self._delivered_at, self._progress_told = time.monotonic(), 0
        if self.stopping.is_set():
            return
        self.owner.deliver(batch, first_read_done, self)
