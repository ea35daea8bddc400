"""What every metric means, whatever a framework calls it: concepts, name tables and four lookups.

* `rltop.model.catalog.concepts` -- one `Concept` per quantity (policy entropy, clip fraction, KL to
  the reference, value loss, truncation, task score …): group, display order, title, meaning and
  advice. Rules, detectors, groups and the glossary bind to concepts.
* `rltop.model.catalog.table` -- `NameTable`: a framework's spellings, each naming its concept.
* `rltop.model.catalog.trl` -- TRL's names (GRPO, RLOO, PPO, TRL <= 0.11 PPO).
* `rltop.model.catalog.verl`, `rltop.model.catalog.openrlhf` -- veRL's and OpenRLHF's names, their
  config keys for the settings rltop reads, and the key naming their advantage estimator.

Adding a framework is one name table module and one entry in `TABLES`. Tags are recognised with or
without the ``train/``, ``eval/`` or ``test/`` prefix that transformers' ``rewrite_logs`` adds;
families (``rewards/<name>/mean``) match any member name. Unknown tags are kept, in the group
"Other". `describe`, `trainer_kind`, `config_kind`, `settings_of`, `group_tags` and `split_tag` are
the lookups the health engine, the dashboard and the reports use.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from rltop.model.catalog import openrlhf, trl, verl
from rltop.model.catalog.concepts import CONCEPTS, GROUPS, ORDER
from rltop.model.catalog.table import KINDS, NameTable

__all__ = ["GROUPS", "SPLITS", "TABLES", "UNKNOWN_ORDER", "MetricInfo", "config_kind", "describe",
           "group_tags", "settings_of", "split_tag", "spelling_rank", "trainer_kind"]  # fmt: skip

SPLITS = ("train", "eval", "test")
UNKNOWN_ORDER = 10_000  # unknown tags sort after every known metric of their group
TABLES: tuple[NameTable, ...] = (trl.TABLE, verl.TABLE, openrlhf.TABLE)
"""Every framework's names, the first table that knows a key wins."""


@dataclass(frozen=True)
class MetricInfo:
    """Catalogue entry of one tag: ``key`` is the tag without its train/eval/test prefix; ``concept``
    what it measures ("" for a tag no table knows)."""

    key: str
    group: str
    order: int
    title: str
    meaning: str
    advice: str
    split: str  # "train", "eval", "test" or "" when the tag had no prefix
    concept: str = ""


def split_tag(tag: str) -> tuple[str, str]:
    """``(split, key)`` of a tag: ``"train/val/ratio"`` -> ``("train", "val/ratio")``."""
    head, sep, rest = tag.partition("/")
    if sep and rest and head in SPLITS:
        return head, rest
    return "", tag


def _entry(concept: str, key: str, split: str, title: str | None, meaning: str | None,
           advice: str | None, member: str | None = None) -> MetricInfo:  # fmt: skip
    """A `MetricInfo` from a concept and a spelling's own wording (``member``: a family's ``{f}``)."""
    known = CONCEPTS[concept]
    texts = [title or known.title, meaning or known.meaning, advice if advice is not None else known.advice]
    if member is not None:
        texts = [text.format(f=member) for text in texts]
    return MetricInfo(key, known.group, ORDER[concept], texts[0], texts[1], texts[2], split, concept)


@lru_cache(maxsize=1)
def _names() -> dict[str, tuple]:
    """key -> (concept, title, meaning, advice) of every table's names (the first table wins)."""
    found: dict[str, tuple] = {}
    for table in TABLES:
        for name in table.names:
            found.setdefault(name.key, (name.concept, name.title, name.meaning, name.advice))
    return found


@lru_cache(maxsize=8192)
def describe(tag: str) -> MetricInfo:
    """Catalogue entry of ``tag`` (prefixed or not); unknown tags get group "Other"."""
    split, key = split_tag(tag)
    known = _names().get(key)
    if known is not None:
        return _entry(known[0], key, split, *known[1:])
    for table in TABLES:
        for family in table.families:
            match = family.pattern.fullmatch(key)
            if match:
                return _entry(
                    family.concept,
                    key,
                    split,
                    family.title,
                    family.meaning,
                    family.advice,
                    member=match.group("f"),
                )
    return MetricInfo(key, "Other", UNKNOWN_ORDER, key, "", "", split)


def trainer_kind(tags: Iterable[str]) -> str:
    """ "PPO", "GRPO" or "unknown", from the names only one kind of trainer logs."""
    votes: dict[str, int] = {}
    for tag in tags:
        key = split_tag(tag)[1]
        for table in TABLES:
            kind = next((kind for pattern, kind in table.kinds if pattern.fullmatch(key)), None)
            if kind is not None:
                votes[kind] = votes.get(kind, 0) + 1
                break
    ranked = sorted(votes.items(), key=lambda item: -item[1])
    if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
        return "unknown"
    return ranked[0][0]


def _sort_key(tag: str) -> tuple[int, str, int, str]:
    info = describe(tag)
    # Same metric of different splits side by side (train, bare, eval, test): easy to compare.
    split_rank = {"train": 0, "": 1, "eval": 2, "test": 3}[info.split]
    # Families share an order: their key ("rewards/length_reward/mean") then sorts mean before std.
    return info.order, info.key, split_rank, tag


def group_tags(tags: Iterable[str]) -> list[tuple[str, list[str]]]:
    """The tags grouped as in GROUPS (only groups that have tags), each group in display order."""
    grouped: dict[str, list[str]] = {group: [] for group in GROUPS}
    for tag in set(tags):
        grouped[describe(tag).group].append(tag)
    return [(group, sorted(found, key=_sort_key)) for group, found in grouped.items() if found]


def config_kind(config: dict | None) -> str | None:
    """The trainer kind a run's config names ("PPO" for veRL's ``algorithm.adv_estimator: gae``,
    "GRPO" for ``grpo``, OpenRLHF's ``group_norm``…), None when no table's estimator key is there.
    An estimator rltop does not know is named as the config spells it, upper-cased."""
    if not config:
        return None
    for table in TABLES:
        for key in table.estimators:
            value = config.get(key)
            if isinstance(value, str) and value.strip():
                return KINDS.get(value.strip().lower(), value.strip().upper())
    return None


def settings_of(config: dict | None) -> dict:
    """``config`` with rltop's setting names added from every framework's spelling of them
    (veRL's ``actor_rollout_ref.actor.optim.lr`` -> ``learning_rate``); a setting the config
    already names itself (TRL's own keys) is kept as it is; one its switch turns off is 0."""
    if not config:
        return {}
    found = dict(config)
    for table in TABLES:
        for setting, switch in table.switches:
            if setting not in found and config.get(switch) is False:
                found[setting] = 0.0
        for key, setting in table.settings:
            if key in config and setting not in found and config[key] is not None:
                found[setting] = config[key]
        for setting, keys in table.products:
            factors = [config.get(key) for key in keys]
            if setting not in found and all(_positive_int(factor) for factor in factors):
                found[setting] = math.prod(factors)
    return found


def _positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value < 2**53


@lru_cache(maxsize=8192)
def spelling_rank(key: str) -> int:
    """How much the catalogue prefers spelling ``key`` (a prefix-free key) among the spellings of its
    concept: its position in the tables (lower first); a family member or an unknown key comes last."""
    return _ranks().get(key, 1 << 30)


@lru_cache(maxsize=1)
def _ranks() -> dict[str, int]:
    ranks: dict[str, int] = {}
    for table in TABLES:
        for name in table.names:
            ranks.setdefault(name.key, len(ranks))
    return ranks
