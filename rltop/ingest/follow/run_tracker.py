"""The watcher's own picture of the runs: which files exist, which need reading, which went quiet.

No thread and no store: the watcher thread drives a `RunTracker` (list the runs again, mark files,
read what is marked) and ships `tracker.batch` to consumers. Everything here is synchronous, so
tests can drive it step by step.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from rltop.ingest import sources, storage
from rltop.ingest.feed import (
    APPEARED,
    FILE_ERROR,
    RELOADED,
    REMOVED,
    SESSION,
    ChangeBatch,
    EventKind,
    RunEvent,
)
from rltop.ingest.follow.discovery import RunSource, discover, is_gone
from rltop.ingest.follow.runfiles import RunFiles, reading_failed
from rltop.ingest.follow.sessions import SessionGrouper, in_time_order
from rltop.ingest.sources.completions import CompletionsFollower, folder_of

RECENT = 120.0  # a file that grew this recently is read on every poll
RARE_EVERY = 10  # older files (finished restarts) are read on every tenth poll only
UNDECIDED_AFTER = 30.0  # a new session with no scalar after this long is shown as its own run


@dataclass
class TrackedRun:
    """One run being watched: its files and how fresh it is (local clock)."""

    files: RunFiles
    last_change: float | None = None  # when its files last grew (mtime for data found at start)
    grew: dict[str, float] = field(default_factory=dict)  # path -> when that file last grew
    sessions: set[str] = field(default_factory=set)  # folders of later sessions that joined the run
    source: tuple[str, str, str, str] = ("", "", "", "")  # kind, note, label of its `RunSource`, hint
    # Files read to their end at least once: until then a read is history found on disk (dated
    # by the file's mtime), however many windows a large file takes.
    caught_up: set[str] = field(default_factory=set)
    completions: CompletionsFollower | None = None  # its output_dir's completions/ folder

    @property
    def name(self) -> str:
        """The run's name."""
        return self.files.name


