"""Reading one run of MLflow's file store: every ``metrics/<key>`` file tailed from its byte offset.

Each metrics file is followed by a `rltop.ingest.sources.line_reader.LineFileReader` (complete lines only,
from the offset of the first line not read; a file that shrank or was replaced is read again,
RELOADED), decoding MLflow's ``<timestamp ms> <value> <step>`` lines (``<timestamp> <value>`` in
stores older than MLflow 1.0: step 0). A read lists the ``metrics`` folder (new keys), reads each
file that grew, and the ``params`` folder once it changed: the params become the run's config
(`rltop.ingest.sources.mlflow.params`).
"""

from __future__ import annotations

import math
import os

from rltop.ingest import storage
from rltop.ingest.reading import Decoded, ReadResult, step_fits
from rltop.ingest.sources.line_reader import Gathered, LineFileReader
from rltop.ingest.sources.mlflow.params import config_of, tag_of

BAD_LINE = "not '<timestamp> <value> <step>'"


class MetricLines:
    """A `rltop.ingest.sources.line_reader.LineDecoder` of one metrics file: its points under one tag."""

    def __init__(self, tag: str) -> None:
        self.tag = tag
        self.reset()

    def reset(self) -> None:
        """Forget everything decoded."""
        self._gathered = Gathered()

    def take(self, lines: list[bytes], wall: float) -> None:
        """Decode complete lines (the wall time is each line's own timestamp)."""
        gathered = self._gathered
        for line in lines:
            fields = line.split()
            if not fields:
                continue
            try:
                timestamp, value = int(fields[0]), float(fields[1])
                step = int(fields[2]) if len(fields) > 2 else 0
            except (ValueError, IndexError, OverflowError):
                gathered.skip_line(BAD_LINE)
                continue
            if not step_fits(step) or not math.isfinite(timestamp / 1000.0):
                gathered.skip_points("step or time out of range")
                continue
            gathered.add(self.tag, step, timestamp / 1000.0, value)

    def drain(self) -> Decoded:
        """The points decoded since the last drain."""
        return self._gathered.drain()

    def skipped(self) -> tuple[dict[str, int], dict[str, int]]:
        """What was left out so far."""
        return self._gathered.skipped()

    def worth_saying(self, tail: bytes) -> bool:
        """An unfinished line may be a point."""
        return bool(tail.strip())


class MlflowFilesReader:
    """Follows one run folder of a file store (``<run>/meta.yaml::run``)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.folder = storage.parent(storage.container(path))
        self.metrics = storage.join(self.folder, "metrics")
        self.params = storage.join(self.folder, "params")
        self._files: dict[str, LineFileReader] = {}
        self.reset()

    def reset(self) -> None:
        """Forget everything read: every metrics file is read again from its start."""
        for reader in self._files.values():
            reader.reset()
        self._params_state: object = None
        self._params: dict[str, str] | None = None

    @property
    def pending_bytes(self) -> int:
        """Bytes of unfinished last lines, over every metrics file."""
        return sum(reader.pending_bytes for reader in self._files.values())

    def unfinished(self) -> str | None:
        """The first metrics file whose last line is not finished (None: none)."""
        return next((said for said in (r.unfinished() for r in self._files.values()) if said), None)

    def read(self) -> ReadResult:
        """What every metrics file gained since the previous read, and the params once they changed."""
        result = ReadResult()
        self._list_metrics(result.problems)
        scalars: dict = {}
        for reader in self._files.values():
            part = reader.read()
            result.problems.extend(part.problems)
            if part.restarted:
                self.reset()
                result.restarted = True
                return result
            result.bytes_read += part.bytes_read
            result.more = result.more or part.more
            scalars.update(part.decoded.scalars)  # one tag a file: nothing to merge
            if part.mtime is not None:
                result.mtime = max(result.mtime or 0.0, part.mtime)
        result.decoded = Decoded(scalars=scalars)
        params = self._read_params()
        if params is not None:
            result.decoded.config = config_of(params)
            result.bytes_read += 1
        return result

    def _list_metrics(self, problems: list[str]) -> None:
        """Add a reader for every metrics file not known yet."""
        for directory, names in storage.walk(self.metrics, problems.append):
            for name in names:
                path = storage.join(directory, name)
                if path not in self._files:
                    key = storage.relative(path, self.metrics)
                    self._files[path] = LineFileReader(path, MetricLines(tag_of(key)))

    def _read_params(self) -> dict[str, str] | None:
        """The params, when they changed since the last read (None: unchanged or none)."""
        try:
            state = os.stat(self.params).st_mtime_ns if not storage.is_url(self.params) else None
        except OSError:
            return None
        if state is not None and state == self._params_state:
            return None
        if state is None and self._params is not None:
            return None  # a URL: the params (logged at the start) are listed once, not on every poll
        params: dict[str, str] = {}
        for directory, names in storage.walk(self.params, lambda problem: None):
            for name in names:
                path = storage.join(directory, name)
                try:
                    with storage.open_file(path) as handle:
                        text = handle.read(0, 64 << 10)
                except OSError:
                    continue
                params[storage.relative(path, self.params)] = text.decode("utf-8", "replace")
        self._params_state = state
        if not params or params == self._params:
            return None
        self._params = params
        return params
