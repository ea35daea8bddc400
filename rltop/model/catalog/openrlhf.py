"""OpenRLHF's names (PPO, REINFORCE++, GRPO, RLOO, Dr. GRPO with its Ray trainers): spelling -> concept.

Taken from OpenRLHF's own code (OpenRLHF/OpenRLHF v0.11.0, and tags back to v0.8.11):
``openrlhf/trainer/ray/ppo_actor.py`` (actor metrics), ``openrlhf/trainer/ray/ppo_critic.py``
(``critic_loss``, ``values``), ``openrlhf/trainer/ppo_utils/experience_maker.py`` (``kl``, ``reward``,
``return``, lengths) and ``openrlhf/trainer/ppo_trainer.py`` (``timing/*``, ``rollout/*``). W&B and
TensorBoard prefix every key with ``train/`` or ``eval/`` (stripped like transformers' prefix).
``entropy_loss`` is the mean token entropy (a positive number, despite its name); ``kl`` uses the
configured estimator (``kl_estimator``, k1 by default, which can dip below 0); ``return`` is the
shaped return, about 0 for the group-normalised estimators.
"""

from __future__ import annotations

import re

from rltop.model.catalog.table import Family, Name, NameTable

NAMES: tuple[Name, ...] = (
    Name("reward", "reward", meaning="Mean reward per sample, after the length penalties."),
    Name("score", "task_score", meaning="Mean score per sample, as the reward function returned it."),
    Name("kl", "kl_reference_token"),
    Name("logprobs_diff", "kl_reference_token", meaning="k1 KL to the reference (log-prob difference)."),
    Name("ppo_kl", "approx_kl", meaning="k1 KL from the old to the new policy over the update."),
    Name("ppo_clip_ratio", "policy_clip_fraction"),
    Name("actor_grad_norm", "grad_norm"),
    Name("entropy_loss", "policy_entropy", meaning="Mean per-token entropy (a mean, despite its name)."),
    Name("policy_loss", "policy_loss"),
    Name("actor_lr", "learning_rate"),
    Name("critic_loss", "value_loss"),
    Name("values", "value_mean", title="Value prediction", meaning="Mean prediction of the value head."),
    Name("critic_grad_norm", "critic_grad_norm"),
    Name("critic_lr", "critic_learning_rate"),
    Name("return", "return_statistic", title="Return", meaning="Mean shaped return per sample."),
    Name("group_reward_std", "reward_std"),
    Name("response_length", "response_length"),
    Name("total_length", "total_length"),
    Name("truncated", "truncation_ratio", meaning="Share of samples vLLM stopped at max tokens."),
    Name("response_clip_ratio", "context_overflow_ratio"),
    # The step's rollout statistics (v0.9.8+): twins of the per-sample means above, judged once.
    Name("rollout/reward_mean", "reward"),
    Name("rollout/reward_std", "reward_std"),
    Name("rollout/response_length_mean", "response_length"),
    Name("rollout/truncated_rate", "truncation_ratio"),
    Name("rollout/num_samples", "samples_count"),
    Name("timing/step_total", "step_time"),
    Name(
        "dynamic_filtering_pass_rate",
        "filter_pass_rate",
        meaning="Percent of prompt groups kept by dynamic filtering (0-100).",
    ),
    Name("global_step", "global_step"),
    # openrlhf/models/loss.py PolicyLoss (v0.8.9+, with vLLM IS correction): masked_mean(log π_rollout -
    # log π_old), logged as train/vllm_kl.
    Name(
        "vllm_kl",
        "rollout_logp_gap",
        title="vLLM KL",
        meaning="Mean log-prob difference vLLM − old policy per token (signed k1, OpenRLHF with vLLM IS "
        "correction); near 0 when they agree.",
    ),
)

FAMILIES: tuple[Family, ...] = (
    Family(re.compile(r"eval_(?P<f>.+_pass\d+)"), "validation_score"),
    Family(re.compile(r"eval_(?P<f>.+)"), "validation_statistic"),
    Family(re.compile(r"timing/(?P<f>.+)"), "timing_statistic"),
)

PPO_ONLY = re.compile(r"critic_loss|critic_lr|critic_grad_norm|values")
GROUP_ONLY = re.compile(r"group_reward_std")

SETTINGS: tuple[tuple[str, str], ...] = (
    ("actor_learning_rate", "learning_rate"),
    ("actor.learning_rate", "learning_rate"),
    ("n_samples_per_prompt", "num_generations"),
    ("rollout.n_samples_per_prompt", "num_generations"),
    ("init_kl_coef", "kl_coef"),
    ("algo.kl.init_coef", "kl_coef"),
    ("eps_clip", "epsilon"),
    ("actor.eps_clip", "epsilon"),
    ("generate_max_len", "max_completion_length"),
    ("rollout.max_new_tokens", "max_completion_length"),
    ("max_norm", "max_grad_norm"),
    ("algo.kl.estimator", "kl_estimator"),
    ("temperature", "temperature"),
    ("rollout.temperature", "temperature"),
)

TABLE = NameTable(
    "openrlhf",
    NAMES,
    FAMILIES,
    kinds=((PPO_ONLY, "PPO"), (GROUP_ONLY, "GRPO")),
    settings=SETTINGS,
    estimators=("advantage_estimator", "algo.advantage.estimator"),
)
