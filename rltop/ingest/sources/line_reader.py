"""Incremental reading of a text log, line by line, from a byte offset (veRL's console and JSONL logs).

The reader keeps the offset of the first line not read completely (a line ends at ``\n`` or at
``\r``): each call reads what was appended since, at most one window (`DEFAULT_WINDOW`) at a
time, so a huge log is read in pieces and memory stays bounded. A line the writer has not finished
waits for its end; a line longer than `MAX_LINE` is skipped, and said. The file's first bytes are
kept, so a file that shrank, was replaced or was rewritten in place is read again from the start
(RELOADED). It never raises on content: what a line holds is the decoder's business
(`LineDecoder`), and what the decoder skipped is said once per run, with the file and the counts,
when a read reaches the end of the file. Every byte is read through `rltop.ingest.storage`, so
logs on ``s3://`` work too.
"""

from __future__ import annotations

import re
from typing import Protocol

from rltop.ingest import storage
from rltop.ingest.reading import Columns, Decoded, ReadResult, points_of, skipped_message
from rltop.ingest.storage import Unreachable

DEFAULT_WINDOW = 4 << 20
MAX_LINE = 64 << 20  # a longer line is skipped without being held in memory
HEAD_BYTES = 1024  # the first bytes remembered: a file rewritten in place differs in them
TAIL_PEEK = 256  # bytes of an unfinished last line kept, for `LineDecoder.worth_saying`
LONG_LINE = "longer than the {} a line may take"
# A line ends at a newline or a carriage return: a progress bar redrawn with "\r" for hours never
# makes one long unfinished line that every read would take again.
_LINE_END = re.compile(rb"[\r\n]")


class LineDecoder(Protocol):
    """Turns complete lines of one file into points (and settings); keeps its state between reads."""

    def take(self, lines: list[bytes], wall: float) -> None:
        """Decode complete lines (without their end: ``\n`` or ``\r``), in file order; ``wall`` dates
        their points."""

    def drain(self) -> Decoded:
        """What was decoded since the previous drain."""

    def skipped(self) -> tuple[dict[str, int], dict[str, int]]:
        """What was left out so far: (points skipped, lines skipped), each reason -> count."""

    def worth_saying(self, tail: bytes) -> bool:
        """True when an unfinished last line starting with ``tail`` may hold points (a one-shot
        load then says that the file ends inside it)."""

    def reset(self) -> None:
        """Forget everything decoded: the file is read again from the start."""


class Gathered:
    """What a `LineDecoder` gathers: points per tag since the last drain, and what it left out."""

    def __init__(self) -> None:
        self.columns: Columns = {}
        self.points_skipped: dict[str, int] = {}  # why -> points
        self.lines_skipped: dict[str, int] = {}  # why -> lines

    def add(self, tag: str, step: int, wall: float, value: float) -> None:
        """One point."""
        steps, walls, values = self.columns.setdefault(tag, ([], [], []))
        steps.append(step)
        walls.append(wall)
        values.append(value)

    def skip_points(self, why: str, count: int = 1) -> None:
        """Points left out, and why."""
        self.points_skipped[why] = self.points_skipped.get(why, 0) + count

    def skip_line(self, why: str) -> None:
        """A line left out, and why."""
        self.lines_skipped[why] = self.lines_skipped.get(why, 0) + 1

    def drain(self) -> Decoded:
        """The points gathered since the last drain (a point no column holds is counted, not kept)."""
        decoded = Decoded(scalars=points_of(self.columns, self.points_skipped))
        self.columns = {}
        return decoded

    def skipped(self) -> tuple[dict[str, int], dict[str, int]]:
        """(points skipped, lines skipped) so far, by reason."""
        return dict(self.points_skipped), dict(self.lines_skipped)


