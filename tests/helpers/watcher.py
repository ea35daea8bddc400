"""Shared by the tests: what test_watcher.py used to define for itself and others."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from rltop.ingest.feed import ChangeBatch, apply_batch
from rltop.ingest.follow.watcher import Watcher
from rltop.ingest.sources.tfevents.tfrecord.writer import encode_event, frame_record, scalar_value
from rltop.model.run import Store

pytestmark = pytest.mark.filterwarnings("ignore:Callback with id:RuntimeWarning")


MODES = ["native", "polling"]


FAST_POLL = 0.05


def scalar_record(tag: str, step: int, value: float, wall: float = 1.7e9) -> bytes:
    """One TFRecord holding an Event with one simple_value, laid out as SummaryWriter does."""
    return frame_record(encode_event(wall + step, step, scalar_value(tag, value)))


def version_record() -> bytes:
    """The first record of every event file."""
    return frame_record(encode_event(1.7e9, 0, file_version="brain.Event:2"))


class EventLog:
    """An event file written point by point; remembers what it wrote per tag."""

    def __init__(self, directory: Path, stamp: int = 1700000000, run: str | None = None) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / f"events.out.tfevents.{stamp}.testhost"
        self.run = run if run is not None else directory.name
        self.path.write_bytes(version_record())

    def add(self, tag: str, steps, offset: float = 0.0) -> list[tuple[int, float]]:
        """Append one point per step (value = step + offset) in one write; return them."""
        written = [(step, float(step) + offset) for step in steps]
        with open(self.path, "ab") as handle:
            handle.write(b"".join(scalar_record(tag, s, v) for s, v in written))
        return written


class Consumer:
    """Collects batches on the watcher thread; the test applies them in its own thread."""

    def __init__(self) -> None:
        self.batches: list[ChangeBatch] = []
        self._lock = threading.Lock()

    def __call__(self, batch: ChangeBatch) -> None:
        with self._lock:
            self.batches.append(batch)

    def snapshot(self) -> list[ChangeBatch]:
        with self._lock:
            return list(self.batches)

    def points(self, run: str, tag: str) -> list[tuple[int, float]]:
        """Every point delivered for (run, tag), in delivery order."""
        out = []
        for batch in self.snapshot():
            for p in batch.points:
                if (p.run, p.tag) == (run, tag):
                    out.extend(zip(p.points.steps.tolist(), p.points.values.tolist()))
        return out

    def events(self, kind: str | None = None) -> list:
        return [e for b in self.snapshot() for e in b.events if kind is None or e.kind == kind]

    def store(self) -> Store:
        store = Store()
        for batch in self.snapshot():
            apply_batch(store, batch)
        return store


def wait_for(condition, what: str, timeout: float = 15.0) -> None:
    """Poll ``condition`` until true; fail with ``what`` after a generous deadline."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def start_watcher(paths, mode: str, **kwargs) -> tuple[Watcher, Consumer]:
    consumer = Consumer()
    poll = FAST_POLL if mode == "polling" else None
    watcher = Watcher([str(p) for p in paths], consumer, poll=poll, **kwargs)
    watcher.start()
    assert watcher.caught_up.wait(15), "first read did not finish"
    return watcher, consumer


@pytest.fixture
def stop_all():
    """Stop every watcher a test started, and check that no thread is left behind."""
    before = set(threading.enumerate())
    started: list[Watcher] = []
    yield started.append
    for w in started:
        w.stop()
    assert set(threading.enumerate()) <= before, "threads left behind after stop()"


def _point_batches(consumer: Consumer) -> list[ChangeBatch]:
    return [b for b in consumer.snapshot() if b.points]