class RunTracker:
    """Runs and files under the watched paths, and the batch of changes being built."""

    def __init__(
        self,
        paths: list[str],
        tag_filter: re.Pattern[str] | None = None,
        run_filter: re.Pattern[str] | None = None,
        clock: Callable[[], float] = time.time,
        labels: list[str] | None = None,
    ) -> None:
        self.paths = list(paths)
        self.labels = labels  # name prefixes of the roots (`discovery.root_labels` of every root watched)
        self.tag_filter = tag_filter
        self.run_filter = run_filter
        self.clock = clock
        self.runs: dict[str, TrackedRun] = {}  # by directory
        self.ignored: set[str] = set()  # directories of runs that --runs leaves out
        self.batch = ChangeBatch()
        self._run_of: dict[str, str] = {}  # event file -> run directory
        self._dirty: set[str] = set()  # event files to read
        self._scan_problems: set[str] = set()  # listing problems already reported, still present
        self._unknown: set[str] = set()  # changed files not explained yet by a rescan
        self._unexplained: set[str] = set()  # ... nor by the last one: ignored until the next tick
        self._polls = 0
        self._isolated: set[str] = set()  # reading failures already said (`_isolate`)
        self.grouper = SessionGrouper()
        self.flush_due = False  # the next read is one large record: deliver the points before it
        self.rescan_due = False  # a file vanished since the last listing: list the runs again

    # -- the batch ------------------------------------------------------------------------------

    def take_batch(self) -> ChangeBatch:
        """The changes gathered so far; a fresh batch starts."""
        batch, self.batch = self.batch, ChangeBatch()
        return batch

    def _event(self, kind: EventKind, run: str | None, message: str, directory: str | None = None) -> None:
        self.batch.events.append(RunEvent(kind, run, message, directory))

    # -- which runs and files exist -------------------------------------------------------------

    def rescan(self, read_all: bool = True) -> None:
        """List the runs again: report new runs, deleted runs and files; mark new files for reading.

        With ``read_all`` every known file is marked too: after a native "tree changed" event a
        file may have been replaced by a rename, which no write event announces. Polling passes
        False (its own schedule reads the files) so that old files stay cheap. A new session
        folder of a known ``output_dir`` joins its run when it resumes it (`rltop.ingest.follow.sessions`).
        """
        found = discover(self.paths, missing_ok=True, labels=self.labels)
        self.rescan_due = False
        problems = set(found.problems)
        for problem in sorted(problems - self._scan_problems):
            self._event(FILE_ERROR, None, problem)
        self._scan_problems = problems
        sessions: set[str] = set()
        listed: dict[str, set[str]] = {}  # run directory -> event files listed for it
        for source in in_time_order(found.runs):
            sessions.add(source.directory)
            owner = self._place(source)
            if owner is None:
                continue
            if owner in self.ignored:
                self.ignored.add(source.directory)  # later sessions of a run --runs leaves out
                continue
            tracked = self.runs.get(owner)
            if tracked is None:
                if self.run_filter is not None and not self.run_filter.search(source.name):
                    self.ignored.add(owner)
                    continue
                tracked = self.runs[owner] = TrackedRun(RunFiles(source.name, owner, kind=source.kind))
                tracked.completions = CompletionsFollower(
                    folder_of(sources.kind(source.kind).output_dir(owner))
                )
                hint = sources.kind(source.kind).quiet_hint
                tracked.source = (source.kind, source.note, source.label, hint)
                self._event(APPEARED, source.name, f"new run {source.name} ({owner})", owner)
                self.batch.sources[source.name] = tracked.source
            elif owner != source.directory and source.directory not in tracked.sessions:
                tracked.sessions.add(source.directory)
                message = f"run {tracked.name}: new session {source.directory}"
                self._event(SESSION, tracked.name, message, owner)
            for path in source.files:
                if path in self._run_of:
                    continue
                self._run_of[path] = owner
                if tracked.files.add_file(path):
                    self._dirty.add(path)
            listed.setdefault(owner, set()).update(source.files)
        for directory, tracked in list(self.runs.items()):
            if directory in listed:
                gone = [p for p in tracked.files.known if p not in listed[directory]]
                self._forget_deleted_files(tracked, gone)
            elif directory in found.superseded:
                better = found.superseded[directory]
                self._remove_run(tracked, f"its output_dir now has {better}; reading those instead")
            else:
                self._check_unlisted_run(tracked)
        self.ignored &= sessions | {self.grouper.owner(d) for d in sessions}
        self._unexplained = {p for p in self._unknown if p not in self._run_of}
        self._unknown.clear()
        if read_all:
            self._dirty.update(self._run_of)

    def _place(self, source: RunSource) -> str | None:
        """The run a listed session folder belongs to; None while it cannot be told yet.

        A session of a known ``output_dir`` that has not logged a scalar yet may be a resume or a
        fresh start: it waits, unless its files have not changed for `UNDECIDED_AFTER` seconds (a
        session that crashed before its first point is shown as a run of its own).
        """
        owner = self.grouper.place(source)
        if owner is not None:
            return owner
        newest = max((storage.mtime(path) or 0.0 for path in source.files), default=0.0)
        if self.clock() - newest >= UNDECIDED_AFTER:
            return self.grouper.place_undecided(source)
        return None

    def _forget_deleted_files(self, tracked: TrackedRun, candidates: Iterable[str]) -> None:
        for path in candidates:
            if not is_gone(path):
                continue  # not listed, but there (or unreadable): a listing problem, said by the scan
            tracked.files.forget_file(path)
            tracked.grew.pop(path, None)
            self._run_of.pop(path, None)
            self._dirty.discard(path)
            self._event(FILE_ERROR, tracked.name, f"{path}: deleted; the points read from it are kept")

    def _check_unlisted_run(self, tracked: TrackedRun) -> None:
        """A known run the listing no longer shows: deleted, emptied, or just unreadable now."""
        directory = tracked.files.directory
        folders = {directory, *tracked.sessions, *(storage.parent(p) for p in tracked.files.known)}
        if not all(is_gone(folder) for folder in folders):
            self._forget_deleted_files(tracked, tracked.files.known)
            if tracked.files.known:
                # Still there, but it could not be listed (chmod, said once as a scan problem): the
                # run keeps its files, offsets and state, and its known files are still tried.
                return
            reason = f"its {tracked.files.kind.label} were deleted"
        else:
            reason = f"its directory {directory} was deleted"
        self._remove_run(tracked, reason)

    def _remove_run(self, tracked: TrackedRun, reason: str) -> None:
        """Stop following a run; consumers drop it (REMOVED)."""
        directory = tracked.files.directory
        del self.runs[directory]
        self.grouper.forget(directory)
        for path in [p for p, d in self._run_of.items() if d == directory]:
            del self._run_of[path]
            self._dirty.discard(path)
        self.batch.drop_run(tracked.name)
        self._event(REMOVED, tracked.name, f"run {tracked.name}: {reason}", directory)

    # -- which files to read --------------------------------------------------------------------

    def note_changed(self, paths: Iterable[str]) -> bool:
        """Mark files that native events reported; True when one is unknown (a rescan is due)."""
        unknown = False
        for path in paths:
            members = [] if path in self._run_of else self._members_of(path)
            if path in self._run_of:
                self._dirty.add(path)
            elif members:  # a file holding several runs (a trackio database): each of them
                self._dirty.update(members)
            elif path in self._unexplained or storage.parent(path) in self.ignored:
                continue
            else:
                self._unknown.add(path)
                unknown = True
        return unknown

    def _members_of(self, path: str) -> list[str]:
        """The member paths of the runs read from inside the file ``path`` (`storage.member_path`)."""
        prefix = path + storage.MEMBER
        return [known for known in self._run_of if known.startswith(prefix)]

    def mark_due(self, everything: bool = False) -> None:
        """Mark the files a poll should read: recent and newest files always, the others now and then."""
        self._polls += 1
        everything = everything or self._polls % RARE_EVERY == 0
        now = self.clock()
        for tracked in self.runs.values():
            newest = tracked.files.newest_path()
            for path in tracked.files.paths:
                if everything or path == newest or now - tracked.grew.get(path, -RECENT) < RECENT:
                    self._dirty.add(path)

    # -- reading --------------------------------------------------------------------------------

    def read_dirty(self, should_stop: Callable[[], bool], after_window: Callable[[], None]) -> None:
        """Read every marked file from its offset, run by run, each file of a run in writing order.

        A file is read to its end before the next file of its run (so a restart's points follow
        the old file's); ``after_window`` runs after each read (the watcher flushes big batches).
        """
        for tracked in sorted(self.runs.values(), key=lambda t: t.name):
            for path in tracked.files.paths:
                if path not in self._dirty:
                    continue
                try:
                    while True:
                        if should_stop():
                            return
                        more = self._read_window(tracked, path)
                        after_window()
                        if not more:
                            break
                except storage.Unreachable:
                    raise  # the whole store, not this file: the watcher retries the root
                except Exception as error:  # beyond the reader (`RunFiles.read`): the same, for this file
                    self._isolate(tracked, path, error)
                self._dirty.discard(path)

    def _isolate(self, tracked: TrackedRun, path: str, error: Exception) -> None:
        """Say once (per file and error) that reading ``path`` failed; the other runs read on."""
        message = reading_failed(path, error)
        if message not in self._isolated:
            self._isolated.add(message)
            self._event(FILE_ERROR, tracked.name, message)

    def _read_window(self, tracked: TrackedRun, path: str) -> bool:
        first_read = path not in tracked.caught_up
        read = tracked.files.read(path)
        if read.problems and not read.result.bytes_read and is_gone(path):
            # Deleted since the last listing: the next listing says what happened (a deleted file
            # or run), not a read error.
            self.rescan_due = True
            tracked.files.forget_trouble(path)
            return False
        for problem in read.problems:
            self._event(FILE_ERROR, tracked.name, problem)
        if read.result.restarted:
            self._reload_run(tracked)
            return False
        if read.result.bytes_read:
            self.batch.add_decoded(
                tracked.name, tracked.files.directory, read.result.decoded, self.tag_filter, path
            )
            self._grew(tracked, path, first_read)
            self.batch.change_times[tracked.name] = tracked.last_change
        if not read.more:
            tracked.caught_up.add(path)
        self.flush_due = read.result.large_next
        return read.more

    def _reload_run(self, tracked: TrackedRun) -> None:
        """A file of the run shrank or was replaced: read the whole run again, every file in order.

        What consumers hold may mix the old and the new contents (points at equal steps are never
        purged), so they are told to drop the run (RELOADED) and get it again from the start.
        """
        name, directory = tracked.name, tracked.files.directory
        self.batch.drop_run(name)
        self._event(RELOADED, name, f"run {name}: a file was rewritten; reading the run again", directory)
        self.batch.sources[name] = tracked.source
        tracked.caught_up.clear()
        tracked.files.reset()
        if tracked.completions is not None:
            tracked.completions.reset()  # the run's index is dropped too: send it whole again
        for path in tracked.files.paths:
            while True:
                read = tracked.files.read(path)
                for problem in read.problems:
                    self._event(FILE_ERROR, name, problem)
                if read.result.bytes_read:
                    self.batch.add_decoded(name, directory, read.result.decoded, self.tag_filter, path)
                if not read.more:
                    break
            self._dirty.discard(path)
            tracked.caught_up.add(path)
        self.batch.change_times[name] = tracked.last_change = self.clock()

    def _grew(self, tracked: TrackedRun, path: str, first_read: bool) -> None:
        now = self.clock()
        when = now
        if first_read:
            # Data already on disk: it changed when the file says, not now (a finished run must
            # not look fresh). Clamped: a file server's clock may run ahead of ours.
            mtime = storage.mtime(path)
            when = now if mtime is None else min(mtime, now)
        if tracked.last_change is None or when > tracked.last_change:
            tracked.last_change = when
        tracked.grew[path] = when

    # -- completions ----------------------------------------------------------------------------

    def scan_completions(self, force: bool = False) -> None:
        """List each run's completions folder (each at most every second unless ``force``).

        A remote folder is listed only when ``force`` (the watcher's relisting of the prefix): a
        listing is a request, and an idle remote run must stay at about one request a poll.
        """
        for tracked in sorted(self.runs.values(), key=lambda t: t.name):
            follower = tracked.completions
            if follower is None:
                continue
            if not force and (storage.is_remote(follower.directory) or not follower.due()):
                continue
            try:
                update = follower.scan()
            except storage.Unreachable:
                raise
            except Exception as error:  # as for a run's files: its completions only
                self._isolate(tracked, follower.directory, error)
                continue
            for problem in update.problems:
                self._event(FILE_ERROR, tracked.name, problem)
            update.problems = []
            if not update:
                continue
            known = self.batch.completions.get(tracked.name)
            if known is None:
                self.batch.completions[tracked.name] = update
            else:
                known.added.extend(update.added)
                known.removed.extend(update.removed)
                known.note = update.note if update.note is not None else known.note
