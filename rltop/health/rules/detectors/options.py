"""What the run's own options change about what healthy looks like, said once as a note.

TRL 1.16 options change which tags exist and what their normal values are: a reader who sees no
``clip_ratio/*`` on a cispo run, a negative ``loss`` with an entropy bonus, or GSPO clip ratios near 1
should learn once, from the run's config (``args`` text summary, W&B or trackio config), that this is
by design and how rltop judges it, rather than have rltop guess or stay silent. Read from
`rltop.health.calibration.Calibration`; nothing here looks at the series.
"""

from __future__ import annotations

from rltop.health.calibration import Calibration
from rltop.health.evidence.signals import RunSignals
from rltop.health.findings import Finding, Level, Stage
from rltop.health.rules.base import Context
from rltop.health.rules.detectors import Detector
from rltop.health.settings import RuleDoc, RuleParams, Rules
from rltop.health.wording import num

_OWN_TAG = {"cispo": "cispo_clip_ratio", "vespo": "vespo/phi_seq_mean"}


def option_notes(c: Calibration) -> list[str]:
    """One sentence per option that changes what the rules expect (empty for a default run)."""
    notes = []
    if c.loss_type and not c.clip_ratios_logged:
        own = _OWN_TAG.get(c.loss_type)
        instead = f" ({own} is logged instead)" if own else ""
        notes.append(
            f"clip ratios are not logged with loss_type={c.loss_type}{instead}, so no clip-ratio rule "
            f"judges this run; a negative loss is normal with this loss"
        )
    if c.sequence_level:
        notes.append(
            "importance_sampling_level=sequence (GSPO): the clip ratios count whole completions, and most of "
            "them clipped is normal; they are judged with grpo_clip_ratio's sequence_* thresholds, and a "
            "gradient of 0 on a pass that reuses samples is not a dead update"
        )
    if c.use_adaptive_entropy:
        target = f" {num(c.entropy_target)}" if c.entropy_target is not None else ""
        notes.append(
            f"use_adaptive_entropy: an entropy held at entropy_target{target} is by design, and loss = "
            "policy_loss - entropy_coef × entropy goes negative; the controller is judged by entropy_coef "
            "reaching its cap (entropy_coef_pinned)"
        )
    elif c.entropy_coef:
        notes.append(
            f"entropy_coef {num(c.entropy_coef)}: loss includes the entropy bonus and may be negative; "
            "policy_loss is the policy term alone"
        )
    if c.top_entropy_quantile is not None and 0 < c.top_entropy_quantile < 1:
        notes.append(
            f"top_entropy_quantile {num(c.top_entropy_quantile)}: only the highest-entropy tokens are "
            "trained, while entropy is logged over every token"
        )
    if c.mask_truncated_completions:
        notes.append(
            "mask_truncated_completions: truncated completions are left out of the loss (and of entropy, "
            "kl and the clip ratios), so completions/clipped_ratio is the share of samples wasted"
        )
    if c.use_vllm and c.vllm_importance_sampling_correction is False:
        notes.append(
            "vllm_importance_sampling_correction=False: TRL logs no sampling/* metrics, so the "
            "train-inference mismatch between vLLM and the trainer cannot be judged"
        )
    elif c.use_vllm:
        mode = c.vllm_importance_sampling_mode or "sequence_mask"
        notes.append(
            f"vLLM importance-sampling correction ({mode}): sampling/importance_sampling_ratio is the ratio "
            "applied after truncation or masking (masked completions count 0), so its mean below 1 is not "
            "drift; the train-inference mismatch rule judges sampling/sampling_logp_difference/mean"
        )
    return notes


class RunOptions(Detector):
    """A note listing what the run's options change (`option_notes`); nothing for a default run."""

    name, title, stage = "run_options", "run options", Stage.NOTE
    defaults: dict = {}
    doc = RuleDoc(
        "Run options",
        "the run's config (`args`, W&B / trackio config)",
        "special",
        "-",
        "-",
        "-",
        "a note, never an alarm: says once what loss_type, importance_sampling_level, use_adaptive_entropy, "
        "top_entropy_quantile, mask_truncated_completions and vLLM's correction change about the rules",
    )

    def judge(
        self, signals: RunSignals, params: RuleParams, context: Context, run: str, rules: Rules
    ) -> Finding | None:
        notes = option_notes(context.calibration)
        if not notes:
            return None
        return Finding(
            Level.OK,
            self.name,
            run,
            "",
            None,
            None,
            "; ".join(notes) + ".",
            "Nothing to do: these are the run's own settings, and the rules judge it with their normals.",
            title=self.title,
            stage=self.stage,
        )

    def advice(self, params: RuleParams, context: Context) -> str:
        return ""
