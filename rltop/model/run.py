"""A training run (a directory of event files, or an output_dir of checkpoints) and the store of all runs."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rltop.model.completions import CompletionIndex
from rltop.model.durations import MAX_WALL_TIME
from rltop.model.series import Series

CONFIG_TAG = "args/text_summary"
# The key of `Run.source_config` under which a source that records how the process ended (a W&B
# run's exit record) puts its exit code: "_" keeps it apart from every logged setting.
EXIT_CODE = "_exit_code"
RUN_TITLE = "_run_title"
"""Key of `Run.source_config` for the name the tracker gave the run (W&B's run name)."""


@dataclass
class TextEntry:
    """One text summary (``add_text``) point."""

    step: int
    wall_time: float
    text: str


@dataclass
class Session:
    """One ``trainer.train()`` call of a run: the folder it wrote and the step it began at."""

    label: str  # the session folder's name (``Dec01_07-56-27_vm``), or the run folder's own
    directory: str
    first_step: int


@dataclass
class Run:
    """Everything rltop knows about one run: its scalar series, texts and freshness.

    A run resumed from a checkpoint has several sessions (see `rltop.ingest.follow.sessions`): when a
    later session begins at step S, every point at step >= S of the earlier ones is dropped (the
    later session is the one that continued), so each point belongs to the latest session that
    began at or before its step.
    """

    name: str
    directory: str
    series: dict[str, Series] = field(default_factory=dict)
    texts: dict[str, list[TextEntry]] = field(default_factory=dict)
    file_version: str | None = None
    sessions: list[Session] = field(default_factory=list)
    # What the run is read from (a `rltop.ingest.sources` kind: "tfevents", "trainer_state") and,
    # when that is worth saying, why: a sentence for reports ("trainer_state.json also present;
    # reading the event files (more points and wall times)") and a few words for a header.
    source: str = "tfevents"
    source_note: str = ""
    source_label: str = ""
    quiet_hint: str = ""
    """Why the run's kind of files may go quiet while training goes on (its writer buffers…): the
    stall rule's advice says it (each source kind has its own)."""
    # Settings the source itself holds (trainer_state.json: max_steps, logging_steps…).
    source_config: dict[str, Any] | None = None
    # Wall time (from the events) of the newest point, and local time of the last file change:
    # together they tell "no new point for 7 min" from "the writer buffers" (see docs/guide/sources.md).
    last_point_wall_time: float | None = None
    last_arrival_time: float | None = None
    """Local time new points last arrived while rltop watched (None: only what was on disk at start):
    points that keep arriving are news, whatever the trainer's clock dated them."""
    last_change_time: float | None = None
    # What the policy wrote: TRL's completions/*.parquet of the run's output_dir, as an index only
    # (the rows are read from the files when asked: `rltop.ingest.sources.completions.read_step`).
    completions: CompletionIndex = field(default_factory=CompletionIndex)

    def add_points(
        self,
        tag: str,
        steps: np.ndarray,
        wall_times: np.ndarray,
        values: np.ndarray,
        single_precision: bool = True,
        adopt: bool = False,
    ) -> int:
        """Append points to ``tag`` (created on first use); return the first changed index.

        ``adopt``: the caller gives the arrays away (`Series.append`)."""
        series = self.series.get(tag)
        if series is None:
            series = self.series[tag] = Series(tag)
        first = series.append(steps, wall_times, values, single_precision, adopt=adopt)
        walls = np.asarray(wall_times)
        dated = walls[(walls > -MAX_WALL_TIME) & (walls < MAX_WALL_TIME)]  # NaN and 1e30 are no dates
        if len(dated):
            newest = float(dated.max())
            if self.last_point_wall_time is None or newest > self.last_point_wall_time:
                self.last_point_wall_time = newest
        return first

    def begin_session(self, label: str, directory: str, first_step: int) -> dict[str, int] | None:
        """Note that session ``label`` writes points from ``first_step`` on.

        None when the session is known already; else the tags whose points it replaced, each with
        its first changed index: a session after the first replaces what the earlier ones logged
        at ``first_step`` and later, in every tag (also in tags it never logs itself, such as an
        end-of-training summary).
        """
        if any(session.label == label for session in self.sessions):
            return None
        replaced: dict[str, int] = {}
        if self.sessions:
            for tag, series in self.series.items():
                before = len(series)
                if series.drop_from(first_step) < before:
                    replaced[tag] = len(series)
        self.sessions.append(Session(label, directory, int(first_step)))
        return replaced

    def session_starts(self) -> tuple[list[int], list[str]]:
        """(first steps, labels) of the sessions that still own points, in step order."""
        starts: list[int] = []
        labels: list[str] = []
        for session in self.sessions:
            while starts and starts[-1] >= session.first_step:  # replaced from its first step on
                starts.pop()
                labels.pop()
            starts.append(session.first_step)
            labels.append(session.label)
        return starts, labels

    def session_table(self) -> list[tuple[str, str, int, bool]]:
        """(label, directory, first step, still owns points) of every session, oldest first.

        A session owns the steps from its first step up to the next owning session's first step;
        one whose steps were all replaced by a later resume owns none.
        """
        _, owning = self.session_starts()
        return [(s.label, s.directory, s.first_step, s.label in owning) for s in self.sessions]

    def session_labels(self, steps: np.ndarray) -> list[str]:
        """The session each step belongs to ("" for a run without session information)."""
        starts, labels = self.session_starts()
        if not labels:
            return [""] * len(steps)
        index = np.searchsorted(np.asarray(starts, dtype=np.int64), np.asarray(steps), side="right") - 1
        # Points before the first session's first step (step 0 texts, odd logs) belong to it.
        return [labels[i] for i in np.maximum(index, 0).tolist()]

    def single_session(self, steps: np.ndarray) -> str | None:
        """The one session all these steps belong to ("" without session information), or None
        when they span several (then `session_labels` says which)."""
        starts, labels = self.session_starts()
        if len(labels) <= 1 or len(steps) == 0:
            return labels[0] if labels else ""
        index = np.searchsorted(np.asarray(starts, dtype=np.int64), np.asarray(steps), side="right") - 1
        index = np.maximum(index, 0)
        first = int(index[0])
        return labels[first] if bool(np.all(index == first)) else None

    @property
    def resumed_at(self) -> int | None:
        """The step the latest session began at, when the run was resumed (None otherwise)."""
        return self.sessions[-1].first_step if len(self.sessions) > 1 else None

    def add_text(self, tag: str, step: int, wall_time: float, text: str) -> None:
        """Record one text summary point."""
        self.texts.setdefault(tag, []).append(TextEntry(step, wall_time, text))

    def touch(self, now: float | None = None) -> None:
        """Note that one of the run's files changed (local clock)."""
        self.last_change_time = time.time() if now is None else now

    @property
    def config(self) -> dict[str, Any] | None:
        """The training arguments transformers logs as ``args/text_summary``, parsed as a dict.

        The newest entry wins (a restart logs its own arguments). Settings of the source itself
        (`source_config`) fill in what it lacks. None when there is neither (or it is not JSON).
        """
        parsed = None
        entries = self.texts.get(CONFIG_TAG)
        if entries:
            try:
                parsed = json.loads(entries[-1].text)
            except ValueError:
                parsed = None
            if not isinstance(parsed, dict):
                parsed = None
        if self.source_config:
            return {**self.source_config, **(parsed or {})}
        return parsed

    @property
    def exit_code(self) -> int | None:
        """The training process's exit code, when its source recorded one (W&B's exit record)."""
        code = (self.source_config or {}).get(EXIT_CODE)
        return code if isinstance(code, int) and not isinstance(code, bool) else None

    @property
    def title(self) -> str:
        """The name the run's tracker gave it (a W&B run name), "" when its source has none: what
        screens call the run (`rltop.view.names.store_display_names`) rather than its folder."""
        title = (self.source_config or {}).get(RUN_TITLE)
        return title if isinstance(title, str) else ""

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
