"""What differs between the configs of several runs: the settings that vary, each run's value.

Settings equal across every run are folded away (only counted). Settings that name a run rather
than say how it trains (``output_dir``, ``run_name``, a veRL ``trainer.experiment_name``, a
tracker's own ``_``-keys) differ between any two runs and say nothing: they are left out and named
once. Runs whose configs differ only in their seed are a seed group (`rltop.view.seed_groups`), not
a diff: when every run compared belongs to one group, the diff has no settings and says so.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rltop.view.config import CONFIG_KEYS
from rltop.view.seed_groups import SEED_KEYS, SeedGroup, is_run_identity

MISSING: Any = object()
"""The value of a setting a run's config does not have (another trainer's option)."""


def is_ignored(key: str) -> bool:
    """Whether a config key names the run or its tracker's bookkeeping rather than a setting."""
    return key.startswith("_") or is_run_identity(key)


def value_key(value: Any) -> str:
    """The value as comparable text (lists and dicts by their JSON, so ``[1, 2]`` equals ``[1, 2]``)."""
    if value is MISSING:
        return "\0missing"
    return json.dumps(value, sort_keys=True, default=str)


def is_number(value: Any) -> bool:
    """A finite int or float (a bool is a category, not a number)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True)
class DiffRow:
    """One setting that differs: each run's value (`MISSING` where the run's config lacks it)."""

    key: str
    values: tuple[Any, ...]
    """In the order of `ConfigDiff.runs`."""

    @property
    def everywhere(self) -> bool:
        """Every run's config has the setting (it differs in value, not in presence)."""
        return all(value is not MISSING for value in self.values)

    @property
    def numeric(self) -> bool:
        """Every run has a finite number here: the setting can be split at a threshold."""
        return all(is_number(value) for value in self.values)


@dataclass
class ConfigDiff:
    """The settings that differ between the configs of ``runs`` (store names, in table order)."""

    runs: list[str]
    rows: list[DiffRow]
    equal: int
    """Settings every run has with the same value (folded away)."""
    ignored: list[str]
    """Keys left out because they name the run (output_dir...), sorted; only those that differ."""
    without_config: list[str] = field(default_factory=list)
    """Runs compared that logged no config (left out of the table)."""
    seed_group: SeedGroup | None = None
    """Set when every run compared is one seed group: they differ only in their seed."""

    def row(self, key: str) -> DiffRow | None:
        """The row of ``key`` (None when it does not differ)."""
        return next((row for row in self.rows if row.key == key), None)

    def values(self, key: str) -> dict[str, Any]:
        """Run name -> value of ``key``, for the runs that have it."""
        row = self.row(key)
        if row is None:
            return {}
        return {run: value for run, value in zip(self.runs, row.values) if value is not MISSING}


def _importance(key: str) -> tuple[int, str]:
    """Settings the rules calibrate on first (`CONFIG_KEYS` order), then the others by name."""
    return (CONFIG_KEYS.index(key), "") if key in CONFIG_KEYS else (len(CONFIG_KEYS), key)


def sort_value(value: Any) -> tuple[int, float, str]:
    """Numbers in numeric order, then everything else by text, missing values last."""
    if value is MISSING:
        return (2, 0.0, "")
    if is_number(value):
        return (0, float(value), "")
    return (1, 0.0, value_key(value))


def build_config_diff(
    configs: Mapping[str, Mapping[str, Any] | None],
    seed_groups: Sequence[SeedGroup] = (),
    order: Sequence[str] | None = None,
) -> ConfigDiff:
    """The diff of these runs' configs (run name -> config, None when it logged none).

    Rows: settings present in every run first, in `CONFIG_KEYS` order then by name; then the ones
    only some runs have. Runs: sorted by their values of the rows in that order (a learning-rate
    sweep reads from the smallest rate to the largest), then by ``order`` (default: name).
    """
    names = list(order) if order is not None else sorted(configs)
    with_config = [name for name in names if configs.get(name)]
    without = [name for name in names if not configs.get(name)]
    keys = sorted({key for name in with_config for key in configs[name]}, key=_importance)  # type: ignore[union-attr]
    rows: list[DiffRow] = []
    ignored: list[str] = []
    equal = 0
    for key in keys:
        values = tuple(configs[name].get(key, MISSING) for name in with_config)  # type: ignore[union-attr]
        if len({value_key(value) for value in values}) <= 1:
            equal += 1
        elif is_ignored(key):
            ignored.append(key)
        else:
            rows.append(DiffRow(key, values))
    rows.sort(key=lambda row: not row.everywhere)  # stable: importance order within each part
    group = _one_group(with_config, seed_groups)
    if group is not None:
        rows = [row for row in rows if row.key not in SEED_KEYS]
    position = {name: index for index, name in enumerate(with_config)}
    ordered = sorted(
        with_config,
        key=lambda name: ([sort_value(row.values[position[name]]) for row in rows], position[name]),
    )
    rows = [DiffRow(row.key, tuple(row.values[position[name]] for name in ordered)) for row in rows]
    return ConfigDiff(ordered, rows, equal, sorted(ignored), without, group)


def _one_group(runs: list[str], seed_groups: Sequence[SeedGroup]) -> SeedGroup | None:
    """The seed group that is exactly these runs (two or more), if any."""
    return next((group for group in seed_groups if len(runs) > 1 and set(group.runs) == set(runs)), None)
