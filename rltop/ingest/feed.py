"""The change feed: what the watcher reports, and how a consumer applies it to its own `Store`.

The watcher thread never touches a consumer's store. It sends `ChangeBatch` values (plain data,
no Textual types) through a callback; each consumer (the dashboard, ``rltop tail``, a test) keeps
its own `Store` and calls `apply_batch` in its own thread. ``rltop.ingest.follow.loader.load`` builds its
store through the same `apply_batch`, so a one-shot load and a live feed fill a store identically.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import numpy as np

from rltop.ingest import storage
from rltop.ingest.columns import TagColumns, split_by_tag
from rltop.ingest.follow.sessions import session_label
from rltop.ingest.reading import Decoded
from rltop.ingest.sources.completions import CompletionsUpdate
from rltop.model.run import Run, Store
from rltop.model.series import Points


class EventKind(str, Enum):
    """What happened to a run or to the watching, with the severity a consumer reports it at.

    A ``str`` enum: a member equals its value (``"appeared"``), so it reads, compares and serialises
    as the word; consumers switch on the member, never on a spelling of their own.
    """

    APPEARED = "appeared"  # a run was found (at start or later)
    REMOVED = "removed"  # its directory was deleted: consumers drop the run
    FILE_ERROR = "file_error"  # a file or directory could not be read, was truncated or replaced
    FALLBACK = "fallback"  # native file events unavailable: the watcher polls instead (said once)
    WAITING = "waiting"  # no event file under the paths yet: the watcher waits for them (said once)
    # A file of the run shrank or was replaced: consumers drop what they hold of the run (points,
    # texts, health state) and take the run's points again from this batch on, all files re-read.
    RELOADED = "reloaded"
    SESSION = "session"  # a new session folder (a resume) joined a known run: its points follow
    REACHABLE = "reachable"  # a remote root answers again (said once; its failure was a FILE_ERROR)

    def __str__(self) -> str:
        return self.value

    @property
    def severity(self) -> str:
        """``"warning"`` for what lost or may lose points (a file error), ``"info"`` for the rest
        (a run that went quiet is the health engine's stall rule, not an event of the files)."""
        return "warning" if self is EventKind.FILE_ERROR else "info"


APPEARED, REMOVED = EventKind.APPEARED, EventKind.REMOVED
FILE_ERROR, FALLBACK, WAITING = EventKind.FILE_ERROR, EventKind.FALLBACK, EventKind.WAITING
RELOADED, SESSION, REACHABLE = EventKind.RELOADED, EventKind.SESSION, EventKind.REACHABLE
EVENT_KINDS = tuple(EventKind)

# (run name, tag, index of the first point that changed) for each series a batch touched.
Changes = list[tuple[str, str, int]]


class PointsBatch:
    """New points of one tag of one run, in the order they were written.

    A batch that takes in many reads (a first load in 4 MB windows) adds each read's points as
    one more part; they are joined once (by the watcher before it hands the batch over, else when
    a consumer first asks for `points`), so a tag costs one append to its series per batch instead
    of one per window.
    """

    __slots__ = ("run", "tag", "session", "_parts")

    def __init__(self, run: str, tag: str, points: Points, session: str = "") -> None:
        self.run = run
        self.tag = tag
        self.session = session  # the session folder the points were read from ("" when unknown)
        self._parts = [points]

    @property
    def points(self) -> Points:
        """All the points, in the order they were written."""
        self.join()
        return self._parts[0]

    def join(self) -> None:
        """Join the parts into one (once: `points` and `take` then give them as they are)."""
        if len(self._parts) > 1:
            self._parts = [join_points(self._parts)]

    def extend(self, points: Points) -> None:
        """Add points written after those already held."""
        self._parts.append(points)

    def take(self) -> Points:
        """All the points, given away: the batch holds none of them afterwards."""
        points = self.points
        self._parts = [Points(points.steps[:0], points.wall_times[:0], points.values[:0])]
        return points

    def __len__(self) -> int:
        return sum(len(part) for part in self._parts)

    def __repr__(self) -> str:
        return f"PointsBatch({self.run!r}, {self.tag!r}, {len(self)} points, session={self.session!r})"


def join_points(parts: list[Points]) -> Points:
    """Points one after the other, as one `Points`."""
    return Points(
        np.concatenate([p.steps for p in parts]),
        np.concatenate([p.wall_times for p in parts]),
        np.concatenate([p.values for p in parts]),
        all(p.single_precision for p in parts),
    )


# Columns held for one run and session are split once they reach this many points: the split
# sorts them, so a batch of a 6M-point file never holds a second copy of all of it at once.
SPLIT_POINTS = 1 << 20


@dataclass
class _PendingColumns:
    parts: list[TagColumns]  # reads of one file: they share one ``names`` list
    tag_filter: re.Pattern[str] | None
    _kept: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool), repr=False)

    def __len__(self) -> int:
        """Every point held, the filtered-out tags' included (they take memory until the split)."""
        return sum(len(part) for part in self.parts)

    def kept_count(self) -> int:
        """The points that pass the tag filter: those the consumer will get."""
        if self.tag_filter is None or not self.parts:
            return len(self)
        names = self.parts[-1].names
        if len(self._kept) != len(names):  # the file's tags only ever grow: match the new ones too
            self._kept = np.array([bool(self.tag_filter.search(name)) for name in names], dtype=bool)
        return sum(int(part.counts[self._kept[: len(part.counts)]].sum()) for part in self.parts)


