"""The ``verl_console`` source kind: veRL's console output kept in a file (``trainer.logger=['console']``).

What most veRL users keep of a run is its stdout: ``python -m verl.trainer.main_ppo … > train.log``,
a Slurm ``slurm-42.out``, ``nohup.out``. One such file is one run, named after the file. Its points
are the metric lines veRL's console logger prints once a step (`rltop.ingest.verl_lines`), tags
exactly as veRL names them (``actor/entropy``, ``critic/lr(1e-4)``, ``val-core/…/mean@30``), steps as
printed (from 0, or from a resumed checkpoint's step; a step printed twice follows the store's rule
for repeated steps). Everything else in the file (the config dump, warnings, model completions
that say "step by step" or even ``step:``) gives no point.

The file's names are anybody's (``*.log``, ``*.out``, ``*.txt``, ``*.err``, or no extension), so the
kind looks inside (`SourceKind.accepts`, `rltop.ingest.content_check.HeadCheck`): a file is one of
veRL's only when its first 256 KB hold a metric line or the start of veRL's config dump. A file
inside a W&B run folder (``wandb/run-…/files/output.log``, W&B's copy of the console) is left to
the W&B run.

The run's settings come from the config veRL prints at start (`rltop.ingest.verl_config`: flat
dotted keys such as ``algorithm.adv_estimator``), plus what the trainer prints once it knows it
(``Total training steps: N`` -> ``total_training_steps``, ``Size of train dataloader: N`` ->
``train_dataloader_size``), plus ``framework: verl``. A console line carries no time: a point is
dated by the file's modification time at the read that found it (live, within a poll of when it
was printed).
"""

from __future__ import annotations

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
from rltop.ingest.verl_config import ConfigCollector
from rltop.ingest.verl_lines import looks_like_metric_line, metric_line, segments

SUFFIXES = (".log", ".out", ".txt", ".err")
FRAMEWORK_KEY, FRAMEWORK = "framework", "verl"  # in every veRL run's config: the trainer kind's family
TOTAL_STEPS_KEY = "total_training_steps"  # "Total training steps: N" (veRL's ray_trainer, once resolved)
BATCHES_KEY = "train_dataloader_size"  # "Size of train dataloader: N": batches (steps) per epoch
NOT_METRICS = "begin like a metric line (step:N - …) but are not key:number items"
_TOTAL = re.compile(r"Total training steps: (\d{1,18})\s*$")
_BATCHES = re.compile(r"Size of train dataloader: (\d{1,18})\b")
_CONFIG_START = "{'actor_rollout_ref': "
_ADV_ESTIMATOR = re.compile(r"\s*'adv_estimator': '[\w.\-]+',?\s*$")
_WANDB_RUN = re.compile(r"^(?:offline-)?run-\d{8}_\d{6}-.+$|^latest-run$")
# What a line must hold to be worth decoding (a log is mostly other output: bytes tests are cheap).
_MARKS = (b"step:", b"{'", b"Total training steps", b"Size of train dataloader")


def claims_name(name: str) -> bool:
    """True for names a console log may have: ``*.log``, ``*.out``, ``*.txt``, ``*.err``, no extension."""
    if name.endswith(("~", ".tmp", ".swp")) or not name.strip("."):
        return False
    return name.lower().endswith(SUFFIXES) or "." not in name


def looks_like_console_log(head: bytes, whole: bool) -> bool:
    """True when the first bytes of a file hold a veRL metric line or the start of its config dump."""
    for raw in complete_lines(head, whole):
        if b"step:" not in raw and b"'a" not in raw:
            continue
        for _, message in segments(raw.decode("utf-8", "replace")):
            if message.startswith(_CONFIG_START) or _ADV_ESTIMATOR.match(message) or metric_line(message):
                return True
    return False


def in_wandb_run(path: str) -> bool:
    """True for a file inside a W&B run folder (``wandb/run-…/files/output.log``: W&B's own copy)."""
    parts = storage.parts(path)
    return any(parts[i] == "wandb" and _WANDB_RUN.match(parts[i + 1]) for i in range(len(parts) - 2))


_HEAD_CHECK = HeadCheck(looks_like_console_log)


def accepts(path: str) -> bool:
    """True when the file at ``path`` is a veRL console log (read once per file: `HeadCheck`)."""
    return not in_wandb_run(path) and _HEAD_CHECK(path)


class ConsoleDecoder:
    """Decodes the lines of one veRL console log (`rltop.ingest.line_reader.LineDecoder`)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget everything decoded."""
        self._columns: Columns = {}
        self._points_skipped: dict[str, int] = {}
        self._lines_skipped: dict[str, int] = {}
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
                self._lines_skipped[NOT_METRICS] = self._lines_skipped.get(NOT_METRICS, 0) + 1
            return
        if not step_fits(line.step):
            self._count(OUT_OF_RANGE, len(line.values) + len(line.odd))
            return
        for key, value in line.values:
            steps, walls, values = self._columns.setdefault(key, ([], [], []))
            steps.append(line.step)
            walls.append(wall)
            values.append(value)
        for _, why in line.odd:
            self._count(why, 1)

    def _count(self, why: str, points: int) -> None:
        self._points_skipped[why] = self._points_skipped.get(why, 0) + points

    def drain(self) -> Decoded:
        """The points decoded since the last drain, and the config when it changed."""
        decoded = Decoded(scalars=points_of(self._columns, self._points_skipped))
        self._columns = {}
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
        return dict(self._points_skipped), dict(self._lines_skipped)

    def worth_saying(self, tail: bytes) -> bool:
        """True when an unfinished last line starts like a metric line."""
        return any(looks_like_metric_line(m) for _, m in segments(tail.decode("utf-8", "replace")))


def _open(path: str) -> SourceReader:
    from rltop.ingest.line_reader import LineFileReader

    return LineFileReader(path, ConsoleDecoder())


KIND = SourceKind(
    name="verl_console",
    label="veRL console logs",
    pattern="*.log, *.out… with step:N lines",
    claims=claims_name,
    run_directory=lambda path: path,  # one file, one run, named after the file
    order=lambda path: path,
    open=_open,
    output_dir=storage.parent,  # the folder holding the log
    rank=3,  # below event files, W&B and trackio of the same training (they hold wall times)
    summary="read from veRL's console output (its step lines; points are dated when they were read)",
    quiet_hint="training stopped, or its output is buffered (Ray forwards a process's lines in bursts)",
    accepts=accepts,
)
