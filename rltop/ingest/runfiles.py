"""The event files of one run, each with its incremental reader: no store, no thread.

`rltop.ingest.loader.load` (one shot) and the live watcher both read runs through `RunFiles`, so a
file is always read the same way: from its offset, in order of the writers' start times, with a
lasting error (a file that cannot be opened) reported once rather than on every poll.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from rltop.ingest.discovery import event_file_order
from rltop.ingest.tfrecord.reader import EventFileReader, ReadResult


@dataclass
class FileRead:
    """One read of one file: the reader's result plus the problems worth showing."""

    path: str
    result: ReadResult
    problems: list[str] = field(default_factory=list)

    @property
    def more(self) -> bool:
        """The file holds more than this read took (read it again)."""
        return self.result.more


class RunFiles:
    """The readers of one run's event files, in the order they were started."""

    def __init__(self, name: str, directory: str, files: list[str] | None = None) -> None:
        self.name = name
        self.directory = directory
        self.readers: dict[str, EventFileReader] = {}
        self._trouble: dict[str, str] = {}  # path -> problem already reported and still going on
        for path in files or ():
            self.add_file(path)

    def add_file(self, path: str) -> bool:
        """Start reading ``path`` (kept in writer start order); False if it was already known."""
        if path in self.readers:
            return False
        self.readers[path] = EventFileReader(path)
        if len(self.readers) > 1:
            ordered = sorted(self.readers, key=lambda p: event_file_order(os.path.basename(p)))
            self.readers = {p: self.readers[p] for p in ordered}
        return True

    def forget_file(self, path: str) -> None:
        """Stop reading a file that disappeared (its points already read stay with the consumer)."""
        self.readers.pop(path, None)
        self._trouble.pop(path, None)

    @property
    def paths(self) -> list[str]:
        """Every known file, in reading order."""
        return list(self.readers)

    def newest_path(self) -> str | None:
        """The file the writer most likely still appends to (the last one started)."""
        return next(reversed(self.readers), None)

    def read(self, path: str) -> FileRead:
        """Read one window of what is new in ``path`` (call again while ``.more``)."""
        result = self.readers[path].read()
        problems = result.problems
        if problems and not result.bytes_read:
            # The same error on every poll (a file we may not open) is said once, until it clears.
            key = "\n".join(problems)
            if self._trouble.get(path) == key:
                problems = []
            else:
                self._trouble[path] = key
        elif path in self._trouble:
            del self._trouble[path]
        return FileRead(path, result, list(problems))

    def unfinished(self, path: str) -> str | None:
        """What the end of ``path`` hides after reading it to its end (see `EventFileReader.unfinished`)."""
        return self.readers[path].unfinished()

    def pending_bytes(self) -> int:
        """Bytes read but still waiting for the rest of their record, over all files."""
        return sum(reader.pending_bytes for reader in self.readers.values())
