"""The store, the health verdicts, the changed runs and the stall schedule of one live consumer.

A consumer applies the watcher's batches (`apply`) and judges what changed (`judge`); a run removed
or reloaded starts over (its verdict and the engine's state of it are forgotten); a run whose stall
verdict can change with the clock alone is due again at the time the engine names (`stale_runs`),
so a consumer never re-judges every run on a timer to see a stall coming.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from rltop.health.engine import HealthEngine, RunHealth
from rltop.ingest.feed import RELOADED, ChangeBatch, apply_batch
from rltop.model.run import Store


@dataclass
class Applied:
    """What one batch did to the store: the runs it touched, and the ones that went away or were
    reloaded (their derived state must be dropped by the consumer too)."""

    touched: set[str] = field(default_factory=set)
    gone: set[str] = field(default_factory=set)


class JudgedStore:
    """A `Store` fed by `ChangeBatch` values and judged by one `HealthEngine`."""

    def __init__(
        self,
        store: Store | None = None,
        engine: HealthEngine | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store if store is not None else Store()
        self.engine = engine if engine is not None else HealthEngine()
        self.clock = clock
        self.health: dict[str, RunHealth] = {}
        self.caught_up = False  # everything on disk at start was read
        self.dirty: set[str] = set(self.store.runs)
        self._stall_due: dict[str, float] = {}

    def apply(self, batch: ChangeBatch, consume: bool = False) -> Applied:
        """Apply one watcher batch (``consume``: the batch is this consumer's alone, its columns are
        kept rather than copied); the runs it touched are judged at the next `judge`."""
        before = set(self.store.runs)
        applied = Applied()
        for run, _tag, _first in apply_batch(self.store, batch, consume=consume):
            applied.touched.add(run)
        applied.touched.update(name for name in batch.changed_runs if name in self.store.runs)
        applied.touched.update(name for name in batch.completions if name in self.store.runs)
        applied.touched.update(
            event.run for event in batch.events if event.run is not None and event.run in self.store.runs
        )
        reloaded = {event.run for event in batch.events if event.kind == RELOADED and event.run is not None}
        applied.gone = (before - set(self.store.runs)) | reloaded
        for name in applied.gone:
            self.forget(name)
        self.dirty.update(applied.touched)
        if batch.caught_up:
            self.caught_up = True
        return applied

    def forget(self, name: str) -> None:
        """Drop a run's verdict and the engine's state of it (removed, or read again from scratch)."""
        self.health.pop(name, None)
        self._stall_due.pop(name, None)
        self.engine.forget(name)

    def judge(self, names: set[str] | None = None) -> dict[str, RunHealth | None]:
        """Judge the given runs (default: the changed ones) now; return each one's previous verdict."""
        wanted = self.dirty if names is None else names
        now = self.clock()
        previous: dict[str, RunHealth | None] = {}
        for name in sorted(wanted):
            run = self.store.runs.get(name)
            if run is None:
                continue
            previous[name] = self.health.get(name)
            self.health[name], due = self.engine.assess_with_stall_due(run, now)
            if due is None:
                self._stall_due.pop(name, None)
            else:
                self._stall_due[name] = due
        if names is None:
            self.dirty = set()
        else:
            self.dirty -= names
        return previous

    def stale_runs(self) -> set[str]:
        """Runs whose stall verdict may have changed with the clock alone since they were judged."""
        now = self.clock()
        return {name for name, due in self._stall_due.items() if due <= now and name in self.store.runs}
