"""Seed groups: runs of one experiment that differ only in their random seed.

Two ways to tell, both from what the runs themselves logged:

- **config**: the training arguments (``args/text_summary``) are equal once the seeds (``seed``,
  ``data_seed``) and the keys that name the run itself (``output_dir``, ``logging_dir``,
  ``run_name``, ...) are left out, and the seeds differ;
- **name**: the display names differ only in a seed-like part (``seed_1``/``seed_2``, ``s1``/``s2``,
  ``-r3``, ``rep2``, or a number folder under a ``seeds`` folder). When two such runs both logged a
  config and the configs differ in more than the seed, they are not a group: the names lie.

A group's members are listed in name order; its name replaces the seed part with ``*``
(``grpo_seed_*``), or is the members' common prefix.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

SEED_KEYS = frozenset({"seed", "data_seed"})
"""Config keys that are a run's random seed."""
RUN_IDENTITY_KEYS = frozenset({
    "output_dir", "logging_dir", "run_name", "hub_model_id", "push_to_hub_model_id",
    "resume_from_checkpoint", "trackio_space_id", "project",
})  # fmt: skip
"""Config keys that name where a run writes, not how it trains: different for every seed."""
RUN_IDENTITY_LEAVES = frozenset({"experiment_name", "default_local_dir", "default_hdfs_dir"})
"""The same for veRL's flat dotted keys (``trainer.experiment_name``), by their last part."""
_SEED_PART = re.compile(r"(?<![A-Za-z0-9])(seed|s|r|rep|replica|trial)([_=-]?)(\d+)(?![A-Za-z0-9])", re.I)
_SEEDS_FOLDER = re.compile(r"seed", re.I)


@dataclass(frozen=True)
class SeedGroup:
    """Runs that differ only in their seed."""

    name: str
    """``grpo_seed_*``: what screens and reports call the group (exact characters)."""
    runs: tuple[str, ...]
    """Member run names, in name order."""
    seeds: tuple[str, ...]
    """Each member's seed, as the config (or else the name) gives it."""
    basis: str
    """"config" or "name": how the group was found."""


def config_signature(config: Mapping[str, Any] | None) -> str | None:
    """The config without its seeds and run-naming keys, as comparable text (None without one)."""
    if not config:
        return None
    kept = {key: value for key, value in config.items() if key not in SEED_KEYS and not is_run_identity(key)}
    return json.dumps(kept, sort_keys=True, default=str)


def is_run_identity(key: str) -> bool:
    """Whether ``key`` names the run (where it writes, what it is called), not how it trains."""
    return key in RUN_IDENTITY_KEYS or key.rsplit(".", 1)[-1] in RUN_IDENTITY_LEAVES


def config_seed(config: Mapping[str, Any] | None) -> str | None:
    """``"42"``, or ``"42/7"`` with a data seed of its own; None without a seed."""
    if not config or "seed" not in config:
        return None
    seed = str(config.get("seed"))
    data_seed = config.get("data_seed")
    return seed if data_seed in (None, config.get("seed")) else f"{seed}/{data_seed}"


def name_pattern(display_name: str) -> tuple[str, str] | None:
    """(the name with its seed part as ``*``, the seed) when the name has a seed-like part."""
    parts = display_name.split("/")
    seeds: list[str] = []

    def star(match: re.Match[str]) -> str:
        seeds.append(match.group(3))
        return f"{match.group(1)}{match.group(2)}*"

    shown = []
    for index, part in enumerate(parts):
        if part.isdigit() and index > 0 and _SEEDS_FOLDER.search(parts[index - 1]):
            seeds.append(part)
            shown.append("*")
        else:
            shown.append(_SEED_PART.sub(star, part))
    return ("/".join(shown), "/".join(seeds)) if seeds else None


def find_seed_groups(
    configs: Mapping[str, Mapping[str, Any] | None], display_names: Mapping[str, str]
) -> list[SeedGroup]:
    """The seed groups among these runs (run name -> config, run name -> display name), by name."""
    groups: list[SeedGroup] = []
    grouped: set[str] = set()
    signatures = {name: config_signature(configs.get(name)) for name in display_names}
    by_config: dict[str, list[str]] = defaultdict(list)
    for name in sorted(display_names):
        if signatures[name] is not None:
            by_config[signatures[name]].append(name)
    for members in by_config.values():
        seeds = [config_seed(configs.get(name)) for name in members]
        if len(members) > 1 and None not in seeds and len(set(seeds)) > 1:
            name = _group_name(members, display_names)
            groups.append(SeedGroup(name, tuple(members), tuple(seeds), "config"))
            grouped.update(members)
    by_name: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for name in sorted(display_names):
        pattern = name_pattern(display_names[name]) if name not in grouped else None
        if pattern is not None:
            by_name[pattern[0]].append((name, pattern[1]))
    for key, found in by_name.items():
        members = [name for name, _ in found]
        known = {signatures[name] for name in members if signatures[name] is not None}
        if len(members) > 1 and len({seed for _, seed in found}) == len(found) and len(known) <= 1:
            groups.append(SeedGroup(key, tuple(members), tuple(seed for _, seed in found), "name"))
    return sorted(groups, key=lambda group: (group.name, group.runs))


def _group_name(members: list[str], display_names: Mapping[str, str]) -> str:
    """``grpo_seed_*`` when the names show the seed, else their common prefix and ``*``."""
    patterns = {name_pattern(display_names[name]) for name in members}
    keys = {pattern[0] for pattern in patterns if pattern is not None}
    if len(keys) == 1 and None not in patterns:
        return keys.pop()
    shown = [display_names[name] for name in members]
    prefix = shown[0]
    for other in shown[1:]:
        while not other.startswith(prefix):
            prefix = prefix[:-1]
    prefix = prefix.rstrip("_-./ ")
    return f"{prefix}*" if prefix else f"{shown[0]} +{len(shown) - 1}"


def group_of(groups: list[SeedGroup], run: str) -> SeedGroup | None:
    """The group ``run`` belongs to, if any."""
    return next((group for group in groups if run in group.runs), None)
