"""What every TRL metric means: group, display order, a one-line meaning and what to try.

Pure data plus three lookups (`describe`, `trainer_kind`, `group_tags`), shared by the health engine,
the dashboard and the reports. Meanings follow TRL's "Logging" documentation (PPOTrainer and
GRPOTrainer sections) in our own words. Tags are recognised with or without the ``train/``,
``eval/`` or ``test/`` prefix that transformers' ``rewrite_logs`` adds; reward-function families
(``rewards/<name>/mean``) match any function name. Unknown tags are kept, in the group "Other".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

GROUPS = ("Key values", "Stability", "Policy", "Value", "Completions", "Rewards", "Other")
SPLITS = ("train", "eval", "test")
# Unknown tags sort after every known metric of their group.
UNKNOWN_ORDER = 10_000


@dataclass(frozen=True)
class MetricInfo:
    """Catalogue entry of one tag: ``key`` is the tag without its train/eval/test prefix."""

    key: str
    group: str
    order: int
    title: str
    meaning: str
    advice: str
    split: str  # "train", "eval", "test" or "" when the tag had no prefix


# (key, group, title, meaning, advice); position in this tuple = display order.
_LR_ADVICE = "A jump or a rise after warm-up usually means a scheduler or resume mistake."
_PPO_STEP_ADVICE = "Lower the learning rate, use fewer PPO epochs (num_ppo_epochs) or a tighter cliprange."
_ENTROPY_ADVICE = (
    "Collapsing towards 0 means premature certainty: lower the learning rate, raise the KL penalty, "
    "or add an entropy bonus / higher sampling temperature."
)
_TRUNCATION_ADVICE = (
    "Raise max_completion_length, or reward ending properly (EOS) so the model learns to stop."
)
_ENTRIES: tuple[tuple[str, str, str, str, str], ...] = (
    # Key values: what the TRL docs tell you to watch first.
    ("objective/rlhf_reward", "Key values", "RLHF reward",
     "Score minus the KL penalty: the objective PPO maximises; it should keep rising.",
     "Falling while objective/scores rises means reward is bought with KL: raise kl_coef or lower the "
     "learning rate."),
    ("objective/scores", "Key values", "Score",
     "Mean score of the reward model or environment for the sampled responses.",
     "Flat: check the reward model and that responses end with EOS (missing_eos_penalty lowers scores)."),
    ("objective/non_score_reward", "Key values", "KL penalty",
     "Reward that does not come from the score: minus kl_coef times the per-sequence KL.",
     "Large negative values mean the KL term dominates: check objective/kl, or lower kl_coef."),
    ("reward", "Key values", "Reward",
     "Mean weighted reward over all reward functions: the main GRPO objective; it should rise.",
     "Flat: make the reward functions give different scores within a group (see frac_reward_zero_std); "
     "falling: lower the learning rate."),
    ("kl", "Key values", "KL to reference",
     "Mean per-token KL between the policy and the reference model; logged only when beta > 0.",
     "Growing fast: raise beta or lower the learning rate."),
    # Stability.
    ("val/ratio", "Stability", "Policy ratio",
     "Mean probability ratio of the new to the old policy; it should float around 1.0.",
     "Far from 1 (2.0, 0.5, ...) means too drastic updates: " + _PPO_STEP_ADVICE),
    ("val/ratio_var", "Stability", "Policy ratio variance",
     "Variance of the policy ratio across mini-batches.",
     "Large values mean some mini-batches moved a lot: " + _PPO_STEP_ADVICE),
    ("policy/approxkl_avg", "Stability", "Approx. KL (old to new)",
     "Approximate KL between consecutive policies within one PPO update (not the KL to the reference).",
     "High: " + _PPO_STEP_ADVICE),
    ("policy/clipfrac_avg", "Stability", "Policy clip fraction",
     "Fraction of policy updates cut by the PPO clip (cliprange); rises with the ratio.",
     "High: " + _PPO_STEP_ADVICE),
    ("objective/kl", "Stability", "KL to reference",
     "Mean KL per sequence between the policy and the reference model; should stay positive and moderate "
     "(the k1 estimator can dip slightly below 0).",
     "Growing fast: raise kl_coef or lower the learning rate; staying negative: check that sampling "
     "settings (temperature, top-k/p) match the reference."),
    ("clip_ratio/region_mean", "Stability", "Clipped ratio (either side)",
     "Share of tokens whose probability ratio was clipped at 1-epsilon or 1+epsilon_high.",
     "High: lower the learning rate, use fewer num_iterations, or widen epsilon / epsilon_high."),
    ("clip_ratio/low_mean", "Stability", "Clipped ratio (low side)",
     "Share of tokens clipped at 1-epsilon (negative advantage).",
     "High: lower the learning rate or use fewer num_iterations."),
    ("clip_ratio/low_min", "Stability", "Clipped ratio (low side, min)",
     "Smallest per-completion share clipped at 1-epsilon.",
     "See clip_ratio/low_mean."),
    ("clip_ratio/high_mean", "Stability", "Clipped ratio (high side)",
     "Share of tokens clipped at 1+epsilon_high (positive advantage).",
     "High: lower the learning rate, use fewer num_iterations, or raise epsilon_high."),
    ("clip_ratio/high_max", "Stability", "Clipped ratio (high side, max)",
     "Largest per-completion share clipped at 1+epsilon_high.",
     "See clip_ratio/high_mean."),
    ("clip_ratio", "Stability", "Clipped ratio",
     "Share of tokens clipped (Liger loss variant).",
     "High: lower the learning rate or use fewer num_iterations."),
    ("grad_norm", "Stability", "Gradient norm",
     "Norm of the gradient before clipping.",
     "Spikes: lower the learning rate or set max_grad_norm; exactly 0: the update does nothing."),
    # Policy.
    ("policy/entropy_avg", "Policy", "Entropy (per token)",
     "Mean per-token entropy of the policy during training: the entropy to watch for collapse.",
     _ENTROPY_ADVICE),
    ("entropy", "Policy", "Entropy (per token)",
     "Mean per-token entropy of the completions; stable and non-zero is healthy.",
     _ENTROPY_ADVICE),
    ("objective/entropy", "Policy", "Entropy (per sequence)",
     "Policy entropy summed over the response tokens, so it also moves with response length.",
     "Watch policy/entropy_avg for collapse; this one also tracks response length."),
    ("loss/policy_avg", "Policy", "Policy loss",
     "Mean PPO policy (surrogate) loss.",
     "Erratic values go with high clip fractions: " + _PPO_STEP_ADVICE),
    ("loss", "Policy", "Loss",
     "Training loss; for GRPO a value near 0 is normal (zero-mean advantages).",
     "NaN or exactly 0 together with grad_norm 0 means no learning: check rewards and the learning rate."),
    ("entropy_coef", "Policy", "Entropy coefficient",
     "Weight of the entropy bonus in the loss.",
     "Raise it if entropy collapses; lower it if completions turn to noise."),
    ("lr", "Policy", "Learning rate", "Learning rate of the optimizer (PPO logs lr).", _LR_ADVICE),
    ("learning_rate", "Policy", "Learning rate", "Learning rate of the optimizer.", _LR_ADVICE),
    # Value.
    ("loss/value_avg", "Value", "Value loss",
     "Mean value-function loss (prediction vs. actual return); spikes or goes NaN when training goes wrong.",
     "Spikes: lower the learning rate, tighten cliprange_value, or normalise / whiten the rewards."),
    ("val/clipfrac_avg", "Value", "Value clip fraction",
     "Fraction of value updates cut by cliprange_value.",
     "Staying above 0.5: the value head cannot keep up; lower the learning rate or widen cliprange_value."),
    # Completions.
    ("completions/clipped_ratio", "Completions", "Truncated completions",
     "Share of completions cut at max_completion_length before an EOS token.",
     _TRUNCATION_ADVICE),
    ("completions/mean_length", "Completions", "Mean length",
     "Mean completion length in tokens, truncated ones included.",
     "Growing with reward: watch for length hacking; pinned at the cap: see completions/clipped_ratio."),
    ("completions/min_length", "Completions", "Min length", "Shortest completion (tokens).",
     "Equal to the cap means every completion was truncated: " + _TRUNCATION_ADVICE),
    ("completions/max_length", "Completions", "Max length", "Longest completion (tokens).",
     "Always equal to the cap: some completions never stop; see completions/clipped_ratio."),
    ("completions/mean_terminated_length", "Completions", "Mean length (ended)",
     "Mean length of the completions that ended with EOS (0 when none did).",
     "0 means no completion terminated: " + _TRUNCATION_ADVICE),
    ("completions/min_terminated_length", "Completions", "Min length (ended)",
     "Shortest completion that ended with EOS.", "See completions/mean_terminated_length."),
    ("completions/max_terminated_length", "Completions", "Max length (ended)",
     "Longest completion that ended with EOS.", "See completions/mean_terminated_length."),
    ("completion_length", "Completions", "Mean length",
     "Mean completion length (older TRL name).", "See completions/clipped_ratio for truncation."),
    ("val/num_eos_tokens", "Completions", "EOS tokens",
     "Number of EOS tokens generated: about the number of responses that ended properly.",
     "Low: responses are cut at response_length; raise it or reward ending with EOS."),
    ("num_tokens", "Completions", "Tokens seen", "Number of input tokens processed so far.",
     "Should grow every generation step."),
    # Rewards.
    ("reward_std", "Rewards", "Reward std",
     "Standard deviation of the reward across the whole batch (before group normalisation).",
     "Near 0: every completion gets the same reward, so there is nothing to learn from."),
    ("frac_reward_zero_std", "Rewards", "Groups without signal",
     "Share of prompt groups whose completions all got the same reward (zero advantage, zero gradient).",
     "High: make rewards more graded, raise num_generations or sampling temperature, or filter "
     "too easy / too hard prompts."),
    # Other.
    ("eps", "Other", "Episodes per second", "Training throughput in episodes per second.",
     "A drop without a config change points at the machine (I/O, other jobs)."),
    ("episode", "Other", "Episode", "Number of episodes (prompts) seen so far.", ""),
    ("epoch", "Other", "Epoch", "Fractional epoch over the training prompts.", ""),
    ("step_time", "Other", "Step time", "Seconds per optimizer step.",
     "Rising: generation gets longer or the machine is shared."),
    ("train_loss", "Other", "Final train loss", "Mean training loss, logged once at the end.", ""),
    ("train_runtime", "Other", "Train runtime", "Total training time (s), logged once at the end.", ""),
    ("train_samples_per_second", "Other", "Samples per second", "Training throughput, logged at the end.",
     ""),
    ("train_steps_per_second", "Other", "Steps per second", "Training throughput, logged at the end.", ""),
    ("total_flos", "Other", "Total FLOs", "Floating-point operations, logged at the end.", ""),
    ("runtime", "Other", "Evaluation runtime", "Seconds spent in one evaluation.", ""),
    ("samples_per_second", "Other", "Samples per second", "Evaluation throughput.", ""),
    ("steps_per_second", "Other", "Steps per second", "Evaluation throughput.", ""),
    # Legacy TRL (<= 0.11) PPO names, kept so old logs get the same rules.
    ("env/reward_mean", "Key values", "Reward", "Mean environment reward (older TRL PPO).",
     "Should rise; see objective/kl if it falls."),
    ("ppo/mean_scores", "Key values", "Score", "Mean score (older TRL PPO).", "Should rise."),
    ("ppo/policy/ratio", "Stability", "Policy ratio", "Ratio new/old policy (older TRL PPO).",
     _PPO_STEP_ADVICE),
    ("ppo/policy/approxkl", "Stability", "Approx. KL (old to new)",
     "Approximate KL between consecutive policies (older TRL PPO).", "High: " + _PPO_STEP_ADVICE),
    ("ppo/policy/policykl", "Stability", "Policy KL", "KL between consecutive policies (older TRL PPO).",
     "High: " + _PPO_STEP_ADVICE),
    ("ppo/policy/clipfrac", "Stability", "Policy clip fraction", "Clipped share (older TRL PPO).",
     "High: " + _PPO_STEP_ADVICE),
    ("ppo/policy/entropy", "Policy", "Entropy (per token)", "Policy entropy (older TRL PPO).",
     _ENTROPY_ADVICE),
    ("ppo/loss/value", "Value", "Value loss", "Value-function loss (older TRL PPO).",
     "Spikes: lower the learning rate or normalise rewards."),
    ("ppo/val/var_explained", "Value", "Explained variance",
     "How much of the return variance the value head explains; below 0 is worse than predicting 0.",
     "Negative for long: lower the learning rate or train the value head longer."),
)

# Families matched by pattern: (regex on the key, group, title, meaning, advice templates). All
# ``rewards/...`` families share one display order, so sorting by key keeps each function's mean and
# std together.
_FAMILIES: tuple[tuple[re.Pattern[str], str, str, str, str], ...] = (
    (re.compile(r"rewards/(?P<f>.+)/mean"), "Rewards", "{f} mean",
     "Mean reward of the reward function {f}: which behaviour is being learned.",
     "Not moving: check that {f} can actually tell completions apart."),
    (re.compile(r"rewards/(?P<f>.+)/std"), "Rewards", "{f} std",
     "Standard deviation of the reward function {f} over the batch.",
     "Near 0: {f} gives every completion the same score, so it teaches nothing."),
    (re.compile(r"rewards/(?P<f>[^/]+)"), "Rewards", "{f}",
     "Mean reward of the reward function {f} (older TRL name).",
     "Not moving: check that {f} can actually tell completions apart."),
    (re.compile(r"sampling/(?P<f>.+)"), "Other", "sampling {f}",
     "Importance-sampling statistic between the generation engine and the trained policy ({f}).",
     "Large mismatches: check that the vLLM and training precision and weights are in sync."),
    (re.compile(r"tools/(?P<f>.+)"), "Other", "tools {f}", "Tool-calling statistic ({f}).", ""),
)
_FAMILY_ORDERS = (len(_ENTRIES), len(_ENTRIES), len(_ENTRIES), len(_ENTRIES) + 1, len(_ENTRIES) + 2)

_BY_KEY = {key: (order, group, title, meaning, advice)
           for order, (key, group, title, meaning, advice) in enumerate(_ENTRIES)}

# Tags only one trainer logs (prefix-free keys); used to tell PPO from GRPO.
_PPO_ONLY = re.compile(r"(objective|policy|val|ppo|env)/.*|loss/(policy|value)_avg|eps|episode")
_GRPO_ONLY = re.compile(
    r"reward|reward_std|frac_reward_zero_std|completions/.*|clip_ratio(/.*)?|rewards/.*|completion_length"
)


def split_tag(tag: str) -> tuple[str, str]:
    """``(split, key)`` of a tag: ``"train/val/ratio"`` -> ``("train", "val/ratio")``."""
    head, sep, rest = tag.partition("/")
    if sep and rest and head in SPLITS:
        return head, rest
    return "", tag


@lru_cache(maxsize=8192)
def describe(tag: str) -> MetricInfo:
    """Catalogue entry of ``tag`` (prefixed or not); unknown tags get group "Other"."""
    split, key = split_tag(tag)
    known = _BY_KEY.get(key)
    if known is not None:
        order, group, title, meaning, advice = known
        return MetricInfo(key, group, order, title, meaning, advice, split)
    for index, (pattern, group, title, meaning, advice) in enumerate(_FAMILIES):
        match = pattern.fullmatch(key)
        if match:
            name = match.group("f")
            return MetricInfo(
                key, group, _FAMILY_ORDERS[index], title.format(f=name),
                meaning.format(f=name), advice.format(f=name), split,
            )
    return MetricInfo(key, "Other", UNKNOWN_ORDER, key, "", "", split)


def trainer_kind(tags: Iterable[str]) -> str:
    """"PPO", "GRPO" or "unknown", from the tags only one of the two trainers logs."""
    ppo = grpo = 0
    for tag in tags:
        key = split_tag(tag)[1]
        if _PPO_ONLY.fullmatch(key):
            ppo += 1
        elif _GRPO_ONLY.fullmatch(key):
            grpo += 1
    if ppo == grpo:
        return "unknown"
    return "PPO" if ppo > grpo else "GRPO"


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
