"""Failures of alert recipients, said once: a hook that always fails must not flood the log.

The first failure of each kind (exit status, timeout, connection refused…) of each recipient is
reported; later ones are only counted, and `summary` says how many there were when rltop ends. A
recipient that works again after a failure that was said says so once, so a log never ends on a
stale error; failures that were only counted are not followed by a "works again" line either (a hook
that hangs on one run's alerts and works on the others would otherwise say so at every timeout).
Reporting never raises: recipients report from their own threads, and a report that cannot be made
(stderr closed under a daemon) must not stop the thread that delivers the next alert.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable


class Problems:
    """Reports each recipient's failures once per kind; thread-safe (recipients run in threads)."""

    def __init__(self, report: Callable[[str], None]) -> None:
        self.report = report
        self._lock = threading.Lock()
        self._said: set[tuple[str, str]] = set()
        self._counts: dict[str, int] = {}
        self._failing: set[str] = set()  # recipients whose last said failure wants a "works again"

    def failed(self, who: str, kind: str, message: str, count: int = 1) -> None:
        """``who`` failed ``count`` alerts (``kind`` groups alike failures); the first of its kind is
        reported."""
        with self._lock:
            self._counts[who] = self._counts.get(who, 0) + count
            first = (who, kind) not in self._said
            self._said.add((who, kind))
            if first:
                self._failing.add(who)
        if first:
            self._say(f"{message} (said once; later failures of this kind are only counted)")

    def worked(self, who: str) -> None:
        """``who`` delivered an alert; said once after a failure."""
        with self._lock:
            if who not in self._failing:
                return
            self._failing.discard(who)
            count = self._counts.get(who, 0)
        self._say(f"{who} works again (after {count} failure{'s' * (count != 1)})")

    def _say(self, line: str) -> None:
        with contextlib.suppress(Exception):  # nowhere to say it: the alerts go on all the same
            self.report(line)

    def summary(self) -> list[str]:
        """One line per recipient that failed more than once: how often."""
        with self._lock:
            return [
                f"{who} failed {count} times in all"
                for who, count in sorted(self._counts.items())
                if count > 1
            ]
