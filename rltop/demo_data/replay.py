"""Replay the bundled runs into a directory as if two trainers were logging right now.

Each run gets its own folder (``<target>/ppo_unstable``, ``<target>/grpo_healthy``) and a fresh
event file written by `EventWriter`: first the text summaries TRL writes at train start
(``args/text_summary``...), then every logged step in order, all tags of a step together,
stamped with the current time and flushed, as transformers' TensorBoardCallback does after each
``log``. ``speed`` is in training steps per second, so the unstable run's alarms (ratio drift in
steps 1-13, entropy collapse by step 14) fire within seconds at the default pace.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rltop.demo_data import DEFAULT_SPEED, DEMO_RUNS, bundled_event_file
from rltop.ingest.follow.loader import load
from rltop.ingest.sources.tfevents.tfrecord.writer import EventWriter


@dataclass
class RecordedRun:
    """One bundled run, decoded: text summaries and, per step, the (tag, value) pairs logged."""

    name: str
    texts: list[tuple[str, str]]
    steps: list[tuple[int, list[tuple[str, float]]]]


def recorded_run(name: str) -> RecordedRun:
    """Decode a bundled run with rltop's own reader."""
    store = load([str(bundled_event_file(name))]).store
    (run,) = store.runs.values()
    texts = [(tag, entries[0].text) for tag, entries in run.texts.items() if entries]
    by_step: dict[int, list[tuple[str, float]]] = {}
    for tag, series in run.series.items():
        for step, value in zip(series.steps.tolist(), series.values.tolist()):
            by_step.setdefault(int(step), []).append((tag, float(value)))
    return RecordedRun(name, texts, sorted(by_step.items()))


class Replayer:
    """Writes the recorded runs into ``target`` at ``speed`` steps per second, in its own thread."""

    def __init__(
        self,
        target: str | Path,
        speed: float = DEFAULT_SPEED,
        names: tuple[str, ...] = DEMO_RUNS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not speed > 0:
            raise ValueError(f"--speed must be positive, got {speed}")
        self.target = Path(target)
        self.speed = float(speed)
        self.clock = clock
        self.runs = [recorded_run(name) for name in names]
        self._writers: list[EventWriter] = []
        self._positions = [0] * len(self.runs)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def total_steps(self) -> int:
        """Steps of the longest run (the replay's length is this divided by the speed)."""
        return max((len(run.steps) for run in self.runs), default=0)

    @property
    def done(self) -> bool:
        """Every step of every run was written."""
        return all(pos >= len(run.steps) for pos, run in zip(self._positions, self.runs))

    def begin(self) -> None:
        """Create the files and write what a trainer writes at start, plus the first step."""
        now = self.clock()
        for run in self.runs:
            writer = EventWriter(self.target / run.name, start=now)
            for tag, text in run.texts:
                writer.add_text(tag, text, 0, now)
            writer.flush()
            self._writers.append(writer)
        self.advance(1)

    def advance(self, steps: int) -> None:
        """Write the next ``steps`` logged steps of every run (each flushed like a trainer's log)."""
        now = self.clock()
        for index, (run, writer) in enumerate(zip(self.runs, self._writers)):
            for _ in range(steps):
                position = self._positions[index]
                if position >= len(run.steps):
                    break
                step, points = run.steps[position]
                for tag, value in points:
                    writer.add_scalar(tag, value, step, now)
                writer.flush()
                self._positions[index] = position + 1

    def start(self) -> None:
        """Write the rest in a background thread, one step per run every 1/speed seconds."""
        if not self._writers:
            self.begin()
        self._thread = threading.Thread(target=self._run, name="rltop-demo-writer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        interval = 1.0 / self.speed
        next_time = time.monotonic() + interval
        while not self.done and not self._stop.wait(max(0.0, next_time - time.monotonic())):
            self.advance(1)
            next_time += interval
        self._close()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the replay finished (True) or ``timeout`` passed (False)."""
        thread = self._thread
        if thread is None:
            return self.done
        thread.join(timeout)
        return not thread.is_alive()

    def stop(self, timeout: float = 1.0) -> None:
        """Stop writing and close the files."""
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        self._close()

    def _close(self) -> None:
        for writer in self._writers:
            writer.close()
