"""Decoding a veRL console log line by line (the `rltop.ingest.sources.verl.console` kind, for
`LineFileReader`).

A line that holds a metric line gives its points (`rltop.ingest.sources.verl.lines.metric_line`); one that
starts like a metric line but is none is counted (a damaged line, said once); the config dump is
followed by `rltop.ingest.sources.verl.config.ConfigCollector` (what is printed so far is the run's config
while the dump goes on, the whole dump once it closes, a later dump replaces it: a resumed run);
``Total training steps: N`` and ``Size of train dataloader: N`` join the config. Lines that hold
none of these marks are passed over on a bytes test: a log is mostly other output.
"""

from __future__ import annotations

import re
from typing import Any

from rltop.ingest.reading import OUT_OF_RANGE, Decoded, step_fits
from rltop.ingest.sources.line_reader import Gathered
from rltop.ingest.sources.verl.config import ConfigCollector
from rltop.ingest.sources.verl.console import (
    BATCHES_KEY,
    FRAMEWORK,
    FRAMEWORK_KEY,
    TOTAL_STEPS_KEY,
)
from rltop.ingest.sources.verl.lines import looks_like_metric_line, metric_line, segments

NOT_METRICS = "begin like a metric line (step:N - …) but are not key:number items"
_TOTAL = re.compile(r"Total training steps: (\d{1,18})\s*$")
_BATCHES = re.compile(r"Size of train dataloader: (\d{1,18})\b")
# What a line must hold to be worth decoding (a log is mostly other output: bytes tests are cheap).
_MARKS = (b"step:", b"{'", b"Total training steps", b"Size of train dataloader")


class ConsoleDecoder:
    """Decodes the lines of one veRL console log (`rltop.ingest.sources.line_reader.LineDecoder`)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget everything decoded."""
        self._gathered = Gathered()
        self._collector = ConfigCollector()
        self._dumped: dict[str, Any] = {}  # the printed config, flat
        self._printed: dict[str, Any] = {}  # what the trainer printed later (total steps…)
        self._config_changed = True  # the first drain says the framework

    def take(self, lines: list[bytes], wall: float) -> None:
        """Decode complete lines: metric lines into points, the config dump into settings."""
        for raw in lines:
            if self._collector.prefix is None and not any(mark in raw for mark in _MARKS):
                continue
            for prefix, message in segments(raw.decode("utf-8", "replace")):
                self._message(prefix, message, wall)

    def _message(self, prefix: str, message: str, wall: float) -> None:
        if self._collector.prefix is not None or message.startswith("{'"):
            found = self._collector.feed(prefix, message)
            if found is not None:
                self._dumped = found
                self._config_changed = True
        if "step:" in message:
            self._metrics(message, wall)
            return
        for pattern, key in ((_TOTAL, TOTAL_STEPS_KEY), (_BATCHES, BATCHES_KEY)):
            found = pattern.match(message.strip())
            if found is not None and self._printed.get(key) != int(found.group(1)):
                self._printed[key] = int(found.group(1))
                self._config_changed = True

    def _metrics(self, message: str, wall: float) -> None:
        line = metric_line(message)
        if line is None:
            if looks_like_metric_line(message):
                self._gathered.skip_line(NOT_METRICS)
            return
        if not step_fits(line.step):
            self._gathered.skip_points(OUT_OF_RANGE, len(line.values) + len(line.odd))
            return
        for key, value in line.values:
            self._gathered.add(key, line.step, wall, value)
        for _, why in line.odd:
            self._gathered.skip_points(why)

    def drain(self) -> Decoded:
        """The points decoded since the last drain, and the config when it changed."""
        decoded = self._gathered.drain()
        partial = self._collector.peek()  # a dump still being printed (or cut short): what it has so far
        if partial is not None and partial != self._dumped:
            self._dumped = partial
            self._config_changed = True
        if self._config_changed:
            decoded.config = {**self._dumped, **self._printed, FRAMEWORK_KEY: FRAMEWORK}
            self._config_changed = False
        return decoded

    def skipped(self) -> tuple[dict[str, int], dict[str, int]]:
        """(points skipped, lines skipped) so far, by reason."""
        return self._gathered.skipped()

    def worth_saying(self, tail: bytes) -> bool:
        """True when an unfinished last line starts like a metric line."""
        return any(looks_like_metric_line(m) for _, m in segments(tail.decode("utf-8", "replace")))
