"""The ``trainer_state`` source kind: transformers' ``checkpoint-N/trainer_state.json``.

Every checkpoint holds the whole ``log_history`` up to its step: one dict per ``Trainer.log`` call,
with the metrics *without* the ``train/`` prefix that the TensorBoard callback adds (evaluation keys
start with ``eval_``) and the global ``step``. Read the way ``rewrite_logs`` names the TensorBoard
tags (``eval_x`` -> ``eval/x``, ``test_x`` -> ``test/x``, anything else -> ``train/x``), the catalogue
and the health rules see the same names as with event files. Values are Python floats (float64),
``NaN`` where the trainer logged NaN; ``null`` (an all-NaN TRL metric) is a missing point, as in
the event files.

A run is an ``output_dir`` with ``checkpoint-*/trainer_state.json`` files (or with the
``trainer_state.json`` that ``Trainer.save_state()`` writes at the end); only the newest is read
(the highest step, as transformers' ``get_last_checkpoint`` picks it; the final ``save_state`` file
after every checkpoint), and read again when it changes or a newer checkpoint appears. When the
newer file extends what was read, only the new points are delivered; when it rewrites history (a
resume from an earlier checkpoint that went another way) the run is read again (RELOADED).

The log has no wall times: a point carries the modification time of the first checkpoint that
holds it (for what was on disk at the start, each checkpoint's time is one stat), so charts over
time and the stall rule see the checkpoint cadence. Settings worth a rule (``max_steps``,
``logging_steps``…) become the run's config, as ``args/text_summary`` does for event files.
"""

from __future__ import annotations

import json
import math
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rltop.ingest import storage
from rltop.ingest.reading import OUT_OF_RANGE, Decoded, ReadResult, SourceKind, skipped_message, step_fits
from rltop.ingest.storage import Unreachable

if TYPE_CHECKING:
    import numpy as np

TRAINER_STATE = "trainer_state.json"
CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")
# Top-level fields worth handing to the rules as the run's config (the log has no args summary).
CONFIG_FIELDS = (
    "max_steps",
    "logging_steps",
    "save_steps",
    "eval_steps",
    "num_train_epochs",
    "train_batch_size",
    "global_step",
)
_NOT_METRICS = frozenset({"step"})
_SPLITS = (("eval_", "eval/"), ("test_", "test/"))
SETTLE = 10.0  # seconds after its last change an invalid file is reported (before: still being written)
MAX_BYTES = 1 << 30  # a larger trainer_state.json is refused, never loaded into memory


class TrainerStateError(ValueError):
    """The file is not a trainer_state.json (not JSON, or no log_history list)."""


@dataclass
class TrainerState:
    """What rltop keeps of one trainer_state.json."""

    scalars: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)  # tag -> (steps, values)
    config: dict[str, Any] = field(default_factory=dict)
    global_step: int | None = None
    skipped: dict[str, int] = field(default_factory=dict)  # why -> points left out (odd steps or values)


def tag_of(key: str) -> str:
    """The TensorBoard tag transformers' ``rewrite_logs`` makes of a log key."""
    for prefix, split in _SPLITS:
        if key.startswith(prefix):
            return split + key[len(prefix) :]
    return "train/" + key


def checkpoint_step(directory_name: str) -> int | None:
    """``checkpoint-200`` -> 200; None for other names."""
    found = CHECKPOINT.match(directory_name)
    return int(found.group(1)) if found else None


