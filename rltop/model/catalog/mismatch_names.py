"""veRL's and OpenRLHF's names for the train-inference mismatch (kept apart until they join those tables).

Each spelling names what the framework's code logs, with its source:

* veRL ``verl/trainer/ppo/rollout_corr_helper.py`` (v0.6.1+; `compute_offpolicy_metrics` and
  `compute_is_metrics`, prefix ``rollout_corr/``): ``kl`` is ``masked_mean(log π_rollout - log π_train)``
  (signed k1), ``k3_kl``, ``chi2_token`` = E[ρ²] - 1, ``chi2_seq``, ``ppl_ratio``, ``log_ppl_abs_diff``;
  with ``rollout_is`` on, ``rollout_is_mean`` / ``_std`` / ``_eff_sample_size`` / ``_min`` / ``_max``.
  veRL v0.6.0 (``mismatch_helper.py``) logged the same under ``mismatch/`` (``mismatch/mismatch_kl``,
  ``mismatch/rollout_is_mean`` …).
* veRL ``verl/utils/debug/metrics.py`` `calculate_debug_metrics` (with
  ``rollout.calculate_log_probs=True``): ``training/rollout_probs_diff_{max,mean,std}``, the token
  probability difference |p_train - p_rollout| (probability space, in [0, 1]).
* OpenRLHF ``openrlhf/models/loss.py`` `PolicyLoss` (v0.8.9+, with vLLM IS correction):
  ``vllm_kl`` = ``masked_mean(log π_rollout - log π_old)``, logged as ``train/vllm_kl``.

veRL's published alert levels (``docs/algo/rollout_corr.md``, `check_rollout_correction_health`) are
the mismatch rule's (`rltop.health.rules.mismatch`).
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


VERL_NAMES: tuple[Name, ...] = (
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
VERL_FAMILIES: tuple[Family, ...] = (
    Family(re.compile(r"rollout_corr/(?P<f>.+)"), "rollout_mismatch_statistic"),
    Family(re.compile(r"mismatch/(?P<f>.+)"), "rollout_mismatch_statistic"),
    Family(re.compile(r"training/(?P<f>rollout_.+)"), "rollout_mismatch_statistic"),
)
OPENRLHF_NAMES: tuple[Name, ...] = (
    Name(
        "vllm_kl",
        "rollout_logp_gap",
        title="vLLM KL",
        meaning="Mean log-prob difference vLLM − old policy per token (signed k1, OpenRLHF with vLLM IS "
        "correction); near 0 when they agree.",
    ),
)

VERL = NameTable("verl-mismatch", VERL_NAMES, VERL_FAMILIES)
OPENRLHF = NameTable("openrlhf-mismatch", OPENRLHF_NAMES)
TABLES: tuple[NameTable, ...] = (VERL, OPENRLHF)