@dataclass
class RunEvent:
    """Something about a run (or the watch as a whole, ``run=None``) worth telling the user."""

    kind: EventKind
    run: str | None
    message: str  # one line, ready to show
    directory: str | None = None  # the run's directory (for "appeared" and "removed")


@dataclass
class ChangeBatch:
    """Everything the watcher saw in one cycle. Consumers apply it whole, in this order:
    events, then texts, then points."""

    points: list[PointsBatch] = field(default_factory=list)
    texts: list[tuple[str, str, int, float, str]] = field(default_factory=list)  # run, tag, step, wall, text
    events: list[RunEvent] = field(default_factory=list)
    changed_runs: dict[str, str] = field(default_factory=dict)  # run name -> directory (files changed)
    # Local time at which the files of each changed run last changed (file mtime for what was
    # already on disk at start, the watcher's clock for later growth); apply_batch stores it in
    # `Run.last_change_time`. Runs missing here get `time`.
    change_times: dict[str, float] = field(default_factory=dict)
    file_versions: dict[str, str] = field(default_factory=dict)  # run name -> "brain.Event:2"
    # (run, session label) -> (session directory, smallest step of that session in this batch):
    # a session seen for the first time begins at that step (`Run.begin_session`).
    session_steps: dict[tuple[str, str], tuple[str, int]] = field(default_factory=dict)
    # run name -> settings the source itself holds (trainer_state.json's max_steps…): `Run.source_config`
    configs: dict[str, dict[str, Any]] = field(default_factory=dict)
    # run name -> (source kind, note, label, quiet hint): what the run is read from and why
    # (`Run.source`…), and why such files may go quiet (`Run.quiet_hint`)
    sources: dict[str, tuple[str, str, str, str]] = field(default_factory=dict)
    # run name -> what its completions folder gained or lost (`Run.completions`, an index only)
    completions: dict[str, CompletionsUpdate] = field(default_factory=dict)
    time: float = field(default_factory=time.time)  # when the watcher produced the batch
    initial: bool = False  # part of the first read of what was already on disk
    # read while following, after the first read: its points arrived at `time` (`Run.last_arrival_time`)
    live: bool = False
    caught_up: bool = False  # the last batch of that first read (may be empty): live from here on
    # (points, runs) that first reads still hold back for a later batch, when this one went out
    # (None: not told; see `rltop.ingest.follow.watcher`, ``on_progress``)
    held: tuple[int, int] | None = None
    # (run, tag, session) -> its entry in ``points``: later reads extend it
    _open: dict[tuple[str, str, str], PointsBatch] = field(default_factory=dict, repr=False, compare=False)
    # (run, session) -> columns of consecutive reads not split by tag yet (`settle` splits them)
    _pending: dict[tuple[str, str], _PendingColumns] = field(default_factory=dict, repr=False, compare=False)

    def point_count(self) -> int:
        """Number of scalar points in the batch."""
        return sum(len(p) for p in self.points) + sum(held.kept_count() for held in self._pending.values())

    def is_empty(self) -> bool:
        """True when the batch carries nothing at all (no points, texts, events or changes)."""
        return not (
            self.points
            or self._pending
            or self.texts
            or self.events
            or self.changed_runs
            or self.caught_up
            or self.completions
        )

    def settle(self, join: bool = False) -> None:
        """Split the columns still held by tag into ``points`` (call before reading ``points``).

        `apply_batch` and the watcher, before it hands a batch over, call it. ``join``: join each
        tag's parts as well. The watcher does, in its own thread, so a consumer (the dashboard's
        UI thread) only adopts the joined columns; joined there, they also reuse the memory the
        read just freed, where the UI thread paid a fresh page fault per 4 kB (about 36k for the
        144 MB a 6M-point first read joins). Not while reading: the parts held so far would be
        joined again at every read.
        """
        for key in list(self._pending):
            self._settle(key)
        if join:
            for held in self.points:
                held.join()

    def add_decoded(
        self,
        run: str,
        directory: str,
        decoded: Decoded,
        tag_filter: re.Pattern[str] | None = None,
        path: str | None = None,
    ) -> None:
        """Add what one read of the file ``path`` of ``run`` decoded (scalars filtered by ``tag_filter``).

        ``path`` names the session the points come from (the folder holding the file).
        """
        self.changed_runs[run] = directory
        if decoded.file_version is not None:
            self.file_versions[run] = decoded.file_version
        if decoded.config:
            self.configs[run] = decoded.config
        for tag, step, wall, text in decoded.texts:
            self.texts.append((run, tag, step, wall, text))
        session = session_label(path) if path is not None else ""
        columns = decoded.take_columns()  # (the read's scalars are then those per tag only)
        scalars = decoded.scalars
        if scalars:
            self.settle()  # the columns read before these points go first
        for tag, points in scalars.items():
            self._add_points(run, session, tag, points, tag_filter)
        if columns is not None and len(columns):
            self._hold(run, session, columns, tag_filter)
        first = _lowest_step(decoded, scalars, columns, tag_filter) if session else None
        if first is not None:
            key = (run, session)
            known = self.session_steps.get(key)
            if known is None or first < known[1]:
                self.session_steps[key] = (storage.parent(storage.absolute(path or "")), first)

    def _add_points(
        self, run: str, session: str, tag: str, points: Points, tag_filter: re.Pattern[str] | None
    ) -> None:
        """Add one tag's points after those this batch holds of it (unless filtered out)."""
        if tag_filter is not None and not tag_filter.search(tag):
            return
        key = (run, tag, session)
        held = self._open.get(key)
        if held is None:
            held = self._open[key] = PointsBatch(run, tag, points, session)
            self.points.append(held)
        else:
            held.extend(points)

    def _hold(self, run: str, session: str, columns: TagColumns, tag_filter: re.Pattern[str] | None) -> None:
        """Keep one read's columns with those of the reads before it, to be split once."""
        key = (run, session)
        held = self._pending.get(key)
        if held is not None and (
            held.parts[-1].names is not columns.names or held.tag_filter is not tag_filter
        ):
            self._settle(key)  # another file (its own tag ids), or another filter
            held = None
        if held is None:
            held = self._pending[key] = _PendingColumns([], tag_filter)
        held.parts.append(columns)
        if len(held) >= SPLIT_POINTS:
            self._settle(key)

    def _settle(self, key: tuple[str, str]) -> None:
        held = self._pending.pop(key)
        run, session = key
        for tag, points in split_by_tag(held.parts).items():
            self._add_points(run, session, tag, points, held.tag_filter)

    def drop_run(self, run: str) -> None:
        """Forget everything this batch holds about ``run`` (its directory was just deleted)."""
        self.points = [p for p in self.points if p.run != run]
        self._open = {key: held for key, held in self._open.items() if key[0] != run}
        self._pending = {key: held for key, held in self._pending.items() if key[0] != run}
        self.texts = [t for t in self.texts if t[0] != run]
        for mapping in (
            self.changed_runs,
            self.change_times,
            self.file_versions,
            self.configs,
            self.sources,
            self.completions,
        ):
            mapping.pop(run, None)
        self.session_steps = {key: value for key, value in self.session_steps.items() if key[0] != run}


