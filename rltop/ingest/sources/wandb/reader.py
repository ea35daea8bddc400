"""Incremental reading of one W&B run file (``run-<id>.wandb``) from a byte offset.

The reader keeps the offset of the first record not read completely, so each call reads what was
appended since: a record the SDK has not finished writing (a chunk cut short, a FIRST chunk whose
LAST is not written yet) is read again from its start on the next call, never an error. It never
raises on damaged data: `rltop.ingest.sources.wandb.leveldb_log.scan` skips the damage and resynchronises, and
the reader says where and how much, in one line per damaged span however many blocks and reads it
covers (a file of garbage is one span). A damaged file header is one more damaged span when valid
records follow it; a file whose start holds no record at all is named (zeros: not written yet or
damaged; anything else: not a W&B file or damaged), never an empty run without a word. What the
records hold that no column can (`rltop.ingest.sources.wandb.records`) is said once per file, with its
counts, at the first read that reaches the file's end. The file's first bytes are remembered, so a
file replaced, truncated or rewritten in place is read again from the start (RELOADED).
"""

from __future__ import annotations

from collections import Counter

from rltop.ingest import storage
from rltop.ingest.reading import ReadResult
from rltop.ingest.sources.tfevents.tfrecord.frames import merge_spans
from rltop.ingest.sources.wandb import leveldb_log
from rltop.ingest.sources.wandb.kind import MissingWandb, record_class
from rltop.ingest.sources.wandb.records import RunRecords
from rltop.ingest.storage import FileHandle, FileStat, Unreachable

DEFAULT_WINDOW = 4 << 20
HEAD_BYTES = 64  # the file header and the SDK's first record: a rewritten file differs in them
RECHECK_BYTES = 1 << 16  # an unfinished tail up to this size is read again on every call (bytes landing)
QUIET_PENDING = 1 << 20  # a one-shot load mentions an unfinished record this large or larger


