"""A framework's name table: the metric names it logs, each naming the concept it measures."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Name:
    """One spelling of a concept (a key, without any ``train/``-style prefix); it may reword the
    concept's title, meaning or advice for its framework."""

    key: str
    concept: str
    title: str | None = None
    meaning: str | None = None
    advice: str | None = None


@dataclass(frozen=True)
class Family:
    """Spellings matched by a pattern whose ``f`` group names a member (``rewards/<f>/mean``)."""

    pattern: re.Pattern[str]
    concept: str
    title: str | None = None
    meaning: str | None = None
    advice: str | None = None


@dataclass(frozen=True)
class NameTable:
    """Everything rltop knows of one framework's names.

    ``kinds``: (pattern, trainer kind) of names only one trainer logs, counted to tell the trainer
    from the tags alone ("PPO", "GRPO"). ``settings``: (the framework's config key, rltop's setting)
    pairs, so that calibration and advice read ``learning_rate`` whatever the framework calls it
    (veRL's ``actor_rollout_ref.actor.optim.lr``). ``estimators``: the config keys naming the
    algorithm (veRL's ``algorithm.adv_estimator``), whose value tells the trainer kind (`KINDS`).
    """

    framework: str
    names: tuple[Name, ...]
    families: tuple[Family, ...] = ()
    kinds: tuple[tuple[re.Pattern[str], str], ...] = ()
    settings: tuple[tuple[str, str], ...] = ()
    estimators: tuple[str, ...] = ()
    products: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """(setting, config keys) of settings the framework logs only as a product: veRL's planned
    steps are its dataloader's batches × its epochs when total_training_steps is not printed."""
    switches: tuple[tuple[str, str], ...] = ()
    """(setting, config key) of settings a switch turns off: the setting is 0 while its switch is
    false, whatever its coefficient says (veRL keeps ``kl_loss_coef: 0.001`` with
    ``use_kl_loss: False``: no KL penalty, and advice saying "beta (now 0.001)" would mislead)."""


KINDS: dict[str, str] = {
    "gae": "PPO",
    "grpo": "GRPO",
    "grpo_passk": "GRPO",
    "grpo_vectorized": "GRPO",
    "group_norm": "GRPO",
    "dr_grpo": "GRPO",
    "optimal_token_baseline": "GRPO",
    "tir_optimal_token_baseline": "GRPO",
    "rloo": "RLOO",
    "rloo_vectorized": "RLOO",
    "reinforce": "REINFORCE++",
    "reinforce_plus_plus": "REINFORCE++",
    "reinforce_baseline": "REINFORCE++",
    "reinforce_plus_plus_baseline": "REINFORCE++",
    "remax": "ReMax",
    "opo": "OPO",
    "gpg": "GPG",
}
"""The trainer kind each advantage estimator makes (veRL's ``AdvantageEstimator``, OpenRLHF's
``advantage_estimator``): only ``gae`` trains a value head, the others are critic-free."""
