"""Textual's terminal driver, with an input thread that sleeps until there is input.

Goal: the dashboard's CPU while a run logs (issue 28: at most 2 % of a core). Textual's
`LinuxDriver` reads the keyboard in a thread that wakes ten times a second to see whether the
app is closing (``select(0.1)`` in a loop): 0.2 % of a core measured per thread at 100x30, a
tenth of the whole budget, for nothing. `QuietLinuxDriver` keeps Textual's loop (the same
parser, reads and events) but sleeps without a timeout; the two reasons to wake that Textual's
timeout served still wake it:

- the app closing: `exit_event.set()` also writes a byte to a pipe the thread waits on;
- a key that is only complete after a pause (a lone Escape is told from an escape sequence by
  the 0.1 s that follows it): while the parser waits for that pause, the thread sleeps only until
  its end, as Textual's would.

A hang-up wakes it as any input does (the terminal guard, `rltop.ui.terminal_guard`, ends the app).
Switch: `ENABLED` (``RLTOP_PLAIN_INPUT=1`` in the environment, read at import, keeps Textual's own
driver). tests/app/test_input_driver.py drives both through a pseudo-terminal.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import threading
from codecs import getincrementaldecoder

from textual._time import get_time
from textual._xterm_parser import XTermParser
from textual.drivers.linux_driver import LinuxDriver

ENABLED = os.environ.get("RLTOP_PLAIN_INPUT", "") != "1"


class _WakingEvent(threading.Event):
    """An event whose `set` also writes a byte to ``wake_fd`` (waking a thread in ``select``)."""

    def __init__(self, wake_fd: int) -> None:
        super().__init__()
        self._wake_fd = wake_fd

    def set(self) -> None:
        super().set()
        with contextlib.suppress(OSError):  # the pipe is full: the thread is being woken anyway
            os.write(self._wake_fd, b"x")


class QuietLinuxDriver(LinuxDriver):
    """`LinuxDriver` whose input thread sleeps until input, the app's exit, or a parser timeout."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_read, False)
        os.set_blocking(self._wake_write, False)
        self.exit_event = _WakingEvent(self._wake_write)
        self.last_wait: float | None = None
        """The timeout of the input thread's last wait (None: until something happens)."""

    def run_input_thread(self) -> None:
        """Wait for input and dispatch events (Textual's loop, without its tenth-of-a-second wake-up)."""
        selector = selectors.SelectSelector()
        fileno = self.fileno
        selector.register(fileno, selectors.EVENT_READ)
        selector.register(self._wake_read, selectors.EVENT_READ)
        parser = XTermParser(self._debug)
        decode = getincrementaldecoder("utf-8")().decode

        def process(events: list) -> None:
            if any(key.fd == fileno for key, _ in events):
                data = decode(os.read(fileno, 1024 * 4))
                if data:
                    for event in parser.feed(data):
                        self.process_message(event)
                else:  # end of file: the terminal hung up (the terminal guard ends the app);
                    selector.unregister(fileno)  # reading on would spin (Textual's loop does)
            for event in parser.tick():
                self.process_message(event)

        self._drain_wake()  # (a byte left by an earlier exit: input stopped, then started again)
        try:
            while not self.exit_event.is_set():
                self.last_wait = wait = _wait(parser)
                process(selector.select(wait))
                self._drain_wake()
            # (Textual waits another 0.1 s here, with the terminal no longer registered: it reads
            # nothing, so the app closes without that wait.)
            for event in parser.tick():
                self.process_message(event)
        finally:
            selector.close()
            with contextlib.suppress(Exception):
                for _ in parser.feed(""):
                    pass

    def _drain_wake(self) -> None:
        with contextlib.suppress(OSError):  # (nothing to read: EAGAIN)
            while os.read(self._wake_read, 64):
                pass

    def close(self) -> None:
        """Perform cleanup (and close the wake-up pipe)."""
        super().close()
        for fd in (self._wake_read, self._wake_write):
            with contextlib.suppress(OSError):
                os.close(fd)


def _wait(parser: XTermParser) -> float | None:
    """How long to sleep: until the parser's pending timeout, else until something happens."""
    deadline = getattr(parser, "_timeout_time", None)  # (Textual's Parser: set while a key waits)
    return None if deadline is None else max(0.0, deadline - get_time())
