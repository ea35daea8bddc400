"""Commands run on alerts (``--on-alert CMD``, ``notify-send``): in the background, with a timeout.

Each call gets its own thread, which starts the process, writes the payload to its stdin and waits
for it; the caller (the watcher loop, the dashboard's UI thread) only starts that thread, so a slow
hook never delays the next alert, nor the screen. A call that outlives the timeout is stopped
(SIGTERM to its process group, SIGKILL a second later). Output never reaches rltop's terminal:
stdout is discarded, the end of stderr is quoted when the command fails. Failures go to `Problems`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence

from rltop import inherited_environment
from rltop.alerts.problems import Problems

MAX_RUNNING = 16
"""Calls of one command running at once; an alert beyond that is dropped (and that is said)."""
KILL_GRACE = 1.0  # seconds between SIGTERM and SIGKILL of a command that timed out
STDERR_QUOTE = 300  # characters of a failed command's stderr quoted in the report


class CommandRunner:
    """Runs one kind of command (``who`` names it in reports) in the background; thread-safe."""

    def __init__(self, who: str, timeout: float, problems: Problems, max_running: int = MAX_RUNNING) -> None:
        self.who = who
        self.timeout = timeout
        self.problems = problems
        self.max_running = max_running
        self._lock = threading.Lock()
        self._threads: set[threading.Thread] = set()
        self._processes: set[subprocess.Popen] = set()
        self._closed = False
        self._stopping = False
        self.started = 0  # calls started so far (tests and the exit summary)

    def start(
        self, command: str | Sequence[str], stdin: bytes = b"", env: Mapping[str, str] | None = None
    ) -> bool:
        """Run ``command`` (a string goes through the shell) without waiting; False if it was dropped."""
        with self._lock:
            if self._closed:
                return False
            if len(self._threads) >= self.max_running:
                busy = len(self._threads)
                dropped = True
            else:
                dropped = False
                thread = threading.Thread(
                    target=self._run,
                    args=(command, stdin, dict(env or {})),
                    name=f"rltop-{self.who}",
                    daemon=True,
                )
                self._threads.add(thread)
                self.started += 1
        if dropped:
            self.problems.failed(
                self.who, "busy", f"{self.who}: {busy} calls are still running; an alert was not passed on"
            )
            return False
        thread.start()
        return True

    @property
    def running(self) -> int:
        """Calls still running."""
        with self._lock:
            return len(self._threads)

    def close(self, grace: float = 2.0) -> None:
        """Start nothing more; give running calls ``grace`` seconds, then stop them."""
        with self._lock:
            self._closed = True
            threads = list(self._threads)
        deadline = time.monotonic() + grace
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        with self._lock:
            self._stopping = True  # a call that registers its process from now on stops it itself
            processes = list(self._processes)
        for process in processes:
            _stop_group(process)
        for thread in threads:
            thread.join(KILL_GRACE + 0.5)

    def _run(self, command: str | Sequence[str], stdin: bytes, env: dict[str, str]) -> None:
        try:
            self._call(command, stdin, env)
        finally:
            with self._lock:
                self._threads.discard(threading.current_thread())

    def _call(self, command: str | Sequence[str], stdin: bytes, env: dict[str, str]) -> None:
        with tempfile.TemporaryFile() as errors:
            try:
                process = subprocess.Popen(
                    command,
                    shell=isinstance(command, str),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=errors,
                    env={**inherited_environment(), **env},
                    start_new_session=True,  # its own process group: a timeout stops its children too
                )
            except OSError as error:
                reason = error.strerror or error
                self.problems.failed(self.who, "start", f"{self.who} could not start: {reason}")
                return
            with self._lock:
                self._processes.add(process)
                late = self._stopping
            if late:
                _stop_group(process)
            try:
                process.communicate(stdin, timeout=self.timeout)
            except subprocess.TimeoutExpired:
                _stop_group(process)
                self.problems.failed(
                    self.who,
                    "timeout",
                    f"{self.who} ran longer than {self.timeout:g} s and was stopped (--hook-timeout SECONDS)",
                )
                return
            finally:
                with self._lock:
                    self._processes.discard(process)
            code = process.returncode
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


def _stop_group(process: subprocess.Popen) -> None:
    """SIGTERM to the process group, SIGKILL if it is still there a moment later."""
    for sig, wait in ((signal.SIGTERM, KILL_GRACE), (signal.SIGKILL, KILL_GRACE)):
        if process.poll() is not None:
            return
        try:
            os.killpg(process.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            process.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _last_line(data: bytes) -> str:
    """The last non-empty line of a command's stderr, shortened."""
    lines = [line for line in data.decode("utf-8", "replace").splitlines() if line.strip()]
    if not lines:
        return ""
    line = lines[-1].strip()
    return line if len(line) <= STDERR_QUOTE else line[: STDERR_QUOTE - 1] + "…"
