"""A training run (one directory of event files) and the store of all runs rltop watches."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rltop.model.series import Series

CONFIG_TAG = "args/text_summary"


@dataclass
class TextEntry:
    """One text summary (``add_text``) point."""

    step: int
    wall_time: float
    text: str


@dataclass
class Run:
    """Everything rltop knows about one run: its scalar series, texts and freshness."""

    name: str
    directory: str
    series: dict[str, Series] = field(default_factory=dict)
    texts: dict[str, list[TextEntry]] = field(default_factory=dict)
    file_version: str | None = None
    # Wall time (from the events) of the newest point, and local time of the last file change:
    # together they tell "no new point for 7 min" from "the writer buffers" (see README).
    last_point_wall_time: float | None = None
    last_change_time: float | None = None

    def add_points(
        self,
        tag: str,
        steps: np.ndarray,
        wall_times: np.ndarray,
        values: np.ndarray,
        single_precision: bool = True,
    ) -> int:
        """Append points to ``tag`` (created on first use); return the first changed index."""
        series = self.series.get(tag)
        if series is None:
            series = self.series[tag] = Series(tag)
        first = series.append(steps, wall_times, values, single_precision)
        if len(wall_times):
            newest = float(np.max(wall_times))
            if self.last_point_wall_time is None or newest > self.last_point_wall_time:
                self.last_point_wall_time = newest
        return first

    def add_text(self, tag: str, step: int, wall_time: float, text: str) -> None:
        """Record one text summary point."""
        self.texts.setdefault(tag, []).append(TextEntry(step, wall_time, text))

    def touch(self, now: float | None = None) -> None:
        """Note that one of the run's files changed (local clock)."""
        self.last_change_time = time.time() if now is None else now

    @property
    def config(self) -> dict[str, Any] | None:
        """The training arguments transformers logs as ``args/text_summary``, parsed as a dict.

        The newest entry wins (a restart logs its own arguments). None when absent or not JSON.
        """
        entries = self.texts.get(CONFIG_TAG)
        if not entries:
            return None
        try:
            parsed = json.loads(entries[-1].text)
        except ValueError:
            return None
        return parsed if isinstance(parsed, dict) else None

    @property
    def last_step(self) -> int | None:
        """The largest last step over all series (None when the run has no scalars)."""
        steps = [s.last_step for s in self.series.values() if len(s)]
        return max(steps) if steps else None

    def scalar_count(self) -> int:
        """Total number of scalar points held."""
        return sum(len(s) for s in self.series.values())


@dataclass
class Store:
    """All runs, keyed by run name (the run directory relative to the watched root)."""

    runs: dict[str, Run] = field(default_factory=dict)

    def run(self, name: str, directory: str) -> Run:
        """The run called ``name``, created on first use."""
        found = self.runs.get(name)
        if found is None:
            found = self.runs[name] = Run(name=name, directory=directory)
        return found

    def remove(self, name: str) -> None:
        """Forget a run (its directory was deleted)."""
        self.runs.pop(name, None)

    def sorted_names(self) -> list[str]:
        """Run names in a stable, human order."""
        return sorted(self.runs)
