"""Calibrate the rules with the run's own training arguments (``args/text_summary``).

transformers logs the TrainingArguments / TRL config as JSON at train start. From it we learn, for
example, that GRPO clip ratios are always 0 when every step is on-policy (num_iterations = 1), which
steps are the on-policy generation steps otherwise, and the settings to name in the advice
("raise max_completion_length (now 16)").
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from rltop.model.catalog import config_kind, settings_of

NO_CLIP_RATIO_LOSSES = frozenset({"cispo", "sapo", "vespo"})
"""TRL 1.16 losses without ``clip_ratio/*`` (cispo logs ``cispo_clip_ratio``, vespo
``vespo/phi_seq_mean``)."""


def _word(value: Any) -> str | None:
    """A short lower-case setting ("sequence", "cispo"); None for anything else."""
    return value.strip().lower() if isinstance(value, str) and 0 < len(value) <= 40 else None


def _number(value: Any) -> float | None:
    """A finite float from a JSON value (numbers or numeric strings), else None."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: a 400-digit integer
        return None
    return number if np.isfinite(number) else None


@dataclass(frozen=True)
class Calibration:
    """The config values the rules use; None when the run did not log them."""

    beta: float | None = None
    num_iterations: float | None = None
    epsilon: float | None = None
    epsilon_high: float | None = None
    max_completion_length: float | None = None
    cliprange: float | None = None
    kl_coef: float | None = None
    logging_steps: float | None = None
    learning_rate: float | None = None
    num_ppo_epochs: float | None = None
    num_mini_batches: float | None = None
    response_length: float | None = None
    steps_per_generation: float | None = None
    gradient_accumulation_steps: float | None = None
    max_grad_norm: float | None = None
    max_steps: float | None = None
    num_generations: float | None = None
    temperature: float | None = None
    num_total_batches: float | None = None  # PPOTrainer: its last global step
    kl_estimator: str | None = None  # PPOTrainer: "k1" (default) or "k3"
    # RLOOTrainer's config: it has normalize_advantages, and neither loss_type nor scale_rewards.
    rloo: bool = False
    # The kind the config names (veRL's algorithm.adv_estimator, OpenRLHF's advantage_estimator).
    named_kind: str | None = None
    # TRL 1.16 GRPO options that change what a healthy run logs (`rltop.health.options`).
    loss_type: str | None = None  # grpo, bnpo, dr_grpo, dapo, luspo, cispo, sapo, vespo
    importance_sampling_level: str | None = None  # "token" (default) or "sequence" (GSPO)
    use_adaptive_entropy: bool = False  # the entropy controller (Skywork-OR1) is on
    entropy_target: float | None = None  # nats the controller holds the entropy at
    entropy_coef: float | None = None  # a fixed entropy bonus (0: off)
    entropy_coef_max: float | None = None  # the controller's cap (1.0 by default)
    top_entropy_quantile: float | None = None  # < 1: only the highest-entropy tokens are trained
    mask_truncated_completions: bool = False  # truncated completions are left out of the loss
    use_vllm: bool = False
    vllm_importance_sampling_correction: bool | None = None  # TRL default True (with use_vllm)
    vllm_importance_sampling_mode: str | None = None  # token_truncate, sequence_mask (default), ...
    vllm_importance_sampling_clip_max: float | None = None  # the IS ratio's cap (3.0 by default)

    @classmethod
    def from_config(cls, config: dict[str, Any] | None) -> Calibration:
        """Pick the known keys out of a parsed ``args/text_summary`` (None or junk: all unknown)."""
        if not config:
            return cls()
        named_kind = config_kind(config)
        config = settings_of(config)  # every framework's spelling of a setting, under rltop's name
        numbers = {f.name: _number(config.get(f.name)) for f in fields(cls) if f.type == "float | None"}
        words = {
            f.name: _word(config.get(f.name))
            for f in fields(cls)
            if f.type == "str | None" and f.name != "named_kind"
        }
        switches = {f.name: config.get(f.name) is True for f in fields(cls) if f.type == "bool"}
        grpo_only = {"loss_type", "scale_rewards"} & set(config)
        switches["rloo"] = "normalize_advantages" in config and not grpo_only
        correction = config.get("vllm_importance_sampling_correction")
        return cls(
            **numbers, **words, **switches,
            vllm_importance_sampling_correction=correction if isinstance(correction, bool) else None,
            named_kind=named_kind,
        )  # fmt: skip

    @property
    def sequence_level(self) -> bool:
        """GSPO: one importance ratio per completion (``importance_sampling_level="sequence"``), so the
        clip ratios count whole completions, not tokens."""
        return self.importance_sampling_level == "sequence"

    @property
    def clip_ratios_logged(self) -> bool:
        """Whether TRL logs ``clip_ratio/*`` with this loss (cispo, sapo and vespo do not)."""
        return self.loss_type not in NO_CLIP_RATIO_LOSSES

    def now(self, name: str) -> str:
        """`` (now 16)`` for a logged setting, else "" (used inside advice sentences)."""
        value = getattr(self, name)
        return "" if value is None else f" (now {value:g})"

    def kl_is_k1(self, per_token: bool) -> bool:
        """The logged KL is a k1 estimate (a log-ratio mean), which may dip slightly below 0.

        Per token (``kl``): GRPO logs k3, which is >= 0 for every sample, RLOO a k1 estimate made at
        generation time. Per sequence (PPO ``objective/kl``): k1 unless ``kl_estimator="k3"``.
        """
        if per_token:
            return self.rloo or self.kl_estimator in ("k1", "kl")  # OpenRLHF's and veRL's k1 spellings
        return (self.kl_estimator or "k1") != "k3"

    def final_step(self) -> float | None:
        """The global step a finished run ends at: max_steps, or PPO's num_total_batches."""
        for planned in (self.max_steps, self.num_total_batches):
            if planned is not None and planned > 0:
                return planned
        return None

    def guess_kind(self) -> str:
        """The kind the config names, else "RLOO" / "GRPO" / "PPO" from trainer-specific arguments,
        "unknown" without them."""
        if self.named_kind:
            return self.named_kind
        if self.rloo:
            return "RLOO"
        if self.num_generations is not None or self.max_completion_length is not None:
            return "GRPO"
        if self.num_ppo_epochs is not None or self.kl_coef is not None:
            return "PPO"
        return "unknown"

    @property
    def grpo_always_on_policy(self) -> bool:
        """True when every GRPO step is on-policy, so its clip ratios are exactly 0 by design.

        That holds with num_iterations = 1 when each generation feeds a single optimizer step
        (steps_per_generation equal to gradient_accumulation_steps, TRL's default).
        """
        if self.num_iterations != 1:
            return False
        spg, accumulation = self.steps_per_generation, self.gradient_accumulation_steps or 1
        return spg is None or spg <= accumulation

    def generation_interval(self) -> int | None:
        """Global steps between two GRPO generations when only the first of them is on-policy.

        None when unknown or when logged points average several steps (logging_steps > 1), where
        the on-policy zeros are mixed into every point and cannot be picked out.
        """
        if self.num_iterations is None or (self.logging_steps or 1) != 1:
            return None
        accumulation = self.gradient_accumulation_steps or 1
        spg = self.steps_per_generation or accumulation
        interval = self.num_iterations * spg / accumulation
        if interval < 2 or interval != int(interval):
            return None
        return int(interval)

    def on_policy_mask(self, steps: np.ndarray) -> np.ndarray | None:
        """True for the generation steps of GRPO (None when they cannot be told apart)."""
        return None if self.generation_interval() is None else ~self.off_policy_mask(steps)

    def off_policy_mask(self, steps: np.ndarray) -> np.ndarray:
        """True for steps that reuse old samples (where clipping can happen) under GRPO."""
        interval = self.generation_interval()
        if interval is None:
            return np.ones(len(steps), dtype=bool)
        # TRL generates at the first step (global step 1) and then every `interval` steps.
        return (np.asarray(steps) - 1) % interval != 0
