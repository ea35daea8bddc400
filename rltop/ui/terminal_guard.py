"""Notice that the dashboard's terminal went away without a SIGHUP, and end the dashboard cleanly.

When a terminal goes away and no SIGHUP comes (``su``/``runuser`` sessions, a dropped SSH session
whose pty stays open, a killed terminal emulator whose child outlives it), every read of the tty
returns end-of-file at once and every write fails with EIO. Textual's input thread then loops on
the end-of-file and spins a core forever (Textualize/textual#6690, still open upstream).

`TerminalGuard` watches from a thread of its own: it sleeps in ``poll()`` on the terminal's input
with no event asked for, so only a hang-up, an error or a closed descriptor wakes it (at once:
typing does not), and once a second it also tries a zero-byte write to the output side (a no-op
on a live terminal; it fails when the output is gone but the input is not). Either means the
terminal is gone. It then points the output at /dev/null (so that the app's last writes neither
fail nor block), asks the app to exit, and ends the process itself if the exit does not complete.
The caller prints `TerminalGuard.reason` as a one-line note. (Checking once a second only, the
dashboard noticed a lost terminal up to a second late, and about 6 s late under load, issue 28.)
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import sys
import threading
from collections.abc import Callable

# Seconds between write checks (a zero-byte write: microseconds, but each wake-up of a Python
# thread costs more): at 4 a second the guard took 0.07 % of a core, a seventh of the idle budget
# of 200 runs. A hang-up on the input side wakes the guard at once, whatever this says.
CHECK_EVERY = 1.0
FORCE_EXIT_AFTER = 5.0  # seconds the app gets to exit by itself before the process is ended
_DEAD_WRITE = (errno.EIO, errno.ENXIO, errno.EBADF, errno.EPIPE)


def terminal_gone(input_fd: int, output_fd: int) -> str | None:
    """Why the terminal on ``input_fd``/``output_fd`` is unusable, or None while it works."""
    poller = select.poll()
    poller.register(input_fd, select.POLLIN | select.POLLPRI)
    for _, flags in poller.poll(0):
        if flags & select.POLLNVAL:
            return "the terminal's input was closed"
        if flags & (select.POLLHUP | select.POLLERR):
            return "the terminal hung up (reads return end of file)"
    try:
        os.write(output_fd, b"")
    except OSError as error:
        if error.errno in _DEAD_WRITE:
            return f"writing to the terminal fails ({error.strerror})"
    return None


class TerminalGuard:
    """Watches the terminal while ``request_exit`` can still end the app (start, then stop)."""

    def __init__(
        self,
        request_exit: Callable[[], None],
        input_fd: int | None = None,
        output_fd: int | None = None,
        force_exit: Callable[[int], None] = os._exit,
    ) -> None:
        self._request_exit = request_exit
        self._input_fd = sys.__stdin__.fileno() if input_fd is None else input_fd
        # Textual draws on stderr (its LinuxDriver writes to sys.__stderr__).
        self._output_fd = sys.__stderr__.fileno() if output_fd is None else output_fd
        self._force_exit = force_exit
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None
        self._note_fd: int | None = None
        self.reason: str | None = None  # set once the terminal is found gone

    @property
    def lost(self) -> bool:
        """The terminal went away while the guard watched it."""
        return self.reason is not None

    def start(self) -> None:
        """Start watching (a daemon thread)."""
        self._thread = threading.Thread(target=self._watch, name="rltop-terminal-guard", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop watching (the app has exited); returns at once."""
        self._stopped.set()

    def note(self, text: str) -> None:
        """Write one line where stderr went before the guard silenced the terminal (best effort)."""
        fd = self._output_fd if self._note_fd is None else self._note_fd
        with contextlib.suppress(OSError):
            os.set_blocking(fd, False)  # a full pipe must not hold the exit up
            os.write(fd, (text + "\n").encode("utf-8", "backslashreplace"))

    def _watch(self) -> None:
        hang_up = select.poll()
        hang_up.register(self._input_fd, 0)  # no event asked: a hang-up, an error or POLLNVAL only
        while not self._stopped.is_set():
            woken = hang_up.poll(int(CHECK_EVERY * 1000))
            if self._stopped.is_set():
                return
            reason = terminal_gone(self._input_fd, self._output_fd)
            if reason is not None:
                self._on_lost(reason)
                return
            if woken and self._stopped.wait(CHECK_EVERY):
                return  # an event that is no hang-up after all: never spin on it

    def _on_lost(self, reason: str) -> None:
        self.reason = reason
        with contextlib.suppress(OSError):
            self._note_fd = os.dup(self._output_fd)
            null = os.open(os.devnull, os.O_WRONLY)
            for fd in {self._output_fd, sys.__stdout__.fileno()}:
                os.dup2(null, fd)  # the app's last frames go nowhere instead of failing
            os.close(null)
        done = threading.Thread(target=self._request_exit, name="rltop-exit-request", daemon=True)
        done.start()
        if not self._stopped.wait(FORCE_EXIT_AFTER):
            # The app could not finish (its output thread died on the first failed write and its
            # queue filled up): end the process, which has nothing left to show anyway.
            self.note(f"rltop: {reason}; the dashboard was ended")
            self._force_exit(0)
