"""transformers' ``checkpoint-N/trainer_state.json``: the same metrics as the event files, at checkpoints.

Every checkpoint holds the whole ``log_history`` up to its step: one dict per ``Trainer.log`` call,
with the metrics *without* the ``train/`` prefix that the TensorBoard callback adds (evaluation keys
start with ``eval_``) and the global ``step``. Read the way ``rewrite_logs`` names the TensorBoard
tags (``eval_x`` -> ``eval/x``, ``test_x`` -> ``test/x``, anything else -> ``train/x``), the catalogue
and the health rules see the same names as with event files. Values are Python floats (float64),
``NaN`` where the trainer logged NaN; ``null`` (an all-NaN TRL metric) is a missing point, as in
the event files. The log has no wall times: points carry the checkpoint file's modification time.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

TRAINER_STATE = "trainer_state.json"
CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")
# Top-level fields worth handing to the rules as the run's config (the log has no args summary).
CONFIG_FIELDS = ("max_steps", "logging_steps", "save_steps", "eval_steps", "num_train_epochs",
                 "train_batch_size", "global_step")
_NOT_METRICS = frozenset({"step"})
_SPLITS = (("eval_", "eval/"), ("test_", "test/"))


class TrainerStateError(ValueError):
    """The file is not a trainer_state.json (not JSON, or no log_history list)."""


@dataclass
class TrainerState:
    """What rltop keeps of one trainer_state.json."""

    scalars: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)  # tag -> (steps, values)
    config: dict[str, Any] = field(default_factory=dict)
    global_step: int | None = None


def tag_of(key: str) -> str:
    """The TensorBoard tag transformers' ``rewrite_logs`` makes of a log key."""
    for prefix, split in _SPLITS:
        if key.startswith(prefix):
            return split + key[len(prefix):]
    return "train/" + key


def checkpoint_step(directory_name: str) -> int | None:
    """``checkpoint-200`` -> 200; None for other names."""
    found = CHECKPOINT.match(directory_name)
    return int(found.group(1)) if found else None


def parse_trainer_state(data: bytes | str) -> TrainerState:
    """Decode one trainer_state.json (TrainerStateError when it is not one)."""
    try:
        document = json.loads(data)
    except (ValueError, UnicodeDecodeError) as error:
        raise TrainerStateError(f"not JSON ({error})") from None
    if not isinstance(document, dict) or not isinstance(document.get("log_history"), list):
        raise TrainerStateError("no log_history list (not a transformers trainer_state.json)")
    columns: dict[str, tuple[list[int], list[float]]] = {}
    for entry in document["log_history"]:
        if not isinstance(entry, dict):
            continue
        step = entry.get("step")
        if isinstance(step, bool) or not isinstance(step, int):
            continue
        for key, value in entry.items():
            if key in _NOT_METRICS or isinstance(value, bool) or not isinstance(value, (int, float)):
                continue  # null (an all-NaN metric), strings, nested values: not points
            steps, values = columns.setdefault(tag_of(key), ([], []))
            steps.append(step)
            values.append(float(value))
    state = TrainerState()
    for tag, (steps, values) in columns.items():
        state.scalars[tag] = (np.asarray(steps, dtype=np.int64), np.asarray(values, dtype=np.float64))
    state.config = {k: document[k] for k in CONFIG_FIELDS if _plain(document.get(k))}
    step = document.get("global_step")
    state.global_step = step if isinstance(step, int) and not isinstance(step, bool) else None
    return state


def _plain(value: Any) -> bool:
    """A finite number or a string: a value worth putting in the config."""
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, (int, str))