class WandbFileReader:
    """Reads the records appended to one ``.wandb`` file since the previous call."""

    def __init__(self, path: str, window: int = DEFAULT_WINDOW) -> None:
        self.path = path
        self.window = window
        self.reset()

    def reset(self) -> None:
        """Forget everything read: the next read starts at the beginning."""
        self.offset = 0  # file position of the first record not read completely
        self._seen = 0  # the largest file size taken in
        self._head = b""
        self._identity: object = None
        self._checked: object = None  # the file's version when it was last read
        self._stamp: tuple[int, object] | None = None  # (size, version) of the last read that waited
        self._records = RunRecords()
        self._retry = False
        self._not_wandb: str | None = None
        self._zeros: int | None = None  # bytes probed when the file starts with zeros and no record
        self._probed: tuple[int, object] | None = None  # (size, version) of the last such probe
        self._header_damaged = False  # the 7 header bytes are damaged, not said yet
        self._open: tuple[int, int] | None = None  # a damaged span reaching ``offset``: it may go on
        self._open_said = False
        self._odd_said = False  # `RunRecords.odd_values` said (once, at the first read to the end)
        self._unusable: Counter[str] = Counter()  # records skipped: why (undecodable, …)
        self._first_unusable: int | None = None
        self._grow = 1  # window multiplier: a record longer than the window is read whole next time

    @property
    def pending_bytes(self) -> int:
        """Bytes on disk past the last complete record (a record the writer has not finished)."""
        return max(self._seen - self.offset, 0)

    def read(self) -> ReadResult:
        """Read and decode what was appended since the last call (at most about one window)."""
        result = ReadResult()
        try:
            record = record_class()
        except MissingWandb as error:
            result.problems.append(f"{self.path}: {error}")
            return result
        try:
            with storage.open_file(self.path) as handle:
                stat = handle.stat()
                reason = storage.restart_reason(
                    handle, stat, self._identity, self._checked, self._seen, self._head
                )
                if reason is not None:
                    result.restart(self.path, reason)
                    self.reset()
                self._identity, self._checked = stat.identity, stat.version
                if self._not_wandb is not None or not self._header_ok(handle, stat, result):
                    return result
                if stat.size <= self.offset:
                    return result
                if self._stamp == (stat.size, stat.version) and stat.size - self.offset > RECHECK_BYTES:
                    return result  # the same large unfinished tail as last time: read it once it changes
                length = min(stat.size - self.offset, self.window * self._grow)
                start = self.offset
                data = handle.read(start, length)
        except Unreachable:
            raise  # the whole storage, not this file: the watcher retries it with back-off
        except OSError as error:
            result.problems.append(f"{self.path}: cannot read: {error.strerror or error}")
            return result
        at_eof = start + len(data) >= stat.size
        self._take(record, start, data, at_eof, result)
        result.bytes_read = max(start + len(data) - self._seen, self.offset - start, 0)
        self._seen = max(self._seen, start + len(data))
        self._stamp = (stat.size, stat.version) if at_eof and self.offset < stat.size else None
        if not at_eof:
            result.more = True
            self._grow = 1 if self.offset > start else self._grow * 2  # no progress: a longer record
        elif not self._odd_said:
            odd = self._odd_values()
            if odd is not None:  # said once, with the counts of the whole file (one-shot loads)
                result.problems.append(f"{self.path}: {odd}")
                self._odd_said = True
        return result

    def _header_ok(self, handle: FileHandle, stat: FileStat, result: ReadResult) -> bool:
        """Check the file header once; False while it is not whole or when it is not W&B's."""
        if self.offset >= len(leveldb_log.FILE_HEADER):
            return True
        if stat.size < len(leveldb_log.FILE_HEADER):
            return False  # just created: the SDK writes its header with its first flush
        head = handle.read(0, HEAD_BYTES)
        header = head[: len(leveldb_log.FILE_HEADER)]
        if header[:6] != leveldb_log.FILE_HEADER[:6]:
            if self._probed == (stat.size, stat.version):
                return False  # probed as it is now: nothing to find
            self._probed = (stat.size, stat.version)
            probed = min(stat.size, self.window)
            if not _records_follow(handle.read(0, probed)):
                if not any(header):  # zeros: bytes not landed yet on a network file system, or damage
                    self._zeros = probed
                    return False
                self._not_wandb = (
                    f'{self.path}: no W&B header (":W&B" and its magic) at the start and no valid '
                    f"record in its first {probed} bytes; not a W&B run file, or damaged"
                )
                result.problems.append(self._not_wandb)
                return False
            # A damaged header in front of records that check: the records are what matters.
            self._header_damaged = True
            self._zeros = None
        elif header != leveldb_log.FILE_HEADER:
            result.problems.append(
                f"{self.path}: W&B file format version {header[6]} (rltop knows 0); reading it anyway"
            )
        self._head = head
        self.offset = len(leveldb_log.FILE_HEADER)
        return True

    def _take(self, record: type, start: int, data: bytes, at_eof: bool, result: ReadResult) -> None:
        """Decode the records in ``data`` (read at ``start``, a record start) and move past them."""
        from google.protobuf.message import DecodeError

        scan = leveldb_log.scan(data, start, at_eof)
        damage = [where for where, _ in scan.damage]
        if self._open is not None and (self._open[0] > 0 or self._open[1] > len(leveldb_log.FILE_HEADER)):
            damage.insert(0, self._open[0])  # damage (not the header alone) ran up to this read
        damage.reverse()
        for where, payload in scan.records:
            if damage and damage[-1] < where:
                self._records.damaged()  # the records lost may have declared the steps, or been rows
                while damage and damage[-1] < where:
                    damage.pop()
            message = record()
            try:
                message.ParseFromString(payload)
                self._records.take(message)
            except DecodeError:
                self._unusable_record("undecodable", where)
            except Exception as error:  # a value nobody foresaw costs its record, never the run
                self._unusable_record(f"unreadable ({type(error).__name__})", where)
        self._report_damage(scan, start + len(data), at_eof, result)
        self.offset = scan.consumed
        self._retry = scan.retry
        result.decoded = self._records.drain()
        note = self._records.steps_note()
        if note is not None:
            result.problems.append(f"{self.path}: {note}")

    def _unusable_record(self, why: str, where: int) -> None:
        """Count a record that checks but cannot be used (said once, with the other odd values)."""
        self._unusable[why] += 1
        if self._first_unusable is None:
            self._first_unusable = where

    def _odd_values(self) -> str | None:
        """The once-said line: points and config values left out, records skipped (None: none)."""
        parts = []
        if self._unusable:
            total = sum(self._unusable.values())
            why = ", ".join(f"{count} {reason}" for reason, count in sorted(self._unusable.items()))
            parts.append(f"{total} record{'s' if total != 1 else ''} skipped ({why}; the first at byte "
                         f"{self._first_unusable})")  # fmt: skip
        odd = self._records.odd_values()
        if odd is not None:
            parts.append(odd)
        return "; ".join(parts) or None

    def _report_damage(
        self, scan: leveldb_log.LogScan, data_end: int, at_eof: bool, result: ReadResult
    ) -> None:
        """One line per damaged span, however many blocks and reads it covers.

        A span that reaches where the scan stopped may go on in the next read (the next window, or
        bytes still being written): it is held until a record follows it, and said when the read
        reaches the end of the file (once: its growth later is not said again).
        """
        spans = list(scan.damage)
        if self._header_damaged:  # the 7 header bytes: one span with the damage right after them
            spans.append((0, len(leveldb_log.FILE_HEADER)))
            self._header_damaged = False
        said_upto = None  # a held span said already: its start
        if self._open is not None:
            continues = any(where <= self._open[1] for where, _ in spans) or not scan.records
            if continues:
                spans.append(self._open)
                said_upto = self._open[0] if self._open_said else None
            else:
                self._say_span(*self._open, result, said=self._open_said)
            self._open = None
        spans = merge_spans(spans)
        if (
            spans
            and spans[-1][0] + spans[-1][1] >= scan.consumed
            and not (scan.records and scan.records[-1][0] > spans[-1][0])
        ):
            where, size = spans.pop()
            self._open = (where, max(where + size, scan.consumed))
            self._open_said = said_upto == where
        for where, size in spans:
            self._say_span(where, where + size, result, said=said_upto == where)
        if self._open is not None and at_eof and not self._open_said:
            to_end = scan.retry or scan.consumed >= data_end
            end = data_end if to_end else self._open[1]
            self._say_span(self._open[0], end, result, said=False, to_end=to_end)
            self._open_said = True

    def _say_span(self, where: int, end: int, result: ReadResult, said: bool, to_end: bool = False) -> None:
        """The one line of a damaged span (nothing when it was said already)."""
        if not said:
            result.problems.append(self._span_line(where, end, to_end))

    def _span_line(self, where: int, end: int, to_end: bool) -> str:
        """The line said for the damaged span [where, end): "…: corrupt data at byte N (M bytes …"."""
        if (where, end) == (0, len(leveldb_log.FILE_HEADER)):
            return f"{self.path}: damaged W&B file header; reading its records anyway"
        header = ", the W&B file header included" if where == 0 else ""
        if to_end:
            return (
                f"{self.path}: corrupt data at byte {where} ({end - where} bytes{header}, to the end of "
                "the file); skipped"
            )
        return (
            f"{self.path}: corrupt data at byte {where} ({end - where} bytes skipped{header}); "
            "resynchronised on the next valid record"
        )

    def unfinished(self) -> str | None:
        """What a one-shot load should say about the end of the file (None: nothing worth saying)."""
        if self._not_wandb is not None:
            return None  # said already
        if self._zeros is not None and self.offset == 0:
            return (
                f"{self.path}: no W&B header and no valid record in its first {self._zeros} bytes "
                "(zeros: not written yet, or damaged); nothing read"
            )
        if self._open is not None and not self._open_said:
            return self._span_line(self._open[0], self._seen, to_end=True)
        if self._retry and self._open is None:
            return (
                f"{self.path}: the last record (at byte {self.offset}) does not match its checksum: "
                "damaged, or not completely written yet; skipped"
            )
        if self.pending_bytes >= QUIET_PENDING:
            return (
                f"{self.path}: file ends inside a record ({self.pending_bytes} bytes at byte "
                f"{self.offset}); not read"
            )
        return None


def _records_follow(probe: bytes) -> bool:
    """True when a valid record follows the 7 header bytes somewhere in ``probe`` (a file's first
    bytes): the header is damaged, not the file foreign."""
    start = len(leveldb_log.FILE_HEADER)
    return bool(leveldb_log.scan(probe[start:], start, True).records)
