"""Decoding veRL's JSON Lines line by line (the `rltop.ingest.sources.verl.jsonl` kind, for `LineFileReader`).

Values as the two writers put them: since veRL 0.8, ``orjson.dumps(…, OPT_SERIALIZE_NUMPY)``
(compact; NaN and ±Infinity written as ``null``, so ``null`` is read as NaN: a NaN incident must
stay visible); veRL 0.6–0.7, ``json.dumps`` (``NaN``, ``Infinity``, ``-Infinity``, which Python's
JSON reads). A bool is 1/0 (as the console logger and TensorBoard show it), a number written as a
string is that number, a nested object's keys are joined with ``/``. A text (``"rollout/backend":
"vllm"``) is a label veRL logs on purpose: no point, and nothing to report. Anything else (a list,
an integer no float holds) is no point, and a line that is not a record is no line: skipped and
counted, said once per run with the file. The file holds no config: the run's config says only
``framework: verl``. Lines carry no time: a point is dated by the file's modification time at the
read that found it.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from rltop.ingest.reading import OUT_OF_RANGE, Decoded, step_fits
from rltop.ingest.sources.line_reader import Gathered
from rltop.ingest.sources.verl.console import FRAMEWORK, FRAMEWORK_KEY
from rltop.ingest.sources.verl.jsonl import is_record

NOT_JSON = "not JSON"
NOT_RECORD = 'not a {"step": N, "data": {…}} record'
STEP_TYPE = "step not an integer"
VALUE_RANGE = "value too large for a float"
TEXT = "a text, not a number"
OTHER = "a list or another object, not a number"
_NUMBER = re.compile(r"\s*[+-]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|nan|inf|infinity)\s*", re.I)
_LARGEST = 1.7976931348623157e308


class JsonlDecoder:
    """Decodes the lines of one veRL JSONL log (`rltop.ingest.sources.line_reader.LineDecoder`)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget everything decoded."""
        self._gathered = Gathered()
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
                self._gathered.skip_line(NOT_JSON)
                continue
            if not is_record(record):
                self._gathered.skip_line(NOT_RECORD)
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
            self._gathered.skip_points(why, len(items))
            return
        for key, value in items:
            number = _number(value)
            if number is TEXT:
                continue  # a label, not a measurement: nothing was lost
            if isinstance(number, str):
                self._gathered.skip_points(number)
            else:
                self._gathered.add(key, step, wall, number)

    def drain(self) -> Decoded:
        """The points decoded since the last drain (and, once, the framework)."""
        decoded = self._gathered.drain()
        if not self._config_sent:
            decoded.config = {FRAMEWORK_KEY: FRAMEWORK}
            self._config_sent = True
        return decoded

    def skipped(self) -> tuple[dict[str, int], dict[str, int]]:
        """(points skipped, lines skipped) so far, by reason."""
        return self._gathered.skipped()

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
