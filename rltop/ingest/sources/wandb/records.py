"""What rltop takes from the wandb SDK's ``Record`` messages: points, config, summary, exit.

The records are ``wandb.proto.wandb_internal_pb2.Record`` (the optional extra ``rltop[wandb]``).
transformers' ``WandbCallback`` logs each ``Trainer.log`` call as one ``history`` record with the
keys ``rewrite_logs`` names like the TensorBoard tags (``train/loss``, ``eval/...``), each value
JSON-encoded, plus ``train/global_step``, which it declares (a ``metric`` record) as the step of
every key; TRL's profiling timers add rows of their own at the same global step. The SDK adds
``_step`` (its own row counter), ``_timestamp`` (wall time) and ``_runtime``. So a point's step is
the value of its key's declared step metric (``_step`` when none is declared or the row lacks
it), its wall time ``_timestamp``; keys starting with ``_`` and the step metrics are not points.

The end-of-training figures (``train_runtime``, ``train_loss``…) go to the run's summary only,
not its history: a summary key never seen in the history becomes one point at the newest step,
named as the TensorBoard callback names it (``train/train_runtime``), so the rules see that the
trainer finished. ``config`` records become the run's config (the training arguments: ``beta``,
``num_iterations``, ``max_steps``…); the ``exit`` record gives the exit code.

No value raises, whatever a trainer logged: a point whose step no 64-bit column holds (1e20,
2**63, NaN, infinity, ``true``, a string) is skipped and counted, a fractional step is placed at
the whole step below, a value too large for a float is an infinity (as the SDK writes it), a
``_timestamp`` that is no date takes the previous row's time, a config integer beyond 64 bits is
left out; `RunRecords.odd_values` says it all in one line. When damage took the records before the
first row, the `metric` records declaring the steps may be gone: rows carrying
``train/global_step`` (transformers' step metric, which its WandbCallback declares for every key
with step_sync, so that every row carries it) keep it as their step, and otherwise the run says
that its steps are W&B's row counter (`RunRecords.steps_note`).
"""

from __future__ import annotations

import fnmatch
import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from rltop.ingest.reading import INT64_MAX, INT64_MIN, Columns, Decoded, points_of, step_fits
from rltop.ingest.sources.trainer_state import tag_of
from rltop.model.durations import is_date
from rltop.model.run import EXIT_CODE, RUN_TITLE

STEP = "_step"
TIMESTAMP = "_timestamp"
GLOBAL_STEP = "train/global_step"  # transformers' step metric (WandbCallback.setup declares it for "*")
_INTEGER = re.compile(r"-?[0-9]+")

# Why a point was left out (counted, and said once per file: `RunRecords.odd_values`).
NOT_FINITE = "at a step that is not finite"
OUT_OF_RANGE = "at a step outside the 64-bit range"
NOT_A_NUMBER = "at a step that is not a number"
NO_STEP = "in a row without a step"
FRACTION = "fraction"  # a step with a fraction: placed at the whole step below, not skipped

# A step metric's value in one row: (step, why). (None, None): missing (absent, or null).
Step = tuple[int | None, str | None]
MISSING: Step = (None, None)


def _key(item: Any) -> str:
    """The flat name of a history/summary/config item (nested keys joined with dots, as W&B shows them)."""
    nested = item.nested_key
    if len(nested) == 1:  # what the SDK writes for a flat key: no join
        return nested[0]
    return ".".join(nested) if nested else item.key


def _number(text: str) -> float | None:
    """A JSON-encoded number as a float (NaN and infinities kept); None for anything else.

    A number too large for a float is an infinity, as the SDK itself writes a huge integer in a
    history row ("Infinity"); never an error, whatever the text.
    """
    try:
        return float(text)  # the common case, NaN/Infinity and huge literals (inf), without a JSON parse
    except ValueError:
        pass
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, a 5,000-digit integer, nesting 100,000 deep
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None  # null (a missing value), strings, media and histograms: not points
    try:
        return float(value)
    except OverflowError:
        return math.copysign(math.inf, value)


def _step_of(text: str) -> Step:
    """A step metric's JSON-encoded value as a step: (step, None); (step, FRACTION) for a fraction
    placed at the whole step below; (None, why) for a value no 64-bit step holds; MISSING for null."""
    text = text.strip()
    if _INTEGER.fullmatch(text):  # exact, whatever its length ("9223372036854775807" is a step)
        step = int(text) if len(text) <= 20 else None
        return (step, None) if step is not None and INT64_MIN <= step <= INT64_MAX else (None, OUT_OF_RANGE)
    if text == "null":
        return MISSING
    try:
        number = float(text)
    except ValueError:
        return None, NOT_A_NUMBER  # true/false, strings, objects
    if math.isnan(number) or text.lstrip("+-").lower() in ("infinity", "inf"):
        return None, NOT_FINITE
    if not INT64_MIN <= number < INT64_MAX:  # (a float: 2.0**63 is the first one past the range)
        return None, OUT_OF_RANGE  # 1e20, and 1e400 (read as an infinity)
    whole = math.floor(number)
    return whole, (FRACTION if whole != number else None)


