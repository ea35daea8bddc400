"""`QuietLinuxDriver` (rltop.ui.input_driver): its input thread sleeps until there is input, and reads
the same keys as Textual's `LinuxDriver` through a pseudo-terminal: plain keys, escape sequences, and a
lone Escape, which is only a key once the pause after it has passed (the one reason to wake on a
timer). Closing wakes it at once. Each step waits for a state, never for a duration."""

from __future__ import annotations

import asyncio
import os
import threading
import time
import tty

import pytest
from textual import events
from textual.drivers.linux_driver import LinuxDriver

from rltop.ui.input_driver import QuietLinuxDriver

DEADLINE = 30.0
TYPED = ["a", "\x1b[A", "\x1b", "q"]  # a key, an arrow (one sequence), a lone Escape, another key


class _App:
    """What a driver needs of the app: somewhere to post the events it reads."""

    def __init__(self) -> None:
        self.keys: list[str] = []

    async def _post_message(self, message) -> bool:
        if isinstance(message, events.Key):
            self.keys.append(message.key)
        return True


def _raw_pty() -> tuple[int, int]:
    """A pseudo-terminal whose keys reach the reader one by one (as Textual sets its terminal)."""
    master, slave = os.openpty()
    tty.setraw(slave)
    return master, slave


async def _wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.005)


async def _read_keys(driver_class: type[LinuxDriver]) -> list[str]:
    app = _App()
    driver = driver_class(app, size=(80, 24))
    master, slave = _raw_pty()
    driver.fileno = slave
    thread = threading.Thread(target=driver.run_input_thread, daemon=True)
    thread.start()
    try:
        for index, typed in enumerate(TYPED):
            if isinstance(driver, QuietLinuxDriver):  # between keys it sleeps without a timeout
                await _wait_for(lambda i=index: driver.last_wait is None and len(app.keys) == i, "sleep")
            os.write(master, typed.encode())
            await _wait_for(lambda i=index: len(app.keys) > i, f"the key typed as {typed!r}")
        driver.exit_event.set()
        await _wait_for(lambda: not thread.is_alive(), "the input thread to end")
    finally:
        driver.exit_event.set()
        os.close(master)
        os.close(slave)
        driver.close()
    return app.keys


@pytest.mark.parametrize("driver_class", [QuietLinuxDriver, LinuxDriver], ids=["quiet", "textual"])
def test_the_input_thread_reads_every_key_and_ends_when_asked(driver_class):
    # The quiet driver sleeps without a timeout before each key (checked in `_read_keys`): the lone
    # Escape still comes through only because, once read, the wait became the parser's pause.
    assert asyncio.run(_read_keys(driver_class)) == ["a", "up", "escape", "q"]
