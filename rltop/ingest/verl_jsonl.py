"""The ``verl_jsonl`` source kind: veRL's file logger (``trainer.logger=['file']``), JSON Lines.

``FileLogger`` (``verl/utils/tracking.py``) writes ``$VERL_FILE_LOGGER_PATH``, or else
``${VERL_FILE_LOGGER_ROOT:-.}/<project_name>/<experiment_name>.jsonl``: one line per
``Tracking.log`` call, ``{"step": N, "data": {key: value, …}}``. A run is one such file, named after
the file without ``.jsonl`` inside its folder (``<project>/<experiment>``). veRL opens it with mode
``"w"``/``"wb"``: a restarted training truncates it and writes again, and rltop reads it again
(RELOADED).

Values as the two writers put them: since veRL 0.8, ``orjson.dumps(…, OPT_SERIALIZE_NUMPY)``
(compact; NaN and ±Infinity written as ``null``, so ``null`` is read as NaN: a NaN incident must
stay visible); veRL 0.6–0.7, ``json.dumps`` (``NaN``, ``Infinity``, ``-Infinity``, which Python's
JSON reads). A bool is 1/0 (as the console logger and TensorBoard show it), a number written as a
string is that number, a nested object's keys are joined with ``/``. Anything else (a text, a list)
is no point: skipped and counted, said once per run with the file. The file holds no config; the
run's config says only ``framework: verl``. Lines carry no time: a point is dated by the file's
modification time at the read that found it.

A ``.jsonl`` file is one of veRL's only when its first line is such a record (`SourceKind.accepts`):
veRL's own rollout dumps and other tools' JSON Lines are not runs.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from rltop.ingest import storage
from rltop.ingest.content_check import HeadCheck, complete_lines
from rltop.ingest.reading import (
    OUT_OF_RANGE,
    Columns,
    Decoded,
    SourceKind,
    SourceReader,
    points_of,
    step_fits,
)
from rltop.ingest.verl_console import FRAMEWORK, FRAMEWORK_KEY

SUFFIX = ".jsonl"
PROBED_LINES = 20  # non-empty lines of the head looked at for a record
NOT_JSON = "not JSON"
NOT_RECORD = 'not a {"step": N, "data": {…}} record'
STEP_TYPE = "step not an integer"
VALUE_RANGE = "value too large for a float"
TEXT = "a text, not a number"
OTHER = "a list or another object, not a number"
_NUMBER = re.compile(r"\s*[+-]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|nan|inf|infinity)\s*", re.I)
_LARGEST = 1.7976931348623157e308
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


class JsonlDecoder:
    """Decodes the lines of one veRL JSONL log (`rltop.ingest.line_reader.LineDecoder`)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget everything decoded."""
        self._columns: Columns = {}
        self._points_skipped: dict[str, int] = {}
        self._lines_skipped: dict[str, int] = {}
        self._config_sent = False

    def take(self, lines: list[bytes], wall: float) -> None:
        """Decode complete lines, one record each."""
        for raw in lines:
            text = raw.strip()
            if not text:
                continue
            try:
                record = json.loads(text)
            except (ValueError, RecursionError):
                self._skip_line(NOT_JSON)
                continue
            if not is_record(record):
                self._skip_line(NOT_RECORD)
                continue
            self._record(record["step"], record["data"], wall)

    def _record(self, step: Any, data: dict[str, Any], wall: float) -> None:
        items = list(_items(data, ""))
        if isinstance(step, float) and step.is_integer():
            step = int(step)
        why = STEP_TYPE if isinstance(step, bool) or not isinstance(step, int) else None
        if why is None and not step_fits(step):
            why = OUT_OF_RANGE
        if why is not None:
            self._count(why, len(items))
            return
        for key, value in items:
            number = _number(value)
            if isinstance(number, str):
                self._count(number, 1)
                continue
            steps, walls, values = self._columns.setdefault(key, ([], [], []))
            steps.append(step)
            walls.append(wall)
            values.append(number)

    def _skip_line(self, why: str) -> None:
        self._lines_skipped[why] = self._lines_skipped.get(why, 0) + 1

    def _count(self, why: str, points: int) -> None:
        self._points_skipped[why] = self._points_skipped.get(why, 0) + points

    def drain(self) -> Decoded:
        """The points decoded since the last drain (and, once, the framework)."""
        decoded = Decoded(scalars=points_of(self._columns, self._points_skipped))
        self._columns = {}
        if not self._config_sent:
            decoded.config = {FRAMEWORK_KEY: FRAMEWORK}
            self._config_sent = True
        return decoded

    def skipped(self) -> tuple[dict[str, int], dict[str, int]]:
        """(points skipped, lines skipped) so far, by reason."""
        return dict(self._points_skipped), dict(self._lines_skipped)

    def worth_saying(self, tail: bytes) -> bool:
        """Any unfinished record is (it holds a step's points)."""
        return bool(tail.strip())


def _items(data: dict[str, Any], prefix: str, depth: int = 0):
    """(key, value) of a record's data, nested objects' keys joined with ``/``."""
    for key, value in data.items():
        name = f"{prefix}/{key}" if prefix else str(key)
        if isinstance(value, dict) and depth < 16:
            yield from _items(value, name, depth + 1)
        else:
            yield name, value


def _number(value: Any) -> float | str:
    """A logged value as a float, or why it is no point."""
    if value is None:
        return math.nan  # orjson writes NaN and ±Infinity as null
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, float):
        return value
    if isinstance(value, int):
        return float(value) if -_LARGEST <= value <= _LARGEST else VALUE_RANGE
    if isinstance(value, str):
        if len(value) < 400 and _NUMBER.fullmatch(value):
            number = float(value)
            return VALUE_RANGE if math.isinf(number) and "inf" not in value.lower() else number
        return TEXT
    return OTHER


def _open(path: str) -> SourceReader:
    from rltop.ingest.line_reader import LineFileReader

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
