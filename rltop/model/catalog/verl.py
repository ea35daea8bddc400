"""veRL's names (``RayPPOTrainer``): spelling -> concept, old and new names both.

Taken from veRL's own code (volcengine/verl at b178a3cd, and its tags v0.2 to v0.7.0):
``verl/trainer/ppo/metric_utils.py`` (``compute_data_metrics``, timing and throughput),
``verl/workers/actor/dp_actor.py`` (``actor/*``), ``verl/workers/critic/dp_critic.py`` (``critic/vf_*``),
``verl/trainer/ppo/ray_trainer.py`` (entropy, the in-reward KL, ``training/*``) and
``verl/workers/utils/losses.py`` (the new engine's ``actor/entropy_loss``). Renames kept as aliases:
``actor/entropy_loss`` (to v0.4.0, and the new engine; the mean token entropy, despite its name) ->
``actor/entropy``; ``critic/kl``, ``critic/kl_coeff`` -> ``actor/reward_kl_penalty(_coeff)`` (v0.4.0);
``actor/lr(1e-4)`` (the learning rate × 1e4, to v0.2) -> ``actor/lr``; ``timing/`` -> ``timing_s/``;
``val/test_score/<source>`` -> ``val-core/...`` (v0.4.0).

The train-inference mismatch names, with their sources:

* ``verl/trainer/ppo/rollout_corr_helper.py`` (v0.6.1+; `compute_offpolicy_metrics` and
  `compute_is_metrics`, prefix ``rollout_corr/``): ``kl`` is ``masked_mean(log π_rollout - log π_train)``
  (signed k1), ``k3_kl``, ``chi2_token`` = E[ρ²] - 1, ``chi2_seq``, ``ppl_ratio``, ``log_ppl_abs_diff``;
  with ``rollout_is`` on, ``rollout_is_mean`` / ``_std`` / ``_eff_sample_size`` / ``_min`` / ``_max``.
  veRL v0.6.0 (``mismatch_helper.py``) logged the same under ``mismatch/``.
* ``verl/utils/debug/metrics.py`` `calculate_debug_metrics` (with ``rollout.calculate_log_probs=True``):
  ``training/rollout_probs_diff_{max,mean,std}``, |p_train - p_rollout| (probability space, in [0, 1]).

veRL's published alert levels (``docs/algo/rollout_corr.md``) are the mismatch rule's
(`rltop.health.rules.mismatch`).
"""

from __future__ import annotations

import re

from rltop.model.catalog.table import Family, Name, NameTable

_K1 = (
    "Mean log-prob difference generation engine − trainer per token (signed k1 KL); veRL alerts at "
    "|kl| > 0.1."
)


def _both(key: str, concept: str, **wording: str) -> tuple[Name, Name]:
    """The v0.6.1+ ``rollout_corr/<key>`` spelling and the v0.6.0 ``mismatch/<key>`` one."""
    return Name(f"rollout_corr/{key}", concept, **wording), Name(f"mismatch/{key}", concept, **wording)


NAMES: tuple[Name, ...] = (
    Name("critic/score/mean", "task_score", meaning="Mean task score per sequence, before the KL penalty."),
    Name(
        "critic/rewards/mean",
        "shaped_reward",
        meaning="Mean reward per sequence after the in-reward KL penalty (equal to the score without it).",
    ),
    Name("actor/reward_kl_penalty", "kl_reference_token", meaning="KL to the reference in the reward."),
    Name("critic/kl", "kl_reference_token", meaning="KL to the reference in the reward (veRL < 0.4)."),
    Name("actor/kl_loss", "kl_reference_token", meaning="KL to the reference as a loss (use_kl_loss)."),
    Name("actor/reward_kl_penalty_coeff", "kl_coefficient"),
    Name("critic/kl_coeff", "kl_coefficient"),
    Name("actor/kl_coef", "kl_coefficient"),
    Name("actor/ppo_kl", "approx_kl", meaning="k1 KL from the old to the new policy over the update."),
    Name("actor/pg_clipfrac", "policy_clip_fraction"),
    Name("actor/pg_clipfrac_lower", "dual_clip_fraction"),
    Name("actor/grad_norm", "grad_norm"),
    Name("actor/entropy", "policy_entropy"),
    Name(
        "actor/entropy_loss",
        "policy_entropy",
        meaning="Mean per-token entropy of the completions (veRL's older name: a mean, not a loss).",
    ),
    Name("actor/pg_loss", "policy_loss"),
    Name("actor/loss", "loss"),
    Name("actor/lr", "learning_rate"),
    Name("actor/lr(1e-4)", "learning_rate", meaning="Learning rate × 1e4 (veRL < 0.2)."),
    Name("critic/vf_loss", "value_loss"),
    Name("critic/vf_clipfrac", "value_clip_fraction"),
    Name("critic/vf_explained_var", "explained_variance"),
    Name("critic/vpred_mean", "value_mean", title="Value prediction"),
    Name("critic/grad_norm", "critic_grad_norm"),
    Name("critic/lr", "critic_learning_rate"),
    Name("critic/lr(1e-4)", "critic_learning_rate", meaning="Critic learning rate × 1e4 (veRL < 0.2)."),
    Name("response_length/mean", "response_length"),
    Name("response_length/max", "response_length_max"),
    Name("response_length/min", "response_length_min"),
    Name(
        "response_length/clip_ratio",
        "truncation_ratio",
        meaning="Share of responses that reached the maximum response length (truncated).",
        advice="Raise data.max_response_length, or reward ending properly so the model learns to stop.",
    ),
    # The same over the responses that were not aborted (veRL >= 0.6): twins, judged once.
    Name("response_length_non_aborted/mean", "response_length"),
    Name("response_length_non_aborted/max", "response_length_max"),
    Name("response_length_non_aborted/min", "response_length_min"),
    Name("response_length_non_aborted/clip_ratio", "truncation_ratio"),
    Name("response/aborted_ratio", "aborted_ratio"),
    Name("timing_s/step", "step_time"),
    Name("perf/time_per_step", "step_time"),
    Name("timing/step", "step_time"),
    Name(
        "perf/throughput", "performance_statistic", title="Throughput", meaning="Tokens per second per GPU."
    ),
    Name("training/global_step", "global_step"),
    Name("training/epoch", "epoch"),
    *_both("kl", "rollout_logp_gap", title="Rollout KL", meaning=_K1),
    Name("mismatch/mismatch_kl", "rollout_logp_gap", title="Rollout KL", meaning=_K1),
    *_both("rollout_is_mean", "rollout_is_weight_mean"),
    *_both("rollout_is_std", "rollout_is_weight_std"),
    *_both("rollout_is_eff_sample_size", "rollout_is_ess"),
    Name("rollout_corr/chi2_token", "rollout_chi2"),
    Name(
        "training/rollout_probs_diff_mean",
        "rollout_mismatch_statistic",
        title="Rollout prob diff (mean)",
        meaning="Mean |p_train - p_rollout| of the sampled tokens (probability space, 0-1).",
    ),
    Name(
        "training/rollout_probs_diff_max",
        "rollout_mismatch_statistic",
        title="Rollout prob diff (max)",
        meaning="Largest |p_train - p_rollout| of the sampled tokens (probability space, 0-1).",
    ),
)

