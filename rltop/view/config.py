"""The training arguments worth seeing next to the curves, from a run's ``args/text_summary``."""

from __future__ import annotations

import json
from typing import Any

from rltop.model.catalog import settings_of
from rltop.view.text.safe import visible

# What the health rules calibrate on and what people change first when a run goes wrong (TRL
# GRPOConfig / PPOConfig, transformers). The JSON keeps every one of them.
CONFIG_KEYS = (
    "learning_rate", "lr_scheduler_type", "per_device_train_batch_size", "gradient_accumulation_steps",
    "max_grad_norm", "num_train_epochs", "max_steps", "logging_steps", "seed",
    # GRPO
    "beta", "num_generations", "num_iterations", "epsilon", "epsilon_high", "loss_type",
    "scale_rewards", "max_completion_length", "temperature",
    # PPO
    "kl_coef", "kl_estimator", "cliprange", "cliprange_value", "vf_coef", "num_ppo_epochs",
    "num_mini_batches", "response_length", "missing_eos_penalty", "total_episodes",
)  # fmt: skip

# The few settings shown in text headers and on the detail screen: what the rules calibrate on and
# what the advice refers to.
HEADLINE_CONFIG_KEYS = (
    "learning_rate", "beta", "kl_coef", "num_iterations", "num_ppo_epochs", "num_mini_batches",
    "epsilon", "epsilon_high", "cliprange", "num_generations", "max_completion_length", "response_length",
    "max_grad_norm",
)  # fmt: skip


def config_summary(config: dict[str, Any] | None) -> dict[str, Any] | None:
    """The `CONFIG_KEYS` present in a run's config, in that order (scalars only), under rltop's names
    whatever the framework spells them (veRL's ``actor_rollout_ref.actor.optim.lr`` is ``learning_rate``,
    as the rules and their advice call it)."""
    if config is None:
        return None
    config = settings_of(config)
    return {
        key: config[key]
        for key in CONFIG_KEYS
        if key in config and (config[key] is None or isinstance(config[key], (str, int, float, bool)))
    }


def headline_config(summary: dict[str, Any] | None) -> dict[str, Any]:
    """The `HEADLINE_CONFIG_KEYS` part of a config summary, unset (null) ones left out."""
    summary = summary or {}
    return {key: summary[key] for key in HEADLINE_CONFIG_KEYS if summary.get(key) is not None}


def config_value(value: Any) -> str:
    """A config value as written on the command line: strings as they are (made visible), others as JSON."""
    return visible(value) if isinstance(value, str) else json.dumps(value)
