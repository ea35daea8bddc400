"""Train-inference mismatch: the generation engine and the trainer disagree on the same tokens.

With vLLM (or SGLang) generating, the sampler's log-probs drift from the trainer's (precision,
kernels, weights not synced, a prompt/completion pairing bug). Collapses that start here are sudden
and costly: the log-prob gap climbs, the gradient norm spikes, then the reward falls
(open-instruct#1473: the gap kept rising even at learning rate 0; trl#4772: the importance-sampling
ratio "explodes").

One rule judges every spelling of the mismatch concepts, each against the alert level veRL publishes
for it (``docs/algo/rollout_corr.md``, `check_rollout_correction_health`): |kl| > 0.1, importance
weight mean outside [0.5, 2], weight std > 1, effective sample size < 0.3, χ² (token) > 1. Each point
is read as a *severity*: how many times past its alert level it is (1 = at veRL's alert); warn,
critical and extreme are severities. TRL's ``sampling/sampling_logp_difference/mean`` (mean |Δ| per
token, ~0.001 at top_p=1 per trl#6789) is judged like veRL's |kl|, of which it is an upper bound.
TRL's applied IS ratio (after truncation/masking, where masked completions count 0) and the per-token
maximum (0.4-0.7 is bf16 noise, trl#6789) are not judged.

What follows a mismatch is folded into its finding (`fold_mismatch`): a gradient-norm spike and a
reward collapse that begin during or after it become one finding led by the mismatch.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from rltop.health.findings import Finding, Level, Stage
from rltop.health.numerics.robust import finite_or
from rltop.health.persistence import Flags, Point
from rltop.health.rules.base import Band, Context, Rule, SlotState, threshold_flags, verdict
from rltop.health.settings import RuleDoc, RuleParams
from rltop.health.wording import num

# concept -> (what is judged, the setting holding its alert level, how it is read)
JUDGED: dict[str, tuple[str, str]] = {
    "rollout_logp_gap": ("|{tag}|", "above"),
    "rollout_is_weight_mean": ("{tag}", "outside"),
    "rollout_is_weight_std": ("{tag}", "above"),
    "rollout_is_ess": ("{tag}", "below"),
    "rollout_chi2": ("{tag}", "above"),
}
ALERT_KEY = {
    "rollout_logp_gap": "kl_alert",
    "rollout_is_weight_std": "is_std_alert",
    "rollout_is_ess": "ess_alert",
    "rollout_chi2": "chi2_alert",
}
_ADVICE = (
    "The generation engine and the trainer disagree on the tokens' log-probs: check that the weights are "
    "synced to the engine every step, that both compute in the same precision (bf16 vs fp32 lm_head; "
    "vLLM's logprobs mode), that the sampling settings match (temperature, top_p/top_k: trl#6789), and "
    "that each completion is paired with its own prompt (open-instruct#1473); keep importance-sampling "
    "correction on (TRL vllm_importance_sampling_correction, veRL rollout_is) and resume from a "
    "checkpoint before the gap grew."
)


def severity(concept: str, values: np.ndarray, params: RuleParams) -> np.ndarray:
    """How many times past veRL's alert level each value is (1 = at the alert; below 1 is normal)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if concept == "rollout_is_weight_mean":
            return np.maximum(values / params["is_mean_high"], params["is_mean_low"] / values)
        alert = params[ALERT_KEY[concept]]
        if concept == "rollout_is_ess":
            return alert / values
        return np.abs(values) / alert


