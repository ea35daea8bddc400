"""Incremental reading of one W&B run file (``run-<id>.wandb``) from a byte offset.

The reader keeps the offset of the first record not read completely, so each call reads what was
appended since: a record the SDK has not finished writing (a chunk cut short, a FIRST chunk whose
LAST is not written yet) is read again from its start on the next call, never an error. It never
raises on damaged data: `rltop.ingest.leveldb_log.scan` skips the damage and resynchronises, and
the reader says where and how much. The file's first bytes are remembered, so a file replaced,
truncated or rewritten in place is read again from the start (RELOADED).
"""

from __future__ import annotations

from rltop.ingest import leveldb_log, storage
from rltop.ingest.reading import ReadResult
from rltop.ingest.storage import FileHandle, FileStat, Unreachable
from rltop.ingest.tfrecord.frames import merge_spans
from rltop.ingest.wandb_records import RunRecords
from rltop.ingest.wandb_run import MissingWandb, record_class

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
                reason = self._restart_reason(handle, stat)
                if reason is not None:
                    result.problems.append(f"{self.path}: file {reason}; reading it again from the start")
                    self.reset()
                    result.restarted = True
                self._identity, self._checked = stat.identity, stat.version
                if self._not_wandb is not None or not self._header_ok(handle, stat.size, result):
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
        return result

    def _header_ok(self, handle: FileHandle, size: int, result: ReadResult) -> bool:
        """Check the file header once; False while it is not whole or when it is not W&B's."""
        if self.offset >= len(leveldb_log.FILE_HEADER):
            return True
        if size < len(leveldb_log.FILE_HEADER):
            return False  # just created: the SDK writes its header with its first flush
        head = handle.read(0, HEAD_BYTES)
        header = head[: len(leveldb_log.FILE_HEADER)]
        if header[:6] != leveldb_log.FILE_HEADER[:6] and _first_chunk_checks(handle, size):
            # A damaged header in front of records that check: the records are what matters.
            result.problems.append(f"{self.path}: damaged W&B file header; reading its records anyway")
        elif header[:6] != leveldb_log.FILE_HEADER[:6]:
            if not any(header):
                return False  # zeros: bytes not landed yet on a network file system
            self._not_wandb = (
                f'{self.path}: no W&B header (":W&B" and its magic) at the start; not a W&B run file?'
            )
            result.problems.append(self._not_wandb)
            return False
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
        for where, payload in scan.records:
            message = record()
            try:
                message.ParseFromString(payload)
            except DecodeError:
                result.problems.append(f"{self.path}: undecodable record at byte {where}; skipped")
                continue
            self._records.take(message)
        for where, skipped in merge_spans(scan.damage):
            result.problems.append(
                f"{self.path}: corrupt data at byte {where} ({skipped} bytes skipped); "
                "resynchronised on the next valid record"
            )
        self.offset = scan.consumed
        self._retry = scan.retry
        result.decoded = self._records.drain()

    def unfinished(self) -> str | None:
        """What a one-shot load should say about the end of the file (None: nothing worth saying)."""
        if self._not_wandb is not None:
            return None  # said already
        if self._retry:
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

    def _restart_reason(self, handle: FileHandle, stat: FileStat) -> str | None:
        """Why what was read no longer describes the file (None when it still does)."""
        if self._checked is None:
            return None
        if stat.identity != self._identity:
            return "was replaced"
        if stat.size < self._seen:
            return "shrank"
        if self._head and stat.version != self._checked and handle.read(0, len(self._head)) != self._head:
            return "was rewritten"
        return None


def _first_chunk_checks(handle: FileHandle, size: int) -> bool:
    """True when a valid chunk follows the 7 header bytes (the header alone is damaged)."""
    start = len(leveldb_log.FILE_HEADER)
    probe = handle.read(0, min(size, leveldb_log.BLOCK))
    return leveldb_log.chunk_ok(probe, start) is not None
