"""TRL's names (GRPOTrainer, RLOOTrainer, PPOTrainer, and the PPO of TRL <= 0.11): spelling -> concept.

The keys are the metric names TRL logs, without the ``train/``/``eval/``/``test/`` prefix that
transformers' ``rewrite_logs`` adds (``trainer_state.json`` and MLflow keep them bare). A spelling
may word its meaning its own way (the concept's wording is the default). Meanings follow TRL's
"Logging" documentation in our own words.
"""

from __future__ import annotations

import re

from rltop.model.catalog.concepts import ENTROPY_ADVICE, PPO_STEP_ADVICE
from rltop.model.catalog.table import Family, Name, NameTable

NAMES: tuple[Name, ...] = (
    Name("objective/rlhf_reward", "shaped_reward"),
    Name("objective/scores", "task_score"),
    Name("objective/non_score_reward", "kl_penalty"),
    Name("reward", "reward"),
    Name("kl", "kl_reference_token"),
    Name("val/ratio", "policy_ratio"),
    Name("val/ratio_var", "policy_ratio_variance"),
    Name("policy/approxkl_avg", "approx_kl"),
    Name("policy/clipfrac_avg", "policy_clip_fraction"),
    Name("objective/kl", "kl_reference_sequence"),
    Name("clip_ratio/region_mean", "clip_ratio_region"),
    Name("clip_ratio/low_mean", "clip_ratio_low"),
    Name("clip_ratio/low_min", "clip_ratio_low_min"),
    Name("clip_ratio/high_mean", "clip_ratio_high"),
    Name("clip_ratio/high_max", "clip_ratio_high_max"),
    Name(
        "clip_ratio",
        "clip_ratio_region",
        title="Clipped ratio",
        meaning="Share of tokens clipped (Liger loss variant).",
        advice="High: lower the learning rate or use fewer num_iterations.",
    ),
    Name("grad_norm", "grad_norm"),
    Name("policy/entropy_avg", "policy_entropy"),
    Name(
        "entropy",
        "policy_entropy",
        meaning="Mean per-token entropy of the completions; stable and non-zero is healthy.",
    ),
    Name("objective/entropy", "sequence_entropy"),
    Name("loss/policy_avg", "policy_loss"),
    Name("loss", "loss"),
    Name("entropy_coef", "entropy_coef"),
    Name(
        "policy_loss",
        "policy_loss",
        meaning="GRPO's policy term alone, before the entropy bonus (logged when entropy_coef or "
        "use_adaptive_entropy is set; loss = policy_loss - entropy_coef × entropy).",
        advice="loss may be negative while this stays near 0: the entropy bonus, not a problem.",
    ),
    Name("cispo_clip_ratio", "cispo_clip_ratio"),
    Name("vespo/phi_seq_mean", "vespo_phi"),
    # vLLM importance sampling (use_vllm with vllm_importance_sampling_correction; grpo_trainer.py
    # L2860-2896 in 1.16): |old_logp - vllm_logp| per token, and the ratio applied after truncation/masking.
    Name(
        "sampling/sampling_logp_difference/mean",
        "rollout_logp_gap",
        meaning="Mean |log-prob difference| per token between vLLM and the trainer; ~0.001 at top_p=1 "
        "(trl#6789), rising means they disagree.",
    ),
    Name("sampling/sampling_logp_difference/max", "rollout_logp_gap_max"),
    Name("sampling/importance_sampling_ratio/min", "sampling_is_ratio", title="Applied IS ratio (min)"),
    Name("sampling/importance_sampling_ratio/mean", "sampling_is_ratio", title="Applied IS ratio (mean)"),
    Name("sampling/importance_sampling_ratio/max", "sampling_is_ratio", title="Applied IS ratio (max)"),
    Name("lr", "learning_rate", meaning="Learning rate of the optimizer (PPO logs lr)."),
    Name("learning_rate", "learning_rate"),
    Name("loss/value_avg", "value_loss"),
    Name("val/clipfrac_avg", "value_clip_fraction"),
    Name("completions/clipped_ratio", "truncation_ratio"),
    Name("completions/mean_length", "response_length"),
    Name("completions/min_length", "response_length_min"),
    Name("completions/max_length", "response_length_max"),
    Name("completions/mean_terminated_length", "terminated_length"),
    Name("completions/min_terminated_length", "terminated_length_min"),
    Name("completions/max_terminated_length", "terminated_length_max"),
    Name(
        "completion_length",
        "response_length",
        meaning="Mean completion length (older TRL name).",
        advice="See completions/clipped_ratio for truncation.",
    ),
    Name("val/num_eos_tokens", "eos_count"),
    Name("num_tokens", "tokens_seen"),
    Name("reward_std", "reward_std"),
    Name("frac_reward_zero_std", "zero_std_groups"),
    Name("eps", "episodes_per_second"),
    Name("episode", "episodes"),
    Name("epoch", "epoch"),
    Name("step_time", "step_time"),
    Name("train_loss", "final_train_loss"),
    Name("train_runtime", "train_runtime"),
    Name("train_samples_per_second", "train_samples_per_second"),
    Name("train_steps_per_second", "train_steps_per_second"),
    Name("total_flos", "total_flos"),
    Name("runtime", "eval_runtime"),
    Name("samples_per_second", "eval_samples_per_second"),
    Name("steps_per_second", "eval_steps_per_second"),
    # TRL <= 0.11 PPO, kept so old logs get the same rules.
    Name(
        "env/reward_mean",
        "task_score",
        title="Reward",
        meaning="Mean environment reward (older TRL PPO).",
        advice="Should rise; see objective/kl if it falls.",
    ),
    Name("ppo/mean_scores", "task_score", meaning="Mean score (older TRL PPO).", advice="Should rise."),
    Name(
        "ppo/policy/ratio",
        "policy_ratio",
        meaning="Ratio new/old policy (older TRL PPO).",
        advice=PPO_STEP_ADVICE,
    ),
    Name(
        "ppo/policy/approxkl",
        "approx_kl",
        meaning="Approximate KL between consecutive policies (older TRL PPO).",
    ),
    Name("ppo/policy/policykl", "policy_kl"),
    Name("ppo/policy/clipfrac", "policy_clip_fraction", meaning="Clipped share (older TRL PPO)."),
    Name(
        "ppo/policy/entropy",
        "policy_entropy",
        meaning="Policy entropy (older TRL PPO).",
        advice=ENTROPY_ADVICE,
    ),
    Name(
        "ppo/loss/value",
        "value_loss",
        meaning="Value-function loss (older TRL PPO).",
        advice="Spikes: lower the learning rate or normalise rewards.",
    ),
    Name("ppo/val/var_explained", "explained_variance"),
)

FAMILIES: tuple[Family, ...] = (
    Family(re.compile(r"rewards/(?P<f>.+)/mean"), "reward_function_mean"),
    Family(re.compile(r"rewards/(?P<f>.+)/std"), "reward_function_std"),
    Family(
        re.compile(r"rewards/(?P<f>[^/]+)"),
        "reward_function_mean",
        title="{f}",
        meaning="Mean reward of the reward function {f} (older TRL name).",
    ),
    Family(re.compile(r"sampling/(?P<f>.+)"), "sampling_statistic"),
    Family(re.compile(r"tools/(?P<f>.+)"), "tool_statistic"),
)

# Names only one trainer logs (prefix-free keys): they tell PPO from GRPO (RLOO logs GRPO's names).
PPO_ONLY = re.compile(r"(objective|policy|val|ppo|env)/.*|loss/(policy|value)_avg|eps|episode")
GRPO_ONLY = re.compile(
    r"reward|reward_std|frac_reward_zero_std|completions/.*|clip_ratio(/.*)?|rewards/.*|completion_length"
)

TABLE = NameTable("trl", NAMES, FAMILIES, kinds=((PPO_ONLY, "PPO"), (GRPO_ONLY, "GRPO")))
