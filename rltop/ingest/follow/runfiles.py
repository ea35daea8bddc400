"""The source files of one run, each with its kind's reader: no store, no thread.

`rltop.ingest.follow.loader.load` (one shot) and the live watcher both read runs through `RunFiles`, so a
file is always read the same way: from its offset, in its kind's reading order (event files: the
writers' start times), with a lasting error (a file that cannot be opened) reported once rather
than on every poll. A kind read from its newest file only (trainer_state.json) has one reader,
which follows the newest of the run's files (`paths` is then that one file). A reader that raises
(it should report problems as text) costs only its own file: `RunFiles.read` says it once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rltop.ingest import sources, storage
from rltop.ingest.reading import ReadResult, SourceReader


def reading_failed(path: str, error: Exception) -> str:
    """The one line said when reading ``path`` raised where a reader should have reported."""
    return (f"{path}: reading failed ({type(error).__name__}: {error}); the points read before are "
            "kept, the other runs are read as usual; please report it")  # fmt: skip


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
    """The readers of one run's source files, in reading order."""

    def __init__(self, name: str, directory: str, files: list[str] | None = None,
                 kind: str = sources.DEFAULT) -> None:  # fmt: skip
        self.name = name
        self.directory = directory
        self.kind = sources.kind(kind)
        self.readers: dict[str, SourceReader] = {}  # file -> its reader (newest only: the newest file)
        self._known: list[str] = []  # every file of the run, in reading order
        self._trouble: dict[str, str] = {}  # path -> problem already reported and still going on
        for path in files or ():
            self.add_file(path)

    def add_file(self, path: str) -> bool:
        """Know ``path`` (kept in reading order); True when it is new and must be read."""
        if path in self._known:
            return False
        self._known.append(path)
        self._known.sort(key=self.kind.order)
        if not self.kind.newest_only:
            self.readers[path] = self.kind.open(path)
            self.readers = {p: self.readers[p] for p in self._known}
            return True
        return self._follow_newest()

    def forget_file(self, path: str) -> None:
        """Stop reading a file that disappeared (its points already read stay with the consumer)."""
        if path in self._known:
            self._known.remove(path)
        self._trouble.pop(path, None)
        reader = self.readers.pop(path, None)
        if self.kind.newest_only and reader is not None and self._known:
            self.readers[self._known[-1]] = reader
            reader.follow(list(self._known))

    def _follow_newest(self) -> bool:
        """The newest file changed? Move the one reader to it (True: the new newest must be read)."""
        newest = self._known[-1]
        if newest in self.readers:
            self.readers[newest].follow(list(self._known))
            return False
        reader = next(iter(self.readers.values()), None) or self.kind.open(newest)
        reader.follow(list(self._known))
        self.readers = {newest: reader}
        return True

    @property
    def paths(self) -> list[str]:
        """The files to read, in reading order."""
        return list(self.readers)

    @property
    def known(self) -> list[str]:
        """Every file of the run (also those a newest-only kind does not read), in reading order."""
        return list(self._known)

    def newest_path(self) -> str | None:
        """The file the writer most likely still appends to (the last one started)."""
        return next(reversed(self.readers), None)

    def read(self, path: str) -> FileRead:
        """Read one window of what is new in ``path`` (call again while ``.more``)."""
        try:
            result = self.readers[path].read()
        except storage.Unreachable:
            raise  # the whole store: the watcher retries the root with back-off
        except Exception as error:  # a reader's bug costs this file's next points, never another run
            result = ReadResult(problems=[reading_failed(path, error)])
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

    def forget_trouble(self, path: str) -> None:
        """The problem of ``path`` was not shown: say it the next time it happens."""
        self._trouble.pop(path, None)

    def reset(self) -> None:
        """Forget what every reader read: the next reads start from the beginning."""
        for reader in self.readers.values():
            reader.reset()

    def unfinished(self, path: str) -> str | None:
        """What the end of ``path`` hides after reading it to its end (see `SourceReader.unfinished`)."""
        return self.readers[path].unfinished()

    def pending_bytes(self) -> int:
        """Bytes read but still waiting for the rest of their record, over all files."""
        return sum(reader.pending_bytes for reader in self.readers.values())