def _lowest_step(
    decoded: Decoded,
    scalars: dict[str, Points],
    columns: TagColumns | None,
    tag_filter: re.Pattern[str] | None,
) -> int | None:
    """The smallest step among the points of one read that pass the filter (None: no points)."""
    if tag_filter is None and decoded.lowest_step is not None and (scalars or columns is not None):
        # The decoder's lowest step saves one reduction per tag (thousands of tags per window).
        return decoded.lowest_step
    keep = (lambda tag: True) if tag_filter is None else (lambda tag: bool(tag_filter.search(tag)))
    lows = [int(points.steps.min()) for tag, points in scalars.items() if len(points.steps) and keep(tag)]
    if columns is not None:
        lows.extend(int(points.steps.min()) for tag, points in split_by_tag([columns]).items() if keep(tag))
    return min(lows) if lows else None


def apply_batch(store: Store, batch: ChangeBatch, consume: bool = False) -> Changes:
    """Apply one batch to a consumer's store; return (run, tag, first changed index) per series.

    Call it in the thread that owns ``store``. Removed runs are dropped first, so a run deleted
    and re-created within one batch comes back fresh. ``consume``: the batch is applied once and
    dropped (a one-shot load): a new series keeps the batch's joined columns instead of copying
    them, and each tag's points are let go as soon as they are in, so a load never holds a file's
    points twice (the 6M-scalar load peaks at 188 MB, 320 MB copying: `Series.append`'s ``adopt``).
    """
    batch.settle()
    for event in batch.events:
        if event.kind in (REMOVED, RELOADED) and event.run is not None:
            store.remove(event.run)
            if event.kind == RELOADED:
                store.run(event.run, event.directory or "")
        elif event.kind == APPEARED and event.run is not None:
            store.run(event.run, event.directory or "")
    for name, (kind, note, label, hint) in batch.sources.items():
        run = store.run(name, batch.changed_runs.get(name, ""))
        run.source, run.source_note, run.source_label, run.quiet_hint = kind, note, label, hint
    for name, directory in batch.changed_runs.items():
        run = store.run(name, directory)
        run.touch(batch.change_times.get(name, batch.time))
        if name in batch.file_versions:
            run.file_version = batch.file_versions[name]
        if name in batch.configs:
            run.source_config = batch.configs[name]
    for name, update in batch.completions.items():
        apply_completions(store.run(name, batch.changed_runs.get(name, "")), update)
    for name, tag, step, wall, text in batch.texts:
        store.run(name, batch.changed_runs.get(name, "")).add_text(tag, step, wall, text)
    changes: Changes = []
    first_index: dict[tuple[str, str], int] = {}
    runs: dict[str, Run] = {}
    begun: set[tuple[str, str]] = set()  # (thousands of tags: each run and session once)
    for points in batch.points:
        run = runs.get(points.run)
        if run is None:
            run = runs[points.run] = store.run(points.run, batch.changed_runs.get(points.run, ""))
        if points.session and (points.run, points.session) not in begun:
            begun.add((points.run, points.session))
            # The first points of a session (in reading order) begin it: a resumed session
            # replaces what earlier sessions logged from its first step on, in every tag.
            directory, first_step = batch.session_steps[(points.run, points.session)]
            replaced = run.begin_session(points.session, directory, first_step)
            for tag, index in (replaced or {}).items():
                key = (points.run, tag)
                first_index[key] = min(index, first_index.get(key, index))
        new = points.take() if consume else points.points
        first = run.add_points(
            points.tag, new.steps, new.wall_times, new.values, new.single_precision, adopt=consume
        )
        key = (points.run, points.tag)
        first_index[key] = min(first, first_index.get(key, first))
    if batch.live:
        for run in runs.values():
            run.last_arrival_time = batch.time
    changes.extend((run, tag, first) for (run, tag), first in first_index.items())
    return changes


def apply_completions(run: Run, update: CompletionsUpdate) -> None:
    """Merge one scan of the run's completions folder into its index."""
    for step in update.removed:
        run.completions.remove(step)
    for summary in update.added:
        run.completions.add(summary)
    if update.note is not None:
        run.completions.note = update.note
