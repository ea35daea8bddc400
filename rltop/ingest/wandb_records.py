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
"""

from __future__ import annotations

import fnmatch
import json
import math
from dataclasses import dataclass, field
from typing import Any

from rltop.ingest.reading import Columns, Decoded, points_of
from rltop.ingest.trainer_state import tag_of
from rltop.model.run import EXIT_CODE, RUN_TITLE

STEP = "_step"
TIMESTAMP = "_timestamp"


def _key(item: Any) -> str:
    """The flat name of a history/summary/config item (nested keys joined with dots, as W&B shows them)."""
    nested = item.nested_key
    if len(nested) == 1:  # what the SDK writes for a flat key: no join
        return nested[0]
    return ".".join(nested) if nested else item.key


def _number(text: str) -> float | None:
    """A JSON-encoded number as a float (NaN and infinities kept); None for anything else."""
    try:
        return float(text)  # the common case, and NaN/Infinity, without a JSON parse
    except ValueError:
        pass
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None  # null (a missing value), strings, media and histograms: not points
    return float(value)


@dataclass
class RunRecords:
    """Everything decoded from one run file so far, and the points of the current read."""

    config: dict[str, Any] = field(default_factory=dict)
    summary: dict[str, float] = field(default_factory=dict)  # summary-only keys -> value delivered
    exit_code: int | None = None
    run_name: str = ""
    history_keys: set[str] = field(default_factory=set)
    step_metrics: dict[str, str] = field(default_factory=dict)  # key or glob -> its step metric
    last_step: int | None = None
    last_wall: float | None = None
    _columns: Columns = field(default_factory=dict)
    _step_values: dict[str, float] = field(default_factory=dict)  # step metric -> its latest value
    _candidates: dict[str, float] = field(default_factory=dict)  # summary keys not yet known summary-only
    _config_changed: bool = False
    _exit_changed: bool = False

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

    def _metric(self, metric: Any) -> None:
        target = metric.name or metric.glob_name
        if target and metric.step_metric:
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
        values: dict[str, float] = {}
        for item in history.item:
            number = _number(item.value_json)
            if number is not None:
                values[_key(item)] = number
        wall = values.get(TIMESTAMP, self.last_wall or 0.0)
        self.last_wall = wall
        steps = set(self.step_metrics.values())
        for metric in steps & values.keys():
            self._step_values[metric] = values[metric]
        for key, value in values.items():
            if key.startswith("_") or key in steps:
                continue
            metric = self._step_metric(key)
            # A row without its key's step metric is at that metric's last value (what the SDK's
            # step_sync fills in; older SDKs leave it out), W&B's own _step only without a metric.
            raw_step = values.get(metric, self._step_values.get(metric, values.get(STEP)))
            if raw_step is None or not math.isfinite(raw_step):
                continue
            step = int(raw_step)
            self.history_keys.add(key)
            column = self._columns.setdefault(key, ([], [], []))
            column[0].append(step)
            column[1].append(wall)
            column[2].append(value)
            self.last_step = step if self.last_step is None else max(self.last_step, step)
        if self._candidates:
            self._settle_summary(values)

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

    def _settle_summary(self, row: dict[str, float] | None) -> None:
        """Summary candidates not in ``row`` (None: the run exited) become points at the newest step."""
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
                self.config[key] = json.loads(item.value_json)
            except ValueError:
                continue
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
