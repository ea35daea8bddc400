"""Commands run on alerts (``--on-alert CMD``, ``notify-send``): in the background, with a timeout.

The caller (the watcher loop, the dashboard's UI thread) only queues a call; worker threads start the
processes, write the payload to their stdin and wait for them. How calls are scheduled, so that a
hook that hangs on one run's alerts delays nothing but that run's later alerts:

* **One call per run at a time, in order.** A run's alerts reach the command in the order they
  happened (a ``recovery`` never overtakes its ``finding``); the next waits until the previous one
  ended (or was stopped by the timeout). Calls not tied to a run each go alone.
* **A bounded queue per run.** At most `QUEUE_PER_RUN` alerts of a run wait for its running call;
  beyond that the oldest waiting one is dropped (the newest says where the run is now), said once and
  counted in the summary at the end.
* **A global cap, shared in turn.** At most `MAX_RUNNING` processes of one command run at once; a
  free slot goes to the run that has waited longest for its turn (round-robin over the runs), so a
  command that hangs on every alert of one run holds one slot, never all of them.
* **A timeout.** A call that outlives it is stopped: SIGTERM to its process group (its children
  too), SIGKILL `KILL_GRACE` seconds later; the run's next call then starts.

Output never reaches rltop's terminal: stdout is discarded, the end of stderr is quoted when the
command fails. Failures (cannot start, exit status, signal, timeout, queue full) go to `Problems`,
said once per kind; no failure stops the workers or the other runs' calls.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import subprocess
import tempfile
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import IO

from rltop import inherited_environment
from rltop.alerts.problems import Problems
from rltop.alerts.settings import MAX_RUNNING, QUEUE_PER_RUN

KILL_GRACE = 1.0  # seconds between SIGTERM and SIGKILL of a command that timed out
STDERR_QUOTE = 300  # characters of a failed command's stderr quoted in the report

Command = str | Sequence[str]


@dataclass(frozen=True)
class _Call:
    command: Command
    stdin: bytes
    env: dict[str, str]
    lane: object  # the run's name, or a token of its own for a call tied to no run
    run: str | None


class CommandRunner:
    """Runs one kind of command (``who`` names it in reports) in the background; thread-safe.

    See the module docstring for the scheduling: one call per run at a time, a bounded queue per
    run, at most ``max_running`` processes in all, shared in turn between the runs.
    """

    def __init__(
        self,
        who: str,
        timeout: float,
        problems: Problems,
        max_running: int = MAX_RUNNING,
        queue_per_run: int = QUEUE_PER_RUN,
    ) -> None:
        self.who = who
        self.timeout = timeout
        self.problems = problems
        self.max_running = max(1, max_running)
        self.queue_per_run = max(1, queue_per_run)
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)  # a call ended (close waits for the last)
        self._waiting: dict[object, deque[_Call]] = {}  # lane -> its calls waiting, oldest first
        self._ready: deque[object] = deque()  # lanes with a call waiting and none running, in turn
        self._busy: set[object] = set()  # lanes with a call running
        self._workers: set[threading.Thread] = set()
        self._processes: set[subprocess.Popen] = set()
        self._lone = itertools.count()  # lanes of calls tied to no run
        self._closed = False
        self._stopping = False
        self.started = 0  # calls started so far (tests and the exit summary)
        self.dropped = 0  # calls dropped from a full queue, or left waiting at the end

    def start(
        self,
        command: Command,
        stdin: bytes = b"",
        env: Mapping[str, str] | None = None,
        run: str | None = None,
    ) -> bool:
        """Queue a call of ``command`` (a string goes through the shell) about ``run``; never waits.

        It starts once ``run``'s previous call has ended and a slot is free. False once closed.
        """
        lane: object = run if run is not None else ("lone", next(self._lone))
        call = _Call(command, stdin, dict(env or {}), lane, run)
        with self._lock:
            if self._closed:
                return False
            waiting = self._waiting.setdefault(lane, deque())
            full = len(waiting) >= self.queue_per_run
            if full:
                waiting.popleft()
                self.dropped += 1
            elif not waiting and lane not in self._busy:
                self._ready.append(lane)
            waiting.append(call)
            workers = self._hire_locked()
        if full:
            self.problems.failed(
                self.who,
                "queue",
                f"{self.who}: {self.queue_per_run} alerts of run {run} "
                "were waiting for its previous call to end; the oldest was dropped",
            )
        for worker in workers:
            worker.start()
        return True

    @property
    def running(self) -> int:
        """Calls not over yet: running, or waiting for their turn (tests wait for 0)."""
        with self._lock:
            return self._pending_locked()

    @property
    def waiting(self) -> int:
        """Calls waiting for their turn."""
        with self._lock:
            return sum(len(calls) for calls in self._waiting.values())

    def close(self, grace: float = 2.0) -> None:
        """Queue nothing more; give running and waiting calls ``grace`` seconds, then stop them."""
        with self._lock:
            self._closed = True
            self._changed.wait_for(lambda: self._pending_locked() == 0, timeout=max(0.0, grace))
            self._stopping = True  # a call that registers its process from now on stops it itself
            left = sum(len(calls) for calls in self._waiting.values())
            self.dropped += left
            self._waiting.clear()
            self._ready.clear()
            processes = list(self._processes)
            workers = list(self._workers)
        if left:
            self.problems.failed(
                self.who,
                "left waiting",
                f"{self.who}: {left} alert{'s' * (left != 1)} still "
                "waiting when rltop ended were not passed on",
                count=left,
            )
        _stop_groups(processes)
        for worker in workers:
            worker.join(KILL_GRACE + 0.5)

    # -- scheduling (under the lock) ----------------------------------------------------------------

    def _pending_locked(self) -> int:
        return len(self._busy) + sum(len(calls) for calls in self._waiting.values())

    def _hire_locked(self) -> list[threading.Thread]:
        """Workers to start (by the caller, outside the lock) for the lanes ready and the slots free."""
        hired = []
        while len(self._workers) < min(self.max_running, len(self._busy) + len(self._ready)):
            worker = threading.Thread(target=self._work, name=f"rltop-{self.who}", daemon=True)
            self._workers.add(worker)
            hired.append(worker)
        return hired

    def _next_locked(self) -> _Call | None:
        """The first call of the lane whose turn it is (that lane is busy from now), or None."""
        if self._stopping or not self._ready:
            return None
        lane = self._ready.popleft()
        waiting = self._waiting[lane]
        call = waiting.popleft()
        if not waiting:
            del self._waiting[lane]
        self._busy.add(lane)
        self.started += 1
        return call

    def _done_locked(self, lane: object) -> None:
        """``lane``'s call ended: its next call, if any, takes its turn after the lanes waiting now."""
        self._busy.discard(lane)
        if lane in self._waiting:
            self._ready.append(lane)
        self._changed.notify_all()

    def _work(self) -> None:
        """A worker: runs calls, one after another, while any lane is ready."""
        call: _Call | None = None
        while True:
            with self._lock:
                if call is not None:
                    self._done_locked(call.lane)
                call = self._next_locked()
                if call is None:
                    self._workers.discard(threading.current_thread())
                    return
                workers = self._hire_locked()  # a lane became ready while this one was busy
            for worker in workers:
                worker.start()
            try:
                self._call(call)
            except Exception as error:  # never a dead worker, never a run whose queue is stuck
                self.problems.failed(
                    self.who,
                    type(error).__name__,
                    f"{self.who} failed{_of(call.run)}: {type(error).__name__}: {error}",
                )

    # -- one call -----------------------------------------------------------------------------------

    def _call(self, call: _Call) -> None:
        with tempfile.TemporaryFile() as errors:
            try:
                process = subprocess.Popen(
                    call.command,
                    shell=isinstance(call.command, str),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=errors,
                    env={**inherited_environment(), **call.env},
                    start_new_session=True,  # its own process group: a timeout stops its children too
                )
            except (OSError, ValueError, TypeError) as error:  # missing, not executable, a NUL in env…
                reason = getattr(error, "strerror", None) or error
                self.problems.failed(
                    self.who, "start", f"{self.who} could not start{_of(call.run)}: {reason}"
                )
                return
            with self._lock:
                self._processes.add(process)
                late = self._stopping
            if late:
                _stop_group(process)
            try:
                process.communicate(call.stdin, timeout=self.timeout)
            except subprocess.TimeoutExpired:
                _stop_group(process)
                self.problems.failed(
                    self.who,
                    "timeout",
                    f"{self.who} ran longer than {self.timeout:g} s"
                    f"{_of(call.run)} and was stopped (--hook-timeout SECONDS)",
                )
                return
            finally:
                with self._lock:
                    self._processes.discard(process)
            self._judge(process.returncode, errors)

    def _judge(self, code: int, errors: IO[bytes]) -> None:
        """Say how the call ended (failures once per kind)."""
        if code == 0:
            self.problems.worked(self.who)
            return
        if self._stopping and code < 0:
            self.problems.failed(
                self.who, "ended", f"{self.who} was still running when rltop ended, and was stopped"
            )
            return
        errors.seek(0)
        quoted = _last_line(errors.read())
        how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
        said = f"{self.who} {how}" + (f": {quoted}" if quoted else "")
        self.problems.failed(self.who, f"exit {code}", said)


