"""Training sessions: which ``runs/<datetime>_<host>/`` folders of one ``output_dir`` are one run.

transformers writes every ``trainer.train()`` call into a new ``<output_dir>/runs/<datetime>_<host>/``
folder, also ``trainer.train(resume_from_checkpoint=...)``. A resumed session starts at the
checkpoint's step (81 after ``checkpoint-80``) while the session before it may have gone on to 120:
the two folders are one experiment, and TensorBoard's rule for a step that goes back (the later
points replace the earlier ones from that step on) applies across them. A session that starts
from scratch again (the same script run twice into one ``output_dir``) is another run.

So a session folder *joins* the latest run of its ``output_dir`` when its first logged step is
greater than that run's first step, and starts a run of its own otherwise. The run keeps the name
and directory of its first session (names never change when a resume appears), and every point
remembers its session through the step at which that session began (`rltop.model.run.Session`).
Deciding needs the session's first step, so a new session's first file is peeked at (one small
read) before it is assigned; until it holds a scalar it is undecided. Only source kinds with
sessions (event files) are grouped; a run read from trainer_state.json is its output_dir already.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from rltop.ingest import sources as source_kinds
from rltop.ingest import storage
from rltop.ingest.follow.discovery import RunSource
from rltop.ingest.sources.tfevents.kind import SESSIONS_FOLDER, experiment_of

__all__ = [
    "SESSIONS_FOLDER",
    "SessionGrouper",
    "experiment_of",
    "group_sources",
    "in_time_order",
    "peek_first_step",
    "session_label",
]
PEEK_BYTES = 1 << 20  # how much of a new session's first file is read to find its first step
PEEK_WINDOW = 64 << 10


def session_label(path: str) -> str:
    """The session a source file belongs to: the name of the folder holding it."""
    return storage.name(storage.parent(storage.absolute(path)))


def peek_first_step(files: Iterable[str], limit: int = PEEK_BYTES) -> int | None:
    """The first logged step of a session: the smallest step of the first scalars in its first file.

    Reads at most ``limit`` bytes of the earliest file; None when no scalar was written yet (or the
    file cannot be read). The reader is a throwaway: the session's own reader starts at 0 later.
    """
    from rltop.ingest.sources.tfevents.tfrecord.reader import EventFileReader

    ordered = sorted(files, key=source_kinds.kind("tfevents").order)
    for path in ordered[:1]:
        reader = EventFileReader(path, window=PEEK_WINDOW)
        for _ in range(limit // PEEK_WINDOW + 1):  # bounded: a large record may hold the offset still
            result = reader.read()
            scalars = result.decoded.scalars.values()
            steps = [int(points.steps.min()) for points in scalars if len(points.steps)]
            if steps:
                return min(steps)
            if not result.more:
                break
    return None


@dataclass
class _Attempt:
    """One run of an experiment: its directory (its first session's) and its first step."""

    directory: str
    first_step: int | None
    files: list[str]


@dataclass
class SessionGrouper:
    """Assigns session folders to runs, remembering every decision (decisions never change).

    ``place`` is called with the sources of one listing in time order. Both the one-shot loader and
    the live tracker use it, so a load and a live tail group sessions identically.
    """

    first_step: Callable[[list[str]], int | None] = peek_first_step
    _owner: dict[str, str] = field(default_factory=dict)  # session directory -> run directory
    _attempts: dict[str, list[_Attempt]] = field(default_factory=dict)  # experiment -> its runs

    def owner(self, directory: str) -> str | None:
        """The run a session folder was assigned to, if it was."""
        return self._owner.get(directory)

    def place(self, source: RunSource) -> str | None:
        """The directory of the run ``source`` belongs to (its own for a new run); None if undecided."""
        known = self._owner.get(source.directory)
        if known is not None:
            return known
        if not source_kinds.kind(source.kind).sessions:
            self._owner[source.directory] = source.directory
            return source.directory
        experiment = experiment_of(source.directory)
        attempts = self._attempts.get(experiment, []) if experiment is not None else []
        if not attempts:
            return self._new_run(source, experiment, None)
        latest = attempts[-1]
        if latest.first_step is None:
            latest.first_step = self.first_step(latest.files)
        step = self.first_step(source.files)
        if step is None:
            return None  # nothing logged yet: resume or fresh start cannot be told apart
        if latest.first_step is not None and step > latest.first_step:
            self._owner[source.directory] = latest.directory
            return latest.directory
        return self._new_run(source, experiment, step)

    def place_undecided(self, source: RunSource) -> str:
        """Make an undecided session a run of its own (it never logged a scalar: show it anyway)."""
        return self.place(source) or self._new_run(source, experiment_of(source.directory), None)

    def forget(self, run_directory: str) -> None:
        """A run was removed: its sessions may be placed again if they come back."""
        for session in [s for s, owner in self._owner.items() if owner == run_directory]:
            del self._owner[session]
        for attempts in self._attempts.values():
            attempts[:] = [a for a in attempts if a.directory != run_directory]

    def _new_run(self, source: RunSource, experiment: str | None, step: int | None) -> str:
        self._owner[source.directory] = source.directory
        if experiment is not None:
            self._attempts.setdefault(experiment, []).append(
                _Attempt(source.directory, step, list(source.files))
            )
        return source.directory


def in_time_order(sources: Iterable[RunSource]) -> list[RunSource]:
    """Sources sorted by the start time of their first event file (the order sessions were started)."""

    def started(source: RunSource) -> tuple[float, str]:
        if not source_kinds.kind(source.kind).sessions:
            return float("inf"), source.directory
        order = source_kinds.kind(source.kind).order
        first = min((order(f) for f in source.files), default=(float("inf"), ""))
        return first[0], source.directory

    return sorted(sources, key=started)


def group_sources(sources: Iterable[RunSource], grouper: SessionGrouper) -> list[RunSource]:
    """One-shot grouping: merge the sessions of each run into one source (name of the first session).

    Undecided sessions (no scalar written at all) become runs of their own, so nothing found is hidden.
    """
    runs: dict[str, RunSource] = {}
    for source in in_time_order(sources):
        owner = grouper.place_undecided(source)
        run = runs.get(owner)
        if run is None:
            runs[owner] = RunSource(
                source.name, source.directory, list(source.files), source.kind, source.note, source.label
            )
        else:
            run.files.extend(source.files)
    for run in runs.values():
        run.files.sort(key=source_kinds.kind(run.kind).order)
    return sorted(runs.values(), key=lambda r: r.name)
