"""Recognising a source file by its first bytes, once per file: `SourceKind.accepts` for generic names.

Some kinds cannot be told by name: a veRL console log is whatever its user redirected stdout to
(``train.log``, ``slurm-42.out``, ``nohup.out``), a veRL file log is a ``.jsonl`` like many others.
Their kinds claim such names (cheap, by name: native file events ask it) and add a content check,
`HeadCheck`: a predicate over the file's first bytes, which discovery asks for each claimed file
(`rltop.ingest.sources.recognise`). A file the predicate rejects is simply not a run of that kind,
silently: the ``train.log`` of another tool never becomes an empty run.

The bytes are read once: a verdict is kept for the file as long as it is the same file that only
grew, and asked again only while the bytes the predicate saw could still change its mind (a log
still shorter than the head: its first lines are still being written). A file that shrank or was
replaced is asked again. Every read goes through `rltop.ingest.storage` (local files and URLs); a
file that cannot be read now is not accepted now (the next listing asks again). A binary file (a
checkpoint blob without an extension) is told from its first `PROBE_BYTES` and costs no more.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import NamedTuple

from rltop.ingest import storage

PROBE_BYTES = 4096  # read first: a binary file is rejected on these alone
HEAD_BYTES = 256 << 10  # what the predicate sees at most
_BINARY_SHARE = 0.10  # more than this share of control bytes (NUL, …) in the probe: not a text log
# Bytes that are not suspicious in a log: printable ones and the controls logs do hold (tabs, ANSI
# colours, carriage returns of progress bars); what remains of a probe without them is binary-looking.
_TEXT_BYTES = bytes(range(32, 256)) + b"\t\n\r\x1b\x0c\x08"


class _Verdict(NamedTuple):
    identity: object
    size: int  # the file's size when it was looked at
    accepted: bool


class HeadCheck:
    """A cached content check: ``HeadCheck(predicate)(path) -> bool``.

    ``predicate(head, whole)`` gets the file's first bytes (at most ``head_bytes``; the last line
    may be cut, unless ``whole`` says the file ended there) and says whether the file is one of
    its kind. With ``text`` a file whose first `PROBE_BYTES` look binary is rejected unread.
    """

    def __init__(self, predicate: Callable[[bytes, bool], bool], head_bytes: int = HEAD_BYTES,
                 text: bool = True) -> None:  # fmt: skip
        self.predicate = predicate
        self.head_bytes = head_bytes
        self.text = text
        self._verdicts: dict[str, _Verdict] = {}
        self._lock = threading.Lock()  # listings of several roots run on several threads

    def __call__(self, path: str) -> bool:
        """True when the file at ``path`` is one of this kind (raises only `storage.Unreachable`)."""
        try:
            stat = storage.stat(path)
        except storage.Unreachable:
            raise
        except OSError:
            return False
        with self._lock:
            known = self._verdicts.get(path)
        if known is not None and self._still(known, stat):
            return known.accepted
        try:
            accepted = self._look(path, stat.size)
        except storage.Unreachable:
            raise
        except OSError:
            return False  # unreadable now: asked again at the next listing
        with self._lock:
            self._verdicts[path] = _Verdict(stat.identity, stat.size, accepted)
        return accepted

    def _still(self, known: _Verdict, stat: storage.FileStat) -> bool:
        """True when the verdict still holds: the same file, grown at most past what was looked at."""
        if stat.identity != known.identity or stat.size < known.size:
            return False  # replaced, or truncated and rewritten: look again
        return known.accepted or known.size >= self.head_bytes or stat.size == known.size

    def _look(self, path: str, size: int) -> bool:
        with storage.open_file(path) as handle:
            head = handle.read(0, min(size, PROBE_BYTES))
            if not head or (self.text and looks_binary(head)):
                return False
            if size > len(head):
                head = handle.read(0, min(size, self.head_bytes))
        try:
            return bool(self.predicate(head, len(head) >= size))
        except Exception:  # content no predicate foresaw: not a file of the kind, never a failed listing
            return False

    def forget(self) -> None:
        """Drop every verdict (tests; a listing after it reads the files again)."""
        with self._lock:
            self._verdicts.clear()


def looks_binary(probe: bytes) -> bool:
    """True when ``probe`` holds too many control bytes for text (a log may hold a few NULs)."""
    controls = len(probe.translate(None, _TEXT_BYTES))
    return controls > _BINARY_SHARE * len(probe)


def complete_lines(head: bytes, whole: bool) -> list[bytes]:
    """The lines of ``head`` a predicate may judge: the last one only when the file ended there."""
    lines = head.split(b"\n")
    if not whole:
        lines.pop()  # cut by the head's size, or still being written
    return lines