def _of(run: str | None) -> str:
    """`` (run NAME)`` for a report about a call tied to a run, else nothing."""
    return f" (run {run})" if run else ""


def _stop_group(process: subprocess.Popen) -> None:
    """SIGTERM to the process group, SIGKILL if it is still there a moment later."""
    _stop_groups([process])


def _stop_groups(processes: list[subprocess.Popen]) -> None:
    """SIGTERM to each process group, SIGKILL to those still there `KILL_GRACE` seconds later (one
    grace for all of them: sixteen hung hooks take a second to stop, not sixteen)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        signalled = []
        for process in processes:
            if process.poll() is not None:
                continue
            try:
                os.killpg(process.pid, sig)
            except (ProcessLookupError, PermissionError):
                continue
            signalled.append(process)
        deadline = time.monotonic() + KILL_GRACE
        for process in signalled:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(max(0.0, deadline - time.monotonic()))
        processes = [process for process in signalled if process.poll() is None]
        if not processes:
            return


def _last_line(data: bytes) -> str:
    """The last non-empty line of a command's stderr, shortened."""
    lines = [line for line in data.decode("utf-8", "replace").splitlines() if line.strip()]
    if not lines:
        return ""
    line = lines[-1].strip()
    return line if len(line) <= STDERR_QUOTE else line[: STDERR_QUOTE - 1] + "…"
