"""TRL's adaptive entropy controller losing: ``entropy_coef`` pinned at its cap.

With ``use_adaptive_entropy`` (Skywork-OR1, TRL >= 1.8) the coefficient of the entropy bonus goes up by
``entropy_coef_delta`` after every optimizer step whose entropy is at or below ``entropy_target`` and
down otherwise, between ``entropy_coef_min`` and ``entropy_coef_max`` (1.0). An entropy held at its
target is the controller doing its job (`rltop.health.rules.entropy`); a coefficient that climbs to
its cap and stays there is the controller out of range: the reward pulls the policy toward collapse
harder than the largest bonus allowed can push back.
"""

from __future__ import annotations

import numpy as np

from rltop.health.findings import Level, Stage
from rltop.health.persistence import Flags, Point
from rltop.health.rules.base import Band, Context, SlotState, verdict
from rltop.health.rules.levels import LevelRule
from rltop.health.settings import RuleDoc, RuleParams
from rltop.health.wording import num, pct
from rltop.model.catalog import MetricInfo

DEFAULT_CAP = 1.0  # TRL's entropy_coef_max


class EntropyCoefPinned(LevelRule):
    """``entropy_coef`` as a share of its cap, judged only while the adaptive controller is on."""

    name, title, stage = "entropy_coef_pinned", "entropy controller at its cap", Stage.BREAKDOWN
    concepts = frozenset({"entropy_coef"})
    value_kind = "share"
    defaults = {"warn": 0.5, "critical": 0.99, "persistence": (5, 5)}
    doc = RuleDoc(
        "Entropy controller at its cap",
        "GRPO `entropy_coef` with `use_adaptive_entropy`, as a share of `entropy_coef_max`",
        "above",
        "≥ {warn} of the cap",
        "≥ {critical} of the cap",
        "{persistence}",
        "the controller raises the bonus while entropy is below entropy_target: at its cap it has lost "
        "(entropy held at the target is by design and never judged)",
    )

    def applies(self, info: MetricInfo, context: Context) -> bool:
        on = context.calibration.use_adaptive_entropy
        return info.split != "eval" and on and super().applies(info, context)

    @staticmethod
    def _cap(context: Context) -> float:
        cap = context.calibration.entropy_coef_max
        return cap if cap is not None and cap > 0 else DEFAULT_CAP

    def flags(
        self, values: np.ndarray, start: int, state: SlotState, params: RuleParams, context: Context
    ) -> Flags:
        shares = values / self._cap(context)
        return super().flags(shares, start, state, params, context)

    def explain(
        self, tag: str, point: Point, level: Level, params: RuleParams, state: SlotState, context: Context
    ) -> str:
        cap = self._cap(context)
        target = context.calibration.entropy_target
        wanted = f" to hold the entropy at entropy_target {num(target)}" if target is not None else ""
        return (
            f"{tag} reached {num(point.value)} at step {point.step}, {pct(point.value / cap)} of "
            f"entropy_coef_max {num(cap)}: the adaptive controller is pushing{wanted}; "
            f"{verdict(level, params, lambda share: pct(share) + ' of the cap', 'at ≥')}"
        )

    def advice(self, params: RuleParams, context: Context) -> str:
        c = context.calibration
        return (
            "The reward pulls the policy toward a collapse harder than the largest entropy bonus can push "
            f"back: lower the learning rate{c.now('learning_rate')}, look at what the reward pays for (the "
            f"completions), or lower entropy_target{c.now('entropy_target')}; raising entropy_coef_max"
            f"{c.now('entropy_coef_max')} only buys time."
        )

    def band(self, params: RuleParams, state: SlotState, context: Context) -> Band:
        cap = self._cap(context)
        warn = params.warn * cap if params.warn is not None else None
        critical = params.critical * cap if params.critical is not None else None
        return None, warn, None, critical
