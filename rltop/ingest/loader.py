"""Feed event files into the series store: one-shot loads and the per-file state tailing reuses."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from rltop.ingest.bulk import DecodedBatch
from rltop.ingest.discovery import Discovery, RunSource, discover
from rltop.ingest.reader import EventFileReader
from rltop.model.run import Run, Store

# (run name, tag, index of the first new point) for each series a read changed.
Changes = list[tuple[str, str, int]]


@dataclass
class LoadResult:
    """A loaded store plus everything worth telling the user about the load."""

    store: Store
    discovery: Discovery
    problems: list[str] = field(default_factory=list)


class RunFeeder:
    """Reads the event files of one run into its `Run`, file by file, from their offsets."""

    def __init__(self, source: RunSource, run: Run, tag_filter: re.Pattern[str] | None = None):
        self.source = source
        self.run = run
        self.tag_filter = tag_filter
        self.readers: dict[str, EventFileReader] = {}

    def add_file(self, path: str) -> None:
        """Start reading a new event file of this run (no-op if already known)."""
        if path not in self.readers:
            self.readers[path] = EventFileReader(path)
            if path not in self.source.files:
                self.source.files.append(path)

    def read_file(self, path: str, problems: list[str], until_done: bool = True) -> Changes:
        """Read what is new in one file; with ``until_done`` keep going until it is consumed."""
        reader = self.readers.get(path)
        if reader is None:
            self.add_file(path)
            reader = self.readers[path]
        changes: Changes = []
        while True:
            result = reader.read()
            problems.extend(result.problems)
            changes.extend(self.apply(result.decoded))
            if result.bytes_read:
                self.run.touch()
            if not (until_done and result.more):
                return changes

    def read_all(self, problems: list[str]) -> Changes:
        """Read what is new in every file of the run, in reading order."""
        for path in self.source.files:
            self.add_file(path)
        changes: Changes = []
        for path in list(self.readers):
            changes.extend(self.read_file(path, problems))
        return changes

    def apply(self, decoded: DecodedBatch) -> Changes:
        """Append one decoded batch to the run; return what changed."""
        run = self.run
        if decoded.file_version is not None:
            run.file_version = decoded.file_version
        for tag, step, wall, text in decoded.texts:
            run.add_text(tag, step, wall, text)
        changes: Changes = []
        for tag, points in decoded.scalars.items():
            if self.tag_filter is not None and not self.tag_filter.search(tag):
                continue
            first = run.add_points(
                tag, points.steps, points.wall_times, points.values, points.single_precision
            )
            changes.append((run.name, tag, first))
        return changes


def compile_filter(pattern: str | None, what: str) -> re.Pattern[str] | None:
    """Compile a user regex (``--tags``/``--runs``); ValueError names the option on bad syntax."""
    if pattern is None:
        return None
    try:
        return re.compile(pattern)
    except re.error as error:
        raise ValueError(f"invalid {what} regex {pattern!r}: {error}") from None


def load(
    paths: list[str],
    tags: str | None = None,
    runs: str | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> LoadResult:
    """Discover and fully read every run under ``paths`` (raises DiscoveryError, ValueError)."""
    tag_filter = compile_filter(tags, "--tags")
    run_filter = compile_filter(runs, "--runs")
    found = discover(paths)
    result = LoadResult(store=Store(), discovery=found, problems=list(found.problems))
    for source in found.runs:
        if run_filter is not None and not run_filter.search(source.name):
            continue
        run = result.store.run(source.name, source.directory)
        feeder = RunFeeder(source, run, tag_filter)
        feeder.read_all(result.problems)
        if on_progress is not None:
            on_progress(run.scalar_count())
    return result
