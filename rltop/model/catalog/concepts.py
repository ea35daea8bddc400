"""What a metric measures, whatever a framework calls it: one `Concept` per quantity.

Rules, detectors, groups, the glossary and the advice bind to concepts; the spellings (TRL's,
veRL's, OpenRLHF's, MLflow's prefix-less keys) live in the name tables beside this module. The order
of `CONCEPTS` is the display order within a group (the order of the TRL documentation's tables,
key values first).
"""

from __future__ import annotations

from dataclasses import dataclass

GROUPS = ("Key values", "Stability", "Policy", "Value", "Completions", "Rewards", "Other")

_LR_ADVICE = "A jump or a rise after warm-up usually means a scheduler or resume mistake."
PPO_STEP_ADVICE = "Lower the learning rate, use fewer PPO epochs (num_ppo_epochs) or a tighter cliprange."
ENTROPY_ADVICE = (
    "Collapsing towards 0 means premature certainty: lower the learning rate, raise the KL penalty, "
    "or add an entropy bonus / higher sampling temperature."
)
MISMATCH_ADVICE = (
    "Rising: the generation engine and the trainer disagree; check that weights are synced each step, "
    "that both use the same precision (fp32 lm_head), and that prompts and completions are paired right; "
    "use importance-sampling correction (TRL vllm_importance_sampling_correction, veRL rollout_is)."
)
TRUNCATION_ADVICE = (
    "Raise max_completion_length, or reward ending properly (EOS) so the model learns to stop."
)


@dataclass(frozen=True)
class Concept:
    """One quantity a training run logs, and what to make of it (a spelling may word it its own way)."""

    name: str  # "policy_entropy": what rules and detectors bind to
    group: str  # one of GROUPS
    title: str
    meaning: str
    advice: str


