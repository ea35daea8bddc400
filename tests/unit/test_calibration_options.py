"""The TRL 1.16 options the rules read from a run's config (``args`` text summary, W&B or trackio config).

Option names and defaults are those of ``trl/trainer/grpo_config.py`` 1.16.0; what each changes in the
logged tags is in ``trl/trainer/grpo_trainer.py`` (cispo_clip_ratio L3286, vespo/phi_seq_mean L3288,
policy_loss and entropy_coef L3213/L3245, sampling/* L2860-2896).
"""

from __future__ import annotations

import numpy as np

from rltop.health.calibration import Calibration
from rltop.health.rules.detectors.options import option_notes

TRL_DEFAULTS = {  # GRPOConfig().to_dict() in 1.16.0, the keys that matter here
    "loss_type": "dapo", "importance_sampling_level": "token", "use_adaptive_entropy": False,
    "entropy_target": 0.2, "entropy_coef": 0.0, "entropy_coef_max": 1.0, "top_entropy_quantile": 1.0,
    "mask_truncated_completions": False, "use_vllm": False, "vllm_importance_sampling_correction": True,
    "vllm_importance_sampling_mode": "sequence_mask", "vllm_importance_sampling_clip_max": 3.0,
    "num_iterations": 1,
}  # fmt: skip


def test_a_default_run_has_nothing_to_say() -> None:
    c = Calibration.from_config(TRL_DEFAULTS)
    assert c.loss_type == "dapo" and not c.sequence_level and c.clip_ratios_logged
    assert c.vllm_importance_sampling_correction is True and not c.use_vllm
    assert option_notes(c) == []


def test_options_are_read_and_said_once_each() -> None:
    config = {**TRL_DEFAULTS, "loss_type": "CISPO", "importance_sampling_level": "sequence",
              "use_adaptive_entropy": True, "entropy_target": 3.0, "top_entropy_quantile": 0.2,
              "mask_truncated_completions": True, "use_vllm": True}  # fmt: skip
    c = Calibration.from_config(config)
    assert c.loss_type == "cispo" and c.sequence_level and not c.clip_ratios_logged
    assert c.use_adaptive_entropy and c.entropy_target == 3.0 and c.top_entropy_quantile == 0.2
    notes = option_notes(c)
    assert len(notes) == 6
    assert notes[0].startswith("clip ratios are not logged with loss_type=cispo (cispo_clip_ratio")
    assert sum("clip ratios are not logged" in note for note in notes) == 1


def test_junk_values_are_unknown_never_guessed() -> None:
    c = Calibration.from_config({"loss_type": 3, "importance_sampling_level": "x" * 500,
                                 "use_adaptive_entropy": "yes", "entropy_target": "nan",
                                 "vllm_importance_sampling_correction": "false"})  # fmt: skip
    assert c.loss_type is None and c.importance_sampling_level is None
    assert c.use_adaptive_entropy is False and c.entropy_target is None
    assert c.vllm_importance_sampling_correction is None
    assert Calibration.from_config(None) == Calibration()


def test_gspo_generation_steps_are_the_on_policy_ones() -> None:
    c = Calibration.from_config(
        {"num_iterations": 2, "importance_sampling_level": "sequence", "logging_steps": 1}
    )
    mask = c.on_policy_mask(np.arange(1, 7))
    assert mask is not None and list(mask) == [True, False, True, False, True, False]
    assert (
        Calibration.from_config({"num_iterations": 2, "logging_steps": 5}).on_policy_mask(np.arange(3))
        is None
    )


def test_a_vllm_run_without_correction_is_told_its_mismatch_cannot_be_judged() -> None:
    config = {**TRL_DEFAULTS, "use_vllm": True, "vllm_importance_sampling_correction": False}
    c = Calibration.from_config(config)
    (note,) = option_notes(c)
    assert note.startswith("vllm_importance_sampling_correction=False: TRL logs no sampling/* metrics")