@dataclass
class RunRecords:
    """Everything decoded from one run file so far, and the points of the current read.

    Never raises on a value: a point whose step no 64-bit column holds (1e20, NaN, ``true``) is
    left out and counted in ``skipped``, a fractional step is placed at the whole step below, a
    config value that no rule can use (a 400-digit integer) is left out; `odd_values` says it all
    in one line.
    """

    config: dict[str, Any] = field(default_factory=dict)
    summary: dict[str, float] = field(default_factory=dict)  # summary-only keys -> value delivered
    exit_code: int | None = None
    run_name: str = ""
    history_keys: set[str] = field(default_factory=set)
    step_metrics: dict[str, str] = field(default_factory=dict)  # key or glob -> its step metric
    last_step: int | None = None
    last_wall: float | None = None
    skipped: Counter[str] = field(default_factory=Counter)  # why -> points left out
    fractional: int = 0  # points placed at the whole step below their fractional step
    odd_config: dict[str, str] = field(default_factory=dict)  # config key -> why it was left out
    odd_walls: int = 0  # rows whose _timestamp is no date: placed at the previous row's time
    rows: int = 0  # history rows taken
    # Damage came before any step-metric declaration and any row: the `metric` records that
    # declare the steps (early in the file) may be lost. `steps_note` says what was done about it.
    blind: bool = False
    implied: bool = False  # train/global_step taken as the step of every key (rows carry it)
    _columns: Columns = field(default_factory=dict)
    _step_values: dict[str, Step] = field(default_factory=dict)  # step metric -> its latest value
    _candidates: dict[str, float] = field(default_factory=dict)  # summary keys not yet known summary-only
    _config_changed: bool = False
    _exit_changed: bool = False
    _notes_said: set[str] = field(default_factory=set)

    def take(self, record: Any) -> None:
        """Fold one parsed ``Record`` in."""
        kind = record.WhichOneof("record_type")
        if kind == "history":
            self._history(record.history)
        elif kind == "summary":
            self._summary(record.summary)
        elif kind == "config":
            self._config(record.config)
        elif kind == "run":
            self.run_name = record.run.display_name or record.run.run_id
            self._config_changed = True  # the name reaches the run with its config (`Run.title`)
            self._config(record.run.config)
        elif kind == "metric":
            self._metric(record.metric)
        elif kind == "exit":
            self._settle_summary(None)
            self.exit_code = int(record.exit.exit_code)
            self._exit_changed = True

    def damaged(self) -> None:
        """Damage was skipped before the next record: blind when no step is known yet."""
        if not self.step_metrics and not self.rows:
            self.blind = True
        # The SDK writes a row's summary update just before the row: the row may be what was lost,
        # and its keys would pass for summary-only ones (a point at the wrong step). A true
        # summary-only key comes again with the next update of the summary, or the exit's.
        self._candidates.clear()

    def _metric(self, metric: Any) -> None:
        target = metric.name or metric.glob_name
        if target and metric.step_metric:
            if self.implied:  # the declarations were not all lost after all: they rule
                self.step_metrics.clear()
                self.implied = False
            self.step_metrics[target] = metric.step_metric

    def _step_metric(self, key: str) -> str:
        found = self.step_metrics.get(key)
        if found is not None:
            return found
        for pattern, metric in self.step_metrics.items():
            if fnmatch.fnmatchcase(key, pattern):
                self.step_metrics[key] = metric  # matched once: no glob on the next rows
                return metric
        return STEP

    def _history(self, history: Any) -> None:
        raw = {_key(item): item.value_json for item in history.item}
        if self.blind and not self.step_metrics and GLOBAL_STEP in raw:
            # The rows of transformers' WandbCallback carry train/global_step (step_sync fills it
            # in where a row lacks it): what its lost `metric` record declared the step of "*".
            self.step_metrics["*"] = GLOBAL_STEP
            self.implied = True
        self.rows += 1
        steps = set(self.step_metrics.values())
        row_steps = {metric: _step_of(raw[metric]) for metric in (steps | {STEP}) & raw.keys()}
        for metric, value in row_steps.items():
            if metric != STEP and value != MISSING:
                self._step_values[metric] = value
        wall = _number(raw.get(TIMESTAMP, "null"))
        if wall is None or not is_date(wall):  # missing, or a user's odd _timestamp
            self.odd_walls += wall is not None
            wall = self.last_wall or 0.0
        self.last_wall = wall
        for key, text in raw.items():
            if key.startswith("_") or key in steps:
                continue
            value = _number(text)
            if value is None:
                continue
            metric = self._step_metric(key)
            # A row without its key's step metric is at that metric's last value (what the SDK's
            # step_sync fills in; older SDKs leave it out), W&B's own _step only without a metric.
            found = row_steps.get(metric, MISSING)
            if found == MISSING:
                found = self._step_values.get(metric, row_steps.get(STEP, (None, NO_STEP)))
            step, why = found
            if step is None:
                self.skipped[why or NO_STEP] += 1
                continue
            if why == FRACTION:
                self.fractional += 1
            self.history_keys.add(key)
            column = self._columns.setdefault(key, ([], [], []))
            column[0].append(step)
            column[1].append(wall)
            column[2].append(value)
            self.last_step = step if self.last_step is None else max(self.last_step, step)
        if self._candidates:
            self._settle_summary(raw.keys())

    def _summary(self, summary: Any) -> None:
        # The SDK writes a row's summary update just before the row itself: a key is summary-only
        # once a history row after it lacks it (or the run exited), so candidates wait till then.
        steps = set(self.step_metrics.values())
        for item in summary.update:
            key = _key(item)
            if key.startswith("_") or key in self.history_keys or key in steps:
                continue
            value = _number(item.value_json)
            if value is not None and self.summary.get(key) != value:
                self._candidates[key] = value

    def _settle_summary(self, row: Any) -> None:
        """Summary candidates not among ``row``'s keys (None: the run exited) become points at the
        newest step."""
        for key, value in list(self._candidates.items()):
            if row is not None and key in row:
                continue
            del self._candidates[key]
            self.summary[key] = value
            tag = key if "/" in key else tag_of(key)
            column = self._columns.setdefault(tag, ([], [], []))
            column[0].append(self.last_step or 0)
            column[1].append(self.last_wall or 0.0)
            column[2].append(value)
        if row is not None:
            for key in row:
                self._candidates.pop(key, None)

    def _config(self, config: Any) -> None:
        for item in config.update:
            key = _key(item)
            if key.startswith("_"):
                continue
            try:
                value = json.loads(item.value_json)
            except (ValueError, RecursionError):  # a 5,000-digit integer, nesting 100,000 deep
                self.odd_config[key] = "not readable"
                continue
            if isinstance(value, int) and not isinstance(value, bool) and not step_fits(value):
                self.odd_config[key] = "an integer beyond 64 bits"  # no rule can use it (max_steps=10**400)
                continue
            self.config[key] = value
            self._config_changed = True
        for item in config.remove:
            if self.config.pop(_key(item), None) is not None:
                self._config_changed = True

    def drain(self) -> Decoded:
        """The points taken since the previous drain, and the config when it changed."""
        decoded = Decoded(scalars=points_of(self._columns))
        self._columns = {}
        if self._config_changed or self._exit_changed:
            decoded.config = self.source_config()
            self._config_changed = self._exit_changed = False
        return decoded

    def source_config(self) -> dict[str, Any]:
        """The run's config as the rules read it (with the exit code once the run exited: `Run.exit_code`)."""
        config = dict(self.config)
        if self.exit_code is not None:
            config[EXIT_CODE] = self.exit_code
        if self.run_name:
            config[RUN_TITLE] = self.run_name
        return config

    def steps_note(self) -> str | None:
        """What damage did to the steps, once (None: nothing, or said already)."""
        if self.implied:
            note = (
                "the run's step declarations (W&B metric records) were in the damaged data; "
                f"{GLOBAL_STEP}, which its rows carry, is taken as the step of every key, as "
                "transformers' WandbCallback declares it"
            )
        elif self.blind and self.rows and not self.step_metrics:
            note = (
                "the damaged data may have held the run's step declarations (W&B metric records) and "
                f"no row carries {GLOBAL_STEP}: steps are W&B's row counter _step, which may not be "
                "the training step"
            )
        else:
            return None
        if note in self._notes_said:
            return None
        self._notes_said.add(note)
        return note

    def odd_values(self) -> str | None:
        """One line for every point and config value left out or moved so far (None: none)."""
        parts = []
        if self.skipped:
            total = sum(self.skipped.values())
            why = ", ".join(f"{count} {reason}" for reason, count in sorted(self.skipped.items()))
            parts.append(f"{total} point{'s' if total != 1 else ''} skipped ({why})")
        if self.fractional:
            parts.append(f"{self.fractional} point{'s' if self.fractional != 1 else ''} at a fractional "
                         "step placed at the whole step below")  # fmt: skip
        if self.odd_walls:
            parts.append(f"{self.odd_walls} row{'s' if self.odd_walls != 1 else ''} with a _timestamp that "
                         "is no date (NaN, 1e30) placed at the time of the row before")  # fmt: skip
        if self.odd_config:
            keys = ", ".join(f"{key} ({why})" for key, why in sorted(self.odd_config.items())[:5])
            more = f" and {len(self.odd_config) - 5} more" if len(self.odd_config) > 5 else ""
            parts.append(f"config values left out: {keys}{more}")
        return "; ".join(parts) or None
