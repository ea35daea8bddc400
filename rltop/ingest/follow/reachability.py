"""Whether a remote root answers, and when to ask it again: a warning once, quiet retries, "reachable again".

A store that stops answering (the network, the server, expired credentials) fails every request of
its root at once. Saying so on every poll would flood the screen, and asking every 10 s for an hour
costs requests for nothing: after the first failure the root is tried again after one poll
interval, then after twice as long each time, up to `BACKOFF_FACTOR` intervals (one minute at the
default 10 s). The first success after a failure is said once.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rltop.model.durations import format_duration

BACKOFF_FACTOR = 6  # the longest wait between two attempts, in poll intervals


class Reachability:
    """The reachability of one remote root, from the watcher's point of view."""

    def __init__(self, root: str, interval: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.root = root
        self.interval = interval
        self.clock = clock
        self.down = False
        self._delay = interval
        self._retry_at = 0.0

    @property
    def longest_wait(self) -> float:
        """The longest wait between two attempts while the root does not answer."""
        return self.interval * BACKOFF_FACTOR

    def failed(self, reason: str) -> str | None:
        """A request failed: the warning to show (the first failure only), and the next attempt is later."""
        now = self.clock()
        first = not self.down
        if first:
            self.down = True
            self._delay = self.interval
        else:
            self._delay = min(self._delay * 2, self.longest_wait)
        self._retry_at = now + self._delay
        if not first:
            return None
        return (
            f"{self.root}: cannot reach the storage ({reason}); retrying with back-off "
            f"({_seconds(self.interval)}, doubling up to {_seconds(self.longest_wait)}); "
            "the points read so far are kept"
        )

    def succeeded(self) -> str | None:
        """A cycle went through: "reachable again" when the root was down, else None."""
        if not self.down:
            return None
        self.down = False
        return f"{self.root}: reachable again; reading on"

    def wait(self) -> float:
        """Seconds until the next attempt may be made (0 when the root answers)."""
        return max(0.0, self._retry_at - self.clock()) if self.down else 0.0


def _seconds(value: float) -> str:
    return f"{value:.3g} s" if value < 60 else format_duration(value)
