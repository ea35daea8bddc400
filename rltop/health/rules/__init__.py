"""Every health rule, in one registry: one class a rule, and the tables built from them.

A rule class (`rltop.health.rules.base.Rule`) declares its name, the concepts it judges, its
defaults, its documentation row, its value kind and what makes its thresholds inconsistent; this
registry lists one instance of each and builds from them the defaults table (`DEFAULTS`, what a
rules file may change), the docs table (`DOCS`, the rules table of the guide) and the lists the
engine walks. Adding a rule is one class and one line here.

Modules:

* `base` -- `Rule`, `Context`, `Adjustment` and the helpers every rule shares;
* `levels` -- fixed thresholds: approx-KL, clip fractions, truncation, groups without signal;
* `updates` -- the PPO ratio drifting, updates that change nothing;
* `kl` -- the KL to the reference running away, or negative;
* `spikes` -- value loss and gradient norm against their recent level;
* `mismatch` -- the generation engine and the trainer disagreeing (train-inference mismatch);
* `entropy` -- entropy collapse by depth, speed and consequences;
* `entropy_coef` -- TRL's adaptive entropy controller at its cap;
* `reward` -- the reward giving back its gains, or stuck;
* `non_finite`, `stall` -- NaN incidents, runs that stopped writing (judged by the engine itself);
* `detectors` -- run-level patterns: plateau, one function dominating or sacrificed, hacking, forecast,
  the completion rules (template collapse, repetitive or empty completions, long wrong answers) and the
  note on the run's options.
"""

from __future__ import annotations

from typing import Any

from rltop.health.rules.base import Rule
from rltop.health.rules.detectors import Detector
from rltop.health.rules.detectors.completions import COMPLETION_RULES
from rltop.health.rules.detectors.drift import GradNormRise, LengthCollapse, ScoreBehindShaping
from rltop.health.rules.detectors.forecast import CollapseForecast
from rltop.health.rules.detectors.options import RunOptions
from rltop.health.rules.detectors.reward import (
    RewardDominance,
    RewardHacking,
    RewardPlateau,
    RewardSacrificed,
)
from rltop.health.rules.entropy import EntropyCollapse
from rltop.health.rules.entropy_coef import EntropyCoefPinned
from rltop.health.rules.kl import KlBlowup, KlBlowupToken, NegativeKl
from rltop.health.rules.levels import (
    ApproxKl,
    ClipFraction,
    GrpoClipRatio,
    Truncation,
    ValueClipFraction,
    ZeroStdGroups,
)
from rltop.health.rules.mismatch import TrainInferenceMismatch
from rltop.health.rules.non_finite import NonFiniteValues
from rltop.health.rules.reward import RewardCollapse, RewardStuck
from rltop.health.rules.spikes import GradNormSpike, ValueLossSpike
from rltop.health.rules.stall import Stall
from rltop.health.rules.updates import DeadUpdate, RatioDrift

TAG_RULES: tuple[Rule, ...] = (
    TrainInferenceMismatch(), RatioDrift(), ApproxKl(), ClipFraction(), GrpoClipRatio(), ValueClipFraction(),
    Truncation(), ZeroStdGroups(), NegativeKl(), DeadUpdate(), EntropyCollapse(), EntropyCoefPinned(),
    ValueLossSpike(), GradNormSpike(), KlBlowup(), KlBlowupToken(), RewardCollapse(), RewardStuck(),
)  # fmt: skip
"""The rules the engine runs point by point on each tag of their concepts, in the order they report."""
NON_FINITE = NonFiniteValues()
STALL = Stall()
DETECTORS: tuple[Detector, ...] = (
    RewardPlateau(),
    RewardDominance(),
    RewardSacrificed(),
    RewardHacking(),
    CollapseForecast(),
    LengthCollapse(),
    ScoreBehindShaping(),
    GradNormRise(),
    *COMPLETION_RULES,
    RunOptions(),
)
EVERY: tuple[Rule, ...] = (NON_FINITE, *TAG_RULES, STALL, *DETECTORS)
"""Every rule, in the order of the rules table."""
BY_NAME: dict[str, Rule] = {rule.name: rule for rule in EVERY}
DEFAULTS: dict[str, dict[str, Any]] = {rule.name: rule.defaults for rule in EVERY}
DOCS = {rule.name: rule.doc for rule in EVERY}
BLOW_UPS = frozenset(rule.name for rule in TAG_RULES if rule.blow_up)