def parse_trainer_state(data: bytes | str) -> TrainerState:
    """Decode one trainer_state.json (TrainerStateError when it is not one)."""
    import numpy as np

    try:
        document = json.loads(data)
    except (ValueError, UnicodeDecodeError) as error:
        raise TrainerStateError(f"not JSON ({error})") from None
    if not isinstance(document, dict) or not isinstance(document.get("log_history"), list):
        raise TrainerStateError("no log_history list (not a transformers trainer_state.json)")
    columns: dict[str, tuple[list[int], list[float]]] = {}
    odd = 0  # points whose step or value no 64-bit column holds (a step of 2**70, a 400-digit value)
    for entry in document["log_history"]:
        if not isinstance(entry, dict):
            continue
        step = entry.get("step")
        if isinstance(step, bool) or not isinstance(step, int):
            continue
        for key, value in entry.items():
            if key in _NOT_METRICS or isinstance(value, bool) or not isinstance(value, (int, float)):
                continue  # null (an all-NaN metric), strings, nested values: not points
            try:
                number = float(value)
            except OverflowError:
                number = None
            if number is None or not step_fits(step):
                odd += 1
                continue
            steps, values = columns.setdefault(tag_of(key), ([], []))
            steps.append(step)
            values.append(number)
    state = TrainerState(skipped={OUT_OF_RANGE: odd} if odd else {})
    for tag, (steps, values) in columns.items():
        state.scalars[tag] = (np.asarray(steps, dtype=np.int64), np.asarray(values, dtype=np.float64))
    state.config = {k: document[k] for k in CONFIG_FIELDS if _plain(document.get(k))}
    step = document.get("global_step")
    state.global_step = step if step_fits(step) else None
    return state


def _plain(value: Any) -> bool:
    """A finite number or a string: a value worth putting in the config."""
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, int):
        return step_fits(value)  # a 400-digit integer is no setting a rule can use
    return isinstance(value, str)


def file_step(path: str) -> float:
    """The step a trainer_state.json was saved at, from its folder (``save_state``'s file: the last)."""
    step = checkpoint_step(storage.name(storage.parent(path)))
    return float("inf") if step is None else float(step)


def run_directory(path: str) -> str:
    """The ``output_dir`` of ``output_dir/checkpoint-N/trainer_state.json`` (else the file's folder)."""
    folder = storage.parent(path)
    return storage.parent(folder) if checkpoint_step(storage.name(folder)) is not None else folder