class LineFileReader:
    """Reads the lines appended to one text log since the previous call (a `SourceReader`)."""

    def __init__(self, path: str, decoder: LineDecoder, window: int = DEFAULT_WINDOW,
                 max_line: int = MAX_LINE) -> None:  # fmt: skip
        self.path = path
        self.decoder = decoder
        self.window = window
        self.max_line = max(max_line, window)
        self.reset()

    def reset(self) -> None:
        """Forget everything read: the next read starts at the beginning."""
        self.offset = 0  # file position of the first line not read completely
        self._seen = 0  # the largest file size taken in
        self._head = b""
        self._identity: object = None
        self._checked: object = None  # the file's version when it was last read
        self._stamp: tuple[int, object] | None = None  # (size, version) of the last read that waited
        self._grow = 1  # window multiplier: a line longer than the window is read whole next time
        self._skipping = False  # inside a line longer than `max_line`: drop bytes up to its newline
        self._long_lines = 0
        self._tail = b""  # the start of an unfinished last line
        self._said: set[str] = set()  # reasons of skipped points or lines said already
        self.decoder.reset()

    @property
    def pending_bytes(self) -> int:
        """Bytes on disk past the last complete line (a line the writer has not finished)."""
        return 0 if self._skipping else max(self._seen - self.offset, 0)

    def read(self) -> ReadResult:
        """Read and decode the lines appended since the last call (at most about one window)."""
        result = ReadResult()
        try:
            with storage.open_file(self.path) as handle:
                stat = handle.stat()
                result.mtime = stat.mtime
                reason = storage.restart_reason(
                    handle, stat, self._identity, self._checked, self._seen, self._head
                )
                if reason is not None:
                    result.restart(self.path, reason)
                    self.reset()
                    return result
                self._identity, self._checked = stat.identity, stat.version
                if stat.size <= self.offset or self._stamp == (stat.size, stat.version):
                    return result  # nothing new, or the same unfinished line as last time
                start = self.offset
                data = handle.read(start, min(stat.size - start, self.window * self._grow))
        except Unreachable:
            raise  # the whole storage, not this file: the watcher retries it with back-off
        except OSError as error:
            result.problems.append(f"{self.path}: cannot read: {error.strerror or error}")
            return result
        if start == 0 and len(self._head) < HEAD_BYTES:
            self._head = data[:HEAD_BYTES]
        at_eof = start + len(data) >= stat.size
        self._take(data, start, at_eof, stat.mtime, result)
        result.bytes_read = max(start + len(data) - self._seen, self.offset - start, 0)
        self._seen = max(self._seen, start + len(data))
        self._stamp = (stat.size, stat.version) if at_eof and self.offset < stat.size else None
        if not at_eof:
            result.more = True
        else:
            said = self._skipped_line()
            if said is not None:
                result.problems.append(said)
        return result

    def _take(self, data: bytes, start: int, at_eof: bool, mtime: float, result: ReadResult) -> None:
        """Decode the complete lines of ``data`` (read at ``start``) and move past them."""
        if self._skipping:  # the rest of an over-long line: drop it up to its end
            found = _LINE_END.search(data)
            cut = found.start() if found else -1
            if cut < 0:
                self.offset = start + len(data)
                return
            self._skipping = False
            data, start = data[cut + 1 :], start + cut + 1
            self.offset = start
        end = max(data.rfind(b"\n"), data.rfind(b"\r"))
        if end < 0:
            if not at_eof:  # a window without a newline: the line is longer than the window
                if self.window * self._grow >= self.max_line:
                    self._skipping = True
                    self._long_lines += 1
                    self._grow = 1
                    self.offset = start + len(data)
                else:
                    self._grow *= 2
            self._tail = data[:TAIL_PEEK]
            return
        complete = data[:end]
        self.decoder.take(
            (complete.replace(b"\r", b"\n") if b"\r" in complete else complete).split(b"\n"), mtime
        )
        self.offset = start + end + 1
        self._grow = 1
        self._tail = data[end + 1 : end + 1 + TAIL_PEEK]
        result.decoded = self.decoder.drain()

    def _skipped_line(self) -> str | None:
        """The line saying what was left out, once a reason not said yet appears (None: nothing new)."""
        points, lines = self.decoder.skipped()
        lines = dict(lines)
        if self._long_lines:
            lines[LONG_LINE.format(size_text(self.max_line))] = self._long_lines
        reasons = {f"point:{why}" for why, n in points.items() if n} | {
            f"line:{why}" for why, n in lines.items() if n
        }
        if reasons <= self._said:
            return None
        self._said |= reasons
        parts = [f"{n} line{'s' if n != 1 else ''} skipped ({why})" for why, n in lines.items() if n]
        if any(points.values()):
            return "; ".join([skipped_message(self.path, points), *parts])
        return f"{self.path}: {'; '.join(parts)}"

    def unfinished(self) -> str | None:
        """What a one-shot load should say about the end of the file (None: nothing worth saying)."""
        if self._skipping:
            return f"{self.path}: ends inside a line {LONG_LINE.format(size_text(self.max_line))}; not read"
        if self.pending_bytes and self.decoder.worth_saying(self._tail):
            return (
                f"{self.path}: its last line is not finished ({self.pending_bytes} bytes at byte "
                f"{self.offset}, no newline yet); not read"
            )
        return None


def size_text(size: int) -> str:
    """``64 MB``, ``4 KB``, ``512 bytes``: a size as people say it (whole units)."""
    for unit, shift in (("MB", 20), ("KB", 10)):
        if size >= 1 << shift:
            return f"{size >> shift} {unit}"
    return f"{size} bytes"
