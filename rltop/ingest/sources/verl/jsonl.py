"""The ``verl_jsonl`` source kind: veRL's file logger (``trainer.logger=['file']``), JSON Lines.

``FileLogger`` (``verl/utils/tracking.py``) writes ``$VERL_FILE_LOGGER_PATH``, or else
``${VERL_FILE_LOGGER_ROOT:-.}/<project_name>/<experiment_name>.jsonl``: one line per
``Tracking.log`` call, ``{"step": N, "data": {key: value, …}}`` (decoded by
`rltop.ingest.sources.verl.jsonl_reader`). A run is one such file, named after the file without ``.jsonl``
inside its folder (``<project>/<experiment>``). veRL opens it with mode ``"w"``/``"wb"``: a
restarted training truncates it and writes again, and rltop reads it again (RELOADED).

A ``.jsonl`` file is one of veRL's only when its first record is such a record, with exactly these
two keys (`SourceKind.accepts`): veRL's own rollout dumps and other tools' JSON Lines are not runs.
"""

from __future__ import annotations

import json
from typing import Any

from rltop.ingest import storage
from rltop.ingest.reading import SourceKind, SourceReader
from rltop.ingest.sources.content_check import HeadCheck, complete_lines

SUFFIX = ".jsonl"
PROBED_LINES = 20  # non-empty lines of the head looked at for a record
_STARTS = (b'{"step":', b'{"step": ')  # how both writers begin a line


def claims_name(name: str) -> bool:
    """True for a ``*.jsonl`` name."""
    return name.endswith(SUFFIX) and len(name) > len(SUFFIX)


def is_record(document: Any) -> bool:
    """True for what veRL's FileLogger writes: an object of exactly ``step`` and ``data`` (an object)."""
    return (
        isinstance(document, dict)
        and set(document) == {"step", "data"}
        and isinstance(document["data"], dict)
    )


def looks_like_jsonl(head: bytes, whole: bool) -> bool:
    """True when the first record among the first lines of a file is veRL's ``{"step", "data"}``."""
    lines = [line.strip() for line in complete_lines(head, whole) if line.strip()]
    if not lines:
        return head.lstrip().startswith(_STARTS)  # a first line longer than the head
    for line in lines[:PROBED_LINES]:
        try:
            document = json.loads(line)
        except (ValueError, RecursionError):
            continue  # a damaged line: the next may be whole
        return is_record(document)
    return False


def run_directory(path: str) -> str:
    """``<folder>/<experiment>.jsonl`` -> ``<folder>/<experiment>`` (the run's name: the file's stem)."""
    return storage.join(storage.parent(path), storage.name(path)[: -len(SUFFIX)])


def _open(path: str) -> SourceReader:
    from rltop.ingest.sources.line_reader import LineFileReader
    from rltop.ingest.sources.verl.jsonl_reader import JsonlDecoder

    return LineFileReader(path, JsonlDecoder())


KIND = SourceKind(
    name="verl_jsonl",
    label="veRL file logs",
    pattern="<project>/<experiment>.jsonl",
    claims=claims_name,
    run_directory=run_directory,
    order=lambda path: path,
    open=_open,
    output_dir=storage.parent,  # the project folder holding the file
    rank=3,  # as veRL's console logs: both are kept where both are
    summary="read from veRL's file logger (JSON lines; points are dated when they were read)",
    quiet_hint="training stopped, or its file logger buffers (veRL before 0.8 writes in 8 KiB blocks)",
    accepts=HeadCheck(looks_like_jsonl),
)