class TrainerStateReader:
    """Follows the newest trainer_state.json of one run; delivers what it adds to what was read."""

    def __init__(self, path: str) -> None:
        self.path = path  # the file read: the newest of the run's files
        self.files = [path]  # the run's files, oldest first
        self._delivered: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # tag -> (steps, values) so far
        self._version: object = None  # the read file's version when it was last parsed
        self._invalid: str | None = None  # why the file read last is not a usable trainer_state.json
        self._said: str | None = None
        self._skipped_said = 0  # odd points already said (`TrainerState.skipped`)

    pending_bytes = 0  # a JSON file is read whole: nothing waits for the rest of a record

    def follow(self, files: list[str]) -> None:
        """The run's files (oldest first) changed: read the newest from now on."""
        self.files = list(files)
        if files and files[-1] != self.path:
            self.path = files[-1]
            self._version = None

    def reset(self) -> None:
        """Forget what was read: the next read delivers the newest file whole."""
        self._delivered = {}
        self._version = None
        self._invalid = self._said = None
        self._skipped_said = 0

    def unfinished(self) -> str | None:
        """Why the newest file could not be used, when the read did not say it already (one-shot
        loads say it); None when it was read."""
        return None if self._invalid == self._said else self._invalid

    def read(self) -> ReadResult:
        """The points the newest file adds (nothing, without a download, when it did not change)."""
        result = ReadResult()
        try:
            with storage.open_file(self.path) as handle:
                stat = handle.stat()
                result.mtime = stat.mtime
                if stat.version == self._version:
                    return result
                if stat.size > MAX_BYTES:
                    self._invalid = f"{self.path}: {stat.size} bytes, too large for a trainer_state.json"
                    self._version = stat.version
                    result.problems.append(self._invalid)
                    return result
                data = handle.read(0, stat.size)
        except Unreachable:
            raise
        except OSError as error:
            result.problems.append(f"{self.path}: cannot read: {error.strerror or error}")
            return result
        result.bytes_read = len(data)
        try:
            state = parse_trainer_state(data)
        except TrainerStateError as error:
            self._rejected(f"{self.path}: {error}; skipped", stat.mtime, stat.version, result)
            return result
        self._invalid = self._said = None
        self._version = stat.version
        odd = sum(state.skipped.values())
        if odd > self._skipped_said:  # said once, and again only when a newer file skips more
            self._skipped_said = odd
            result.problems.append(skipped_message(self.path, state.skipped))
        self._take(state, stat.mtime, result)
        return result

    def _rejected(self, why: str, mtime: float, version: object, result: ReadResult) -> None:
        """An unusable file: said once it has stopped changing (json.dump writes it in pieces)."""
        self._invalid = why
        if time.time() - mtime < SETTLE:
            return  # most likely still being written: read again on the next poll
        self._version = version
        if self._said != why:
            self._said = why
            result.problems.append(why)

    def _take(self, state: TrainerState, mtime: float, result: ReadResult) -> None:
        import numpy as np

        from rltop.model.series import Points

        known = _delivered_counts(self._delivered, state.scalars)
        if known is None:
            if _is_prefix(state.scalars, self._delivered):
                return  # an older file (the newest was deleted): nothing it holds is new
            if self._delivered:
                result.restarted = True
                result.problems.append(
                    f"{self.path}: its log_history rewrites steps already read (training resumed from an "
                    "earlier checkpoint); reading the run again"
                )
                return
            known = {}
        dating = self._checkpoint_times(state, mtime) if not self._delivered else None
        decoded = Decoded(config=dict(state.config) or None)
        for tag, (steps, values) in state.scalars.items():
            start = known.get(tag, 0)
            if start < len(steps):
                # Copies: the consumer's series may adopt these arrays and write into them, while
                # `_delivered` keeps the parsed ones to compare with the next version of the file.
                new_steps = steps[start:].copy()
                if dating is None:
                    walls = np.full(len(new_steps), mtime)
                else:
                    walls = dating[1][np.minimum(np.searchsorted(dating[0], new_steps), len(dating[0]) - 1)]
                decoded.scalars[tag] = Points(new_steps, walls, values[start:].copy(), single_precision=False)
        self._delivered = dict(state.scalars)
        result.decoded = decoded

    def _checkpoint_times(self, state: TrainerState, mtime: float) -> tuple[np.ndarray, np.ndarray]:
        """(checkpoint steps, their modification times, never decreasing) for dating the first read."""
        import numpy as np

        marks: list[tuple[float, float]] = []
        for path in self.files:
            step = file_step(path)
            if path == self.path or step == float("inf"):
                continue
            try:
                marks.append((step, storage.stat(path).mtime))
            except Unreachable:
                raise
            except OSError:
                continue  # deleted meanwhile (checkpoint rotation): its points take a later time
        marks.append((float("inf"), mtime))
        marks.sort()
        steps = np.array([step for step, _ in marks])
        times = np.maximum.accumulate(np.array([when for _, when in marks]))
        return steps, times


def _delivered_counts(old: dict, new: dict) -> dict[str, int] | None:
    """Per tag, how many points of ``new`` were delivered; None when ``new`` does not extend ``old``."""
    import numpy as np

    counts: dict[str, int] = {}
    for tag, (steps, values) in old.items():
        if tag not in new:
            return None
        new_steps, new_values = new[tag]
        count = len(steps)
        if len(new_steps) < count or not np.array_equal(new_steps[:count], steps):
            return None
        if not np.array_equal(new_values[:count], values, equal_nan=True):
            return None
        counts[tag] = count
    return counts


def _is_prefix(new: dict, old: dict) -> bool:
    """True when every tag of ``new`` is a prefix of the same tag in ``old`` (an older file)."""
    return bool(new) and _delivered_counts(new, old) is not None


def _open(path: str) -> TrainerStateReader:
    return TrainerStateReader(path)


KIND = SourceKind(
    name="trainer_state",
    label="trainer_state.json",
    pattern="checkpoint-*/trainer_state.json",
    claims=lambda name: name == TRAINER_STATE,
    run_directory=run_directory,
    order=lambda path: (file_step(path), path),
    open=_open,
    output_dir=lambda directory: directory,
    rank=0,
    summary="no event files: read from the newest checkpoint's trainer_state.json (points up to that "
    'checkpoint, timed by the checkpoint files; report_to="tensorboard" logs every point live)',
    newest_only=True,
    quiet_hint="training stopped, or its checkpoints are far apart: see save_steps",
)