FAMILIES: tuple[Family, ...] = (
    Family(re.compile(r"critic/score/(?P<f>max|min)"), "task_score_statistic"),
    Family(re.compile(r"critic/rewards/(?P<f>max|min)"), "shaped_reward_statistic"),
    Family(re.compile(r"critic/advantages/(?P<f>mean|max|min)"), "advantage_statistic"),
    Family(re.compile(r"critic/returns/(?P<f>mean|max|min)"), "return_statistic"),
    Family(re.compile(r"critic/values/(?P<f>mean|max|min)"), "value_mean"),
    Family(re.compile(r"prompt_length/(?P<f>.+)"), "prompt_length_statistic"),
    Family(re.compile(r"num_turns/(?P<f>.+)"), "turns_statistic"),
    Family(re.compile(r"tool_call_counts/(?P<f>.+)"), "tool_statistic"),
    Family(re.compile(r"reward_extra_info/(?P<f>.+)"), "reward_detail"),
    Family(re.compile(r"val-core/(?P<f>.+)"), "validation_score"),
    Family(re.compile(r"val/test_score/(?P<f>.+)"), "validation_score"),
    Family(re.compile(r"val-aux/(?P<f>.+)"), "validation_statistic"),
    Family(re.compile(r"rollout_corr/(?P<f>.+)"), "rollout_mismatch_statistic"),
    Family(re.compile(r"mismatch/(?P<f>.+)"), "rollout_mismatch_statistic"),
    Family(re.compile(r"training/(?P<f>rollout_.+)"), "rollout_mismatch_statistic"),
    Family(re.compile(r"(timing_s|timing|timing_per_token_ms)/(?P<f>.+)"), "timing_statistic"),
    Family(re.compile(r"perf/(?P<f>.+)"), "performance_statistic"),
    Family(re.compile(r"global_seqlen/(?P<f>.+)"), "sequence_balance"),
)

# Only a value head's metrics tell PPO (gae) from the critic-free estimators by the tags alone; the
# config's algorithm.adv_estimator says which one it is.
PPO_ONLY = re.compile(r"critic/(vf_loss|vf_clipfrac|vf_explained_var|vpred_mean|values/.*|grad_norm)")

SETTINGS: tuple[tuple[str, str], ...] = (
    ("actor_rollout_ref.actor.optim.lr", "learning_rate"),
    ("actor_rollout_ref.actor.clip_ratio", "epsilon"),
    ("actor_rollout_ref.actor.clip_ratio_high", "epsilon_high"),
    ("actor_rollout_ref.actor.grad_clip", "max_grad_norm"),
    ("actor_rollout_ref.actor.ppo_epochs", "num_iterations"),
    ("actor_rollout_ref.actor.kl_loss_coef", "beta"),
    ("actor_rollout_ref.rollout.n", "num_generations"),
    ("actor_rollout_ref.rollout.temperature", "temperature"),
    ("actor_rollout_ref.rollout.response_length", "max_completion_length"),
    ("data.max_response_length", "max_completion_length"),
    ("algorithm.kl_ctrl.kl_coef", "kl_coef"),
    ("critic.cliprange_value", "cliprange_value"),
    ("trainer.total_training_steps", "max_steps"),
    ("total_training_steps", "max_steps"),
)

TABLE = NameTable(
    "verl",
    NAMES,
    FAMILIES,
    kinds=((PPO_ONLY, "PPO"),),
    settings=SETTINGS,
    estimators=("algorithm.adv_estimator",),
    products=(("max_steps", ("train_dataloader_size", "trainer.total_epochs")),),
    switches=(("beta", "actor_rollout_ref.actor.use_kl_loss"), ("kl_coef", "algorithm.use_kl_in_reward")),
)
