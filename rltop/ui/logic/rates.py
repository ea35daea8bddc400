"""Points per second of each run, as the header shows them (``48 pts/s``), without Textual.

A rate is what a run logs now: the points its live deliveries brought over the last `RATE_WINDOW`
seconds. What a run's files already held when rltop found it (a run that appeared while the
dashboard was open, one re-read after its file was rewritten, every run of the first read) is its
history, not a rate: that delivery only starts the run's clock. Issue 28 saw a new run's history
counted as a burst of thousands of points per second, and the rate of all runs printed beside the
selected one.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

RATE_WINDOW = 10.0
"""Seconds of live deliveries a rate is averaged over."""
MIN_SPAN = 1.0
"""A run counted for less than this is averaged over this long (its first live delivery may come
a moment after it was found, and would read as a burst)."""


@dataclass
class _Track:
    start: float
    deliveries: deque[tuple[float, int]] = field(default_factory=deque)


class RunRates:
    """Live points per second per run (times in monotonic seconds, given by the caller)."""

    def __init__(self, window: float = RATE_WINDOW) -> None:
        self.window = window
        self._runs: dict[str, _Track] = {}

    def begin(self, run: str, now: float) -> None:
        """Count ``run``'s points from ``now`` on: what it held until now is its history."""
        self._runs[run] = _Track(now)

    def add(self, run: str, points: int, now: float) -> None:
        """A live delivery of ``points`` points of ``run``; the first delivery of a run that was
        not begun is its history (it begins the run instead)."""
        track = self._runs.get(run)
        if track is None:
            self.begin(run, now)
            return
        track.deliveries.append((now, points))
        self._drop_old(track, now)

    def forget(self, run: str) -> None:
        """``run`` went away (or starts over: its next delivery is history again)."""
        self._runs.pop(run, None)

    def rate(self, run: str | None, now: float) -> float:
        """Points per second ``run`` logged over the last `window` seconds (0 for an unknown run)."""
        track = self._runs.get(run) if run is not None else None
        if track is None:
            return 0.0
        self._drop_old(track, now)
        span = min(self.window, max(now - track.start, MIN_SPAN))
        return sum(points for _, points in track.deliveries) / span

    def _drop_old(self, track: _Track, now: float) -> None:
        deliveries = track.deliveries
        while deliveries and deliveries[0][0] <= now - self.window:
            deliveries.popleft()
