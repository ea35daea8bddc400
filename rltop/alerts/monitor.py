"""The store and the verdicts of a consumer without a screen (``rltop watch``).

It applies the watcher's batches with `apply_batch` and judges the runs that changed with the same
`HealthEngine` the dashboard uses, on the consumer's own thread, exactly as the dashboard's session
does: a removed or reloaded run starts over, and every run is judged again now and then so the
stall rule, which depends on the clock, sees time pass.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rltop.health.engine import HealthEngine, RunHealth
from rltop.ingest.feed import RELOADED, REMOVED, ChangeBatch, apply_batch
from rltop.model.run import Store


class Monitor:
    """Store + health engine fed by `ChangeBatch` values; `judge` makes the verdicts."""

    def __init__(self, engine: HealthEngine | None = None, clock: Callable[[], float] = time.time) -> None:
        self.store = Store()
        self.engine = engine if engine is not None else HealthEngine()
        self.clock = clock
        self.health: dict[str, RunHealth] = {}
        self.caught_up = False  # everything on disk at start was read
        self._dirty: set[str] = set()

    def apply(self, batch: ChangeBatch) -> None:
        """Apply one watcher batch; the runs it touched are judged at the next `judge`."""
        for event in batch.events:
            if event.kind in (REMOVED, RELOADED) and event.run is not None:
                self.health.pop(event.run, None)
                self.engine.forget(event.run)
        for run, _tag, _first in apply_batch(self.store, batch):
            self._dirty.add(run)
        self._dirty.update(batch.changed_runs)
        self._dirty.update(e.run for e in batch.events if e.run is not None and e.kind != REMOVED)
        if batch.caught_up:
            self.caught_up = True

    def judge(self, everything: bool = False) -> list[str]:
        """Judge the runs that changed (all of them with ``everything``); return their names."""
        names = sorted(self.store.runs) if everything else sorted(self._dirty & set(self.store.runs))
        self._dirty.clear()
        now = self.clock()
        for name in names:
            self.health[name] = self.engine.assess(self.store.runs[name], now)
        return names