class TrainInferenceMismatch(Rule):
    """The mismatch concepts against veRL's published alert levels, as severities."""

    name, title, blow_up = "train_inference_mismatch", "train-inference mismatch", True
    stage = Stage.BREAKDOWN
    concepts = frozenset(JUDGED)
    defaults = {
        "warn": 1.0, "critical": 5.0, "extreme": 50.0, "critical_persistence": (2, 3),
        "kl_alert": 0.1, "is_mean_low": 0.5, "is_mean_high": 2.0, "is_std_alert": 1.0,
        "ess_alert": 0.3, "chi2_alert": 1.0,
    }  # fmt: skip
    doc = RuleDoc(
        "Train-inference mismatch",
        "TRL `sampling/sampling_logp_difference/mean`, veRL `rollout_corr/{kl, rollout_is_mean, "
        "rollout_is_std, rollout_is_eff_sample_size, chi2_token}` (v0.6.0 `mismatch/…`), OpenRLHF `vllm_kl`",
        "above",
        "{warn}× veRL's alert level",
        "{critical}× it; one point at {extreme}×",
        "warn {persistence}, critical {critical_persistence}",
        "veRL's alerts (docs/algo/rollout_corr.md): |kl| > {kl_alert}, IS weight mean outside "
        "[{is_mean_low}, {is_mean_high}], weight std > {is_std_alert}, ESS < {ess_alert}, χ² > {chi2_alert}; "
        "TRL's mean |Δlogp| is ~0.001 at top_p=1 (trl#6789), its IS ratio after masking and the per-token "
        "max (0.4-0.7 in bf16) are not judged (trl#4772); a grad-norm spike and a reward collapse after it "
        "fold into its finding",
    )

    def flags(
        self, values: np.ndarray, start: int, state: SlotState, params: RuleParams, context: Context
    ) -> Flags:
        stat = severity(state.concept, values[start:], params)
        stat = np.where(np.isnan(stat), 0.0, stat)
        on_w, ok_w, on_c, ok_c = threshold_flags(stat, params.warn, params.critical, params.clear_fraction,
                                                 "above")  # fmt: skip
        extreme = None
        if params.extreme is not None:
            extreme = stat >= params.extreme
        return Flags(on_w, ok_w, on_c, ok_c, finite_or(stat), stat, np.full(len(stat), np.nan), extreme)

    def explain(
        self, tag: str, point: Point, level: Level, params: RuleParams, state: SlotState, context: Context
    ) -> str:
        concept = state.concept
        if concept == "rollout_is_weight_mean":
            alert = f"outside [{num(params['is_mean_low'])}, {num(params['is_mean_high'])}]"
        elif concept == "rollout_is_ess":
            alert = f"below {num(params['ess_alert'])}"
        else:
            what = "|value|" if concept == "rollout_logp_gap" else "value"
            alert = f"{what} above {num(params[ALERT_KEY[concept]])}"
        return (
            f"{tag} was {num(point.value)} at step {point.step}, {num(point.stat)}× veRL's alert level "
            f"({alert}): the generation engine and the trainer disagree; "
            f"{verdict(level, params, lambda value: f'{num(value)}× the alert', 'at ≥')}"
        )

    def advice(self, params: RuleParams, context: Context) -> str:
        return _ADVICE

    def band(self, params: RuleParams, state: SlotState, context: Context) -> Band:
        if state.concept == "rollout_is_weight_mean":
            low, high = params["is_mean_low"], params["is_mean_high"]
            return (
                low / (params.warn or 1), high * (params.warn or 1),
                low / params.critical if params.critical else None,
                high * params.critical if params.critical else None,
            )  # fmt: skip
        if state.concept == "rollout_is_ess":
            alert = params["ess_alert"]
            critical = alert / params.critical if params.critical else None
            return alert / (params.warn or 1), None, critical, None
        if state.concept not in ALERT_KEY:
            return None, None, None, None
        alert = params[ALERT_KEY[state.concept]]
        warn = alert * params.warn if params.warn is not None else None
        critical = alert * params.critical if params.critical is not None else None
        return None, warn, None, critical


FOLDED = ("grad_norm_spike", "reward_collapse")  # what a mismatch leads to, in the order it happens
FOLD_REACH = 50  # a consequence beginning this many steps after the mismatch ended still belongs to it


def fold_mismatch(findings: list[Finding]) -> list[Finding]:
    """The run's findings with the collapse a mismatch starts folded into the mismatch's finding.

    The gap rising, then the gradient norm spiking, then the reward falling is one event: the
    mismatch finding leads, says what followed ("; then train/grad_norm spiked (step 41) and
    train/reward collapsed (from step 44)"), takes the worst level of them and lists their tags in
    `Finding.also`; the folded findings leave the list.
    """
    leads = [f for f in findings if f.rule == TrainInferenceMismatch.name and f.level > Level.OK]
    if not leads:
        return findings
    lead = min(leads, key=lambda f: (f.first_step if f.first_step is not None else 0, -int(f.level)))
    start = lead.first_step if lead.first_step is not None else 0
    end = (lead.last_step if lead.last_step is not None else start) + FOLD_REACH
    followers = [
        f for f in findings
        if f.rule in FOLDED and f.level > Level.OK
        and f.first_step is not None and start <= f.first_step <= end
    ]  # fmt: skip
    if not followers:
        return findings
    followers.sort(key=lambda f: (f.first_step, FOLDED.index(f.rule)))
    then = " and ".join(f"{f.tag} {_what(f)}" for f in followers)
    message = lead.message.rstrip(".") + f"; then {then}: one collapse that started with the mismatch."
    folded = replace(
        lead,
        level=max(lead.level, *(f.level for f in followers)),
        message=message,
        active=lead.active or any(f.active for f in followers),
        last_step=max([lead.last_step or 0, *(f.last_step or 0 for f in followers)]),
        also=(*lead.also, *(f.tag for f in followers if f.tag != lead.tag)),
    )
    return [folded if f is lead else f for f in findings if f not in followers]


def _what(finding: Finding) -> str:
    if finding.rule == "grad_norm_spike":
        peak = f" to {num(finding.value)}" if finding.value is not None else ""
        return f"spiked{peak} (step {finding.step})"
    return f"collapsed (from step {finding.first_step})"