_CONCEPTS: tuple[Concept, ...] = (
    # Key values: what the TRL docs tell you to watch first.
    Concept(
        "shaped_reward",
        "Key values",
        "RLHF reward",
        "Score minus the KL penalty: the objective PPO maximises; it should keep rising.",
        "Falling while objective/scores rises means reward is bought with KL: raise kl_coef or lower the "
        "learning rate.",
    ),
    Concept(
        "task_score",
        "Key values",
        "Score",
        "Mean score of the reward model or environment for the sampled responses.",
        "Flat: check the reward model and that responses end with EOS (missing_eos_penalty lowers scores).",
    ),
    Concept(
        "kl_penalty",
        "Key values",
        "KL penalty",
        "Reward that does not come from the score: minus kl_coef times the per-sequence KL.",
        "Large negative values mean the KL term dominates: check objective/kl, or lower kl_coef.",
    ),
    Concept(
        "reward",
        "Key values",
        "Reward",
        "Mean weighted reward over all reward functions: the main GRPO objective; it should rise.",
        "Flat: make the reward functions give different scores within a group (see frac_reward_zero_std); "
        "falling: lower the learning rate.",
    ),
    Concept(
        "kl_reference_token",
        "Key values",
        "KL to reference",
        "Mean per-token KL between the policy and the reference model; logged only when beta > 0.",
        "Growing fast: raise beta or lower the learning rate.",
    ),
    # Stability.
    Concept(
        "policy_ratio",
        "Stability",
        "Policy ratio",
        "Mean probability ratio of the new to the old policy; it should float around 1.0.",
        "Far from 1 (2.0, 0.5, ...) means too drastic updates: " + PPO_STEP_ADVICE,
    ),
    Concept(
        "policy_ratio_variance",
        "Stability",
        "Policy ratio variance",
        "Variance of the policy ratio across mini-batches.",
        "Large values mean some mini-batches moved a lot: " + PPO_STEP_ADVICE,
    ),
    Concept(
        "approx_kl",
        "Stability",
        "Approx. KL (old to new)",
        "Approximate KL between consecutive policies within one PPO update (not the KL to the reference).",
        "High: " + PPO_STEP_ADVICE,
    ),
    Concept(
        "policy_clip_fraction",
        "Stability",
        "Policy clip fraction",
        "Fraction of policy updates cut by the PPO clip (cliprange); rises with the ratio.",
        "High: " + PPO_STEP_ADVICE,
    ),
    Concept(
        "kl_reference_sequence",
        "Stability",
        "KL to reference",
        "Mean KL per sequence between the policy and the reference model; should stay positive and "
        "moderate (the k1 estimator can dip slightly below 0).",
        "Growing fast: raise kl_coef or lower the learning rate; staying negative: check that sampling "
        "settings (temperature, top-k/p) match the reference.",
    ),
    Concept(
        "clip_ratio_region",
        "Stability",
        "Clipped ratio (either side)",
        "Share of tokens whose probability ratio was clipped at 1-epsilon or 1+epsilon_high.",
        "High: lower the learning rate, use fewer num_iterations, or widen epsilon / epsilon_high.",
    ),
    Concept(
        "clip_ratio_low",
        "Stability",
        "Clipped ratio (low side)",
        "Share of tokens clipped at 1-epsilon (negative advantage).",
        "High: lower the learning rate or use fewer num_iterations.",
    ),
    Concept(
        "clip_ratio_low_min",
        "Stability",
        "Clipped ratio (low side, min)",
        "Smallest per-completion share clipped at 1-epsilon.",
        "See clip_ratio/low_mean.",
    ),
    Concept(
        "clip_ratio_high",
        "Stability",
        "Clipped ratio (high side)",
        "Share of tokens clipped at 1+epsilon_high (positive advantage).",
        "High: lower the learning rate, use fewer num_iterations, or raise epsilon_high.",
    ),
    Concept(
        "clip_ratio_high_max",
        "Stability",
        "Clipped ratio (high side, max)",
        "Largest per-completion share clipped at 1+epsilon_high.",
        "See clip_ratio/high_mean.",
    ),
    Concept(
        "grad_norm",
        "Stability",
        "Gradient norm",
        "Norm of the gradient before clipping.",
        "Spikes: lower the learning rate or set max_grad_norm; exactly 0: the update does nothing.",
    ),
    # Policy.
    Concept(
        "policy_entropy",
        "Policy",
        "Entropy (per token)",
        "Mean per-token entropy of the policy during training: the entropy to watch for collapse.",
        ENTROPY_ADVICE,
    ),
    Concept(
        "sequence_entropy",
        "Policy",
        "Entropy (per sequence)",
        "Policy entropy summed over the response tokens, so it also moves with response length.",
        "Watch policy/entropy_avg for collapse; this one also tracks response length.",
    ),
    Concept(
        "policy_loss",
        "Policy",
        "Policy loss",
        "Mean PPO policy (surrogate) loss.",
        "Erratic values go with high clip fractions: " + PPO_STEP_ADVICE,
    ),
    Concept(
        "loss",
        "Policy",
        "Loss",
        "Training loss; for GRPO a value near 0 is normal (zero-mean advantages); negative is normal with "
        "loss_type cispo, sapo or vespo, and with an entropy bonus (loss = policy_loss - coef × entropy).",
        "NaN or exactly 0 together with grad_norm 0 means no learning: check rewards and the learning rate.",
    ),
    Concept(
        "entropy_coef",
        "Policy",
        "Entropy coefficient",
        "Weight of the entropy bonus in the loss.",
        "Raise it if entropy collapses; lower it if completions turn to noise.",
    ),
    Concept("learning_rate", "Policy", "Learning rate", "Learning rate of the optimizer.", _LR_ADVICE),
    # Value.
    Concept(
        "value_loss",
        "Value",
        "Value loss",
        "Mean value-function loss (prediction vs. actual return); spikes or goes NaN when training goes "
        "wrong.",
        "Spikes: lower the learning rate, tighten cliprange_value, or normalise / whiten the rewards.",
    ),
    Concept(
        "value_clip_fraction",
        "Value",
        "Value clip fraction",
        "Fraction of value updates cut by cliprange_value.",
        "Staying above 0.5: the value head cannot keep up; lower the learning rate or widen cliprange_value.",
    ),
    # Completions.
    Concept(
        "truncation_ratio",
        "Completions",
        "Truncated completions",
        "Share of completions cut at max_completion_length before an EOS token.",
        TRUNCATION_ADVICE,
    ),
    Concept(
        "response_length",
        "Completions",
        "Mean length",
        "Mean completion length in tokens, truncated ones included.",
        "Growing with reward: watch for length hacking; pinned at the cap: see completions/clipped_ratio.",
    ),
    Concept(
        "response_length_min",
        "Completions",
        "Min length",
        "Shortest completion (tokens).",
        "Equal to the cap means every completion was truncated: " + TRUNCATION_ADVICE,
    ),
    Concept(
        "response_length_max",
        "Completions",
        "Max length",
        "Longest completion (tokens).",
        "Always equal to the cap: some completions never stop; see completions/clipped_ratio.",
    ),
    Concept(
        "terminated_length",
        "Completions",
        "Mean length (ended)",
        "Mean length of the completions that ended with EOS (0 when none did).",
        "0 means no completion terminated: " + TRUNCATION_ADVICE,
    ),
    Concept(
        "terminated_length_min",
        "Completions",
        "Min length (ended)",
        "Shortest completion that ended with EOS.",
        "See completions/mean_terminated_length.",
    ),
    Concept(
        "terminated_length_max",
        "Completions",
        "Max length (ended)",
        "Longest completion that ended with EOS.",
        "See completions/mean_terminated_length.",
    ),
    Concept(
        "eos_count",
        "Completions",
        "EOS tokens",
        "Number of EOS tokens generated: about the number of responses that ended properly.",
        "Low: responses are cut at response_length; raise it or reward ending with EOS.",
    ),
    Concept(
        "tokens_seen",
        "Completions",
        "Tokens seen",
        "Number of input tokens processed so far.",
        "Should grow every generation step.",
    ),
    # Rewards.
    Concept(
        "reward_std",
        "Rewards",
        "Reward std",
        "Standard deviation of the reward across the whole batch (before group normalisation).",
        "Near 0: every completion gets the same reward, so there is nothing to learn from.",
    ),
    Concept(
        "zero_std_groups",
        "Rewards",
        "Groups without signal",
        "Share of prompt groups whose completions all got the same reward (zero advantage, zero gradient).",
        "High: make rewards more graded, raise num_generations or sampling temperature, or filter "
        "too easy / too hard prompts.",
    ),
    Concept(
        "reward_function_mean",
        "Rewards",
        "{f} mean",
        "Mean reward of the reward function {f}: which behaviour is being learned.",
        "Not moving: check that {f} can actually tell completions apart.",
    ),
    Concept(
        "reward_function_std",
        "Rewards",
        "{f} std",
        "Standard deviation of the reward function {f} over the batch.",
        "Near 0: {f} gives every completion the same score, so it teaches nothing.",
    ),
    # Other.
    Concept(
        "episodes_per_second",
        "Other",
        "Episodes per second",
        "Training throughput in episodes per second.",
        "A drop without a config change points at the machine (I/O, other jobs).",
    ),
    Concept("episodes", "Other", "Episode", "Number of episodes (prompts) seen so far.", ""),
    Concept("epoch", "Other", "Epoch", "Fractional epoch over the training prompts.", ""),
    Concept(
        "step_time",
        "Other",
        "Step time",
        "Seconds per optimizer step.",
        "Rising: generation gets longer or the machine is shared.",
    ),
    Concept(
        "final_train_loss", "Other", "Final train loss", "Mean training loss, logged once at the end.", ""
    ),
    Concept(
        "train_runtime", "Other", "Train runtime", "Total training time (s), logged once at the end.", ""
    ),
    Concept(
        "train_samples_per_second",
        "Other",
        "Samples per second",
        "Training throughput, logged at the end.",
        "",
    ),
    Concept(
        "train_steps_per_second", "Other", "Steps per second", "Training throughput, logged at the end.", ""
    ),
    Concept("total_flos", "Other", "Total FLOs", "Floating-point operations, logged at the end.", ""),
    Concept("eval_runtime", "Other", "Evaluation runtime", "Seconds spent in one evaluation.", ""),
    Concept("eval_samples_per_second", "Other", "Samples per second", "Evaluation throughput.", ""),
    Concept("eval_steps_per_second", "Other", "Steps per second", "Evaluation throughput.", ""),
    Concept(
        "policy_kl",
        "Stability",
        "Policy KL",
        "KL between consecutive policies (older TRL PPO).",
        "High: " + PPO_STEP_ADVICE,
    ),
    Concept(
        "explained_variance",
        "Value",
        "Explained variance",
        "How much of the return variance the value head explains; below 0 is worse than predicting 0.",
        "Negative for long: lower the learning rate or train the value head longer.",
    ),
    # Concepts other frameworks log (veRL, OpenRLHF); TRL has no spelling of them.
    Concept(
        "validation_score",
        "Key values",
        "Validation {f}",
        "Score on the validation set ({f}), computed every test_freq steps.",
        "Falling while the training score rises: the policy overfits its prompts or hacks the reward.",
    ),
    Concept(
        "dual_clip_fraction",
        "Stability",
        "Dual-clip fraction",
        "Share of tokens with a negative advantage whose ratio hit the dual-clip bound (clip_ratio_c).",
        "Rising: updates move far from the sampling policy; lower the learning rate or the epochs.",
    ),
    Concept(
        "kl_coefficient",
        "Policy",
        "KL coefficient",
        "Weight of the KL to the reference (fixed, or set by an adaptive controller).",
        "",
    ),
    Concept(
        "value_mean",
        "Value",
        "Value {f}",
        "The value head's predictions ({f}).",
        "Drifting far from the returns: the value head is lost; see the value loss.",
    ),
    Concept(
        "critic_grad_norm",
        "Value",
        "Value gradient norm",
        "Gradient norm of the value head (critic) before clipping.",
        "Spikes: lower the critic's learning rate or clip its gradients.",
    ),
    Concept("critic_learning_rate", "Value", "Value learning rate", "Learning rate of the critic.", ""),
    Concept(
        "aborted_ratio",
        "Completions",
        "Aborted completions",
        "Share of completions of length 0 (aborted by over-sampling rollouts).",
        "",
    ),
    Concept(
        "prompt_length_statistic", "Completions", "Prompt length {f}", "Prompt length in tokens ({f}).", ""
    ),
    Concept("total_length", "Completions", "Total length", "Prompt plus completion tokens, per sample.", ""),
    Concept(
        "context_overflow_ratio",
        "Completions",
        "Context overflow",
        "Share of samples whose prompt plus completion reached the context window.",
        "High: raise the context length or shorten the prompts.",
    ),
    Concept("turns_statistic", "Completions", "Turns {f}", "Turns per multi-turn episode ({f}).", ""),
    Concept(
        "task_score_statistic", "Rewards", "Score {f}", "Task score per sequence, before shaping ({f}).", ""
    ),
    Concept(
        "shaped_reward_statistic",
        "Rewards",
        "Reward {f}",
        "Reward per sequence after the KL penalty and other shaping ({f}).",
        "",
    ),
    Concept(
        "reward_detail",
        "Rewards",
        "{f}",
        "A value the reward function returned beside its reward ({f}): a component or a check.",
        "",
    ),
    Concept("advantage_statistic", "Rewards", "Advantages {f}", "Advantages over response tokens ({f}).", ""),
    Concept("return_statistic", "Rewards", "Returns {f}", "Returns over response tokens ({f}).", ""),
    Concept(
        "filter_pass_rate",
        "Rewards",
        "Groups kept by filtering",
        "Share of prompt groups kept by dynamic filtering (groups whose rewards all agree are dropped).",
        "Falling: most groups are all solved or all failed; the batch carries little signal.",
    ),
    Concept("global_step", "Other", "Global step", "The trainer's step counter, logged as a metric.", ""),
    Concept("timing_statistic", "Other", "Time {f}", "Seconds (or ms per token) spent in {f}.", ""),
    Concept("performance_statistic", "Other", "{f}", "Throughput, utilisation or memory ({f}).", ""),
    Concept("sequence_balance", "Other", "Sequence balance {f}", "Tokens per data-parallel rank ({f}).", ""),
    Concept("validation_statistic", "Other", "Validation {f}", "A validation statistic ({f}).", ""),
    Concept("samples_count", "Other", "Samples", "Samples generated in the step.", ""),
    Concept(
        "cispo_clip_ratio",
        "Stability",
        "CISPO clip ratio",
        "Share of tokens whose importance weight CISPO caps at epsilon_high (loss_type=cispo, which logs no "
        "clip_ratio/*); the capped tokens still get a gradient.",
        "Most tokens capped for long: lower the learning rate or use fewer num_iterations.",
    ),
    Concept(
        "vespo_phi",
        "Stability",
        "VESPO weight",
        "Mean VESPO weight φ(w) of the sequences (loss_type=vespo): 1 on on-policy steps, lower as the "
        "policy moves from its samples.",
        "Falling far below 1: the policy moves far from its samples; lower the learning rate.",
    ),
    # Train-inference mismatch: the generation engine (vLLM, SGLang) and the trainer disagree on the
    # log-probs of the same tokens (precision, kernels, stale weights, a data bug).
    Concept(
        "rollout_logp_gap",
        "Stability",
        "Train-inference gap",
        "Mean per-token log-prob difference between the generation engine and the trainer on the same "
        "tokens; near 0 (about 0.001-0.01) when they agree.",
        MISMATCH_ADVICE,
    ),
    Concept(
        "rollout_logp_gap_max",
        "Stability",
        "Train-inference gap (max)",
        "Largest per-token log-prob difference between the generation engine and the trainer; 0.4-0.7 is "
        "ordinary bf16 noise (trl#6789).",
        MISMATCH_ADVICE,
    ),
    Concept(
        "rollout_is_weight_mean",
        "Stability",
        "Rollout IS weight",
        "Mean importance weight trainer/generation-engine probability of the sampled tokens; 1 when they "
        "agree (veRL alerts outside [0.5, 2]).",
        MISMATCH_ADVICE,
    ),
    Concept(
        "rollout_is_weight_std",
        "Stability",
        "Rollout IS weight std",
        "Spread of the importance weights (clamped); veRL alerts above 1.",
        MISMATCH_ADVICE,
    ),
    Concept(
        "rollout_is_ess",
        "Stability",
        "Rollout effective sample size",
        "Effective sample size of the importance weights, as a share of the batch; veRL alerts below 0.3.",
        MISMATCH_ADVICE,
    ),
    Concept(
        "rollout_chi2",
        "Stability",
        "Rollout χ²",
        "χ² divergence of the trainer from the generation engine per token (E[ρ²] - 1); veRL alerts above 1.",
        MISMATCH_ADVICE,
    ),
    Concept(
        "rollout_mismatch_statistic",
        "Stability",
        "Train-inference {f}",
        "A statistic of the difference between the generation engine and the trainer ({f}).",
        MISMATCH_ADVICE,
    ),
    Concept(
        "sampling_is_ratio",
        "Stability",
        "Applied IS ratio",
        "Importance-sampling ratio TRL applies to correct for vLLM (after truncation or masking: masked "
        "completions count 0, so a mean below 1 is not drift).",
        MISMATCH_ADVICE,
    ),
    Concept(
        "sampling_statistic",
        "Other",
        "sampling {f}",
        "Importance-sampling statistic between the generation engine and the trained policy ({f}).",
        "Large mismatches: check that the vLLM and training precision and weights are in sync.",
    ),
    Concept("tool_statistic", "Other", "tools {f}", "Tool-calling statistic ({f}).", ""),
)

CONCEPTS: dict[str, Concept] = {concept.name: concept for concept in _CONCEPTS}
ORDER: dict[str, int] = {concept.name: index for index, concept in enumerate(_CONCEPTS)}
"""Display order of each concept (its position in the list above)."""
# A reward function's mean and std share one place, so that sorting by tag keeps each function's
# two series together (rewards/a/mean, rewards/a/std, rewards/b/mean, ...).
ORDER["reward_function_std"] = ORDER["reward_function_mean"]
