"""What a health rule is: the tags it watches, its per-point flags, and how it explains itself.

Concrete rules live in `rltop.health.rules.levels` (fixed thresholds) and
`rltop.health.rules.relative` (against the run's own baseline or recent median). The engine
(`rltop.health.engine`) feeds them and turns their episodes into findings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from rltop.health.calibration import Calibration
from rltop.health.findings import Level, Stage
from rltop.health.persistence import Flags, Point
from rltop.health.settings import RuleDoc, RuleParams
from rltop.health.wording import persistence_text
from rltop.model.catalog import MetricInfo

Band = tuple[float | None, float | None, float | None, float | None]
NO_BAND: Band = (None, None, None, None)
BandLines = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""(warn_low, warn_high, crit_low, crit_high) at each judged point; NaN where a line does not apply."""


@dataclass
class SlotState:
    """What one rule remembers about one tag between calls; a rule that needs more declares a subclass
    (`Rule.State`)."""

    key: str = ""  # the tag without its train/ prefix
    concept: str = ""  # what it measures
    baseline: float | None = None  # a level frozen once its first points exist (entropy, reward)
    last_ref: float | None = None  # the newest reference (a trailing median), for the chart band
    # Episodes (level, first, last) whose second look can no longer change, with its verdict.
    settled: dict[tuple[int, int, int], tuple[Level, str]] = field(default_factory=dict)


@dataclass
class Context:
    """What a rule knows about the run besides the series it judges."""

    calibration: Calibration = field(default_factory=Calibration)
    kind: str = "unknown"


@dataclass(frozen=True)
class Adjustment:
    """A rule's second look at an episode with the whole run in view (`Rule.adjust`).

    ``cap`` is the highest level the episode may have (OK turns it into a note); ``note`` is
    appended to the finding's message to say why. ``final``: the evidence it rests on can no
    longer change (every signal it read has points past the episode), so it is kept for good.
    """

    cap: Level
    note: str
    final: bool = False


class Rule:
    """Base class: a rule judges the finite points of the tags of the concepts it knows.

    A rule is one class, and says everything about itself in it: its name, its concepts, its
    defaults (the settings a rules file may change, besides `rltop.health.settings.COMMON`), its
    documentation row (`RuleDoc`), the kind of value its thresholds are (`value_kind`), what makes
    a pair of thresholds inconsistent (`swapped`), and how it judges, explains and advises. The
    registry (`rltop.health.rules`) builds the defaults table, the docs table and the list of rules
    from these classes alone.
    """

    name: str = ""
    title: str = ""
    defaults: ClassVar[dict[str, Any]] = {}
    doc: ClassVar[RuleDoc | None] = None
    # "share": warn/critical are between 0 and 1 (a "25" is caught as a percentage typo);
    # "multiple": multiples of a trailing median, above 1 (else every point would be a spike).
    value_kind: ClassVar[str] = ""
    State: ClassVar[type[SlotState]] = SlotState  # what it keeps per tag between calls
    note_advice = ""  # the advice of a finding its second look turned into a note ("": the usual one)
    concepts: frozenset[str] = frozenset()  # what it judges (`rltop.model.catalog.concepts`), any spelling
    direction: str = "above"  # "above": large values are bad; "below": small values are bad
    dynamic_band: bool = False  # True when the chart band follows the data (baselines, medians)
    stage: Stage = Stage.BREAKDOWN  # cause before consequence when alerts are listed
    uses_evidence: bool = False  # `adjust` looks at the rest of the run
    # One point beyond the critical threshold is a warning (``general.single_point_warn``), unless the
    # rule's critical threshold only names a candidate its second look decides (the entropy's).
    single_point_warn: bool = True
    # Its episodes are an update blowing up (a spike, a KL or ratio running away, clipping wholesale):
    # the usual precursor of a NaN, which a NaN finding names and follows (`fold_incident`).
    blow_up: bool = False

    def adjust(
        self, level: Level, first: int, last: int, signals: Any, params: RuleParams, context: Context
    ) -> Adjustment | None:
        """A second look at an episode at ``level`` over steps ``first..last`` with the whole run in
        view (``signals``: `rltop.health.evidence.signals.RunSignals`). None: the level stands as it is."""
        return None

    def swapped(self, warn: float, critical: float) -> str:
        """Why these thresholds contradict each other ("" when they do not): critical must lie
        beyond warn in the rule's direction."""
        if (critical > warn) if self.direction == "below" else (critical < warn):
            relation = "below" if self.direction == "below" else "beyond"
            return f"thresholds must be critical {relation} warn"
        return ""

    def calibrated(self, params: RuleParams, context: Context) -> RuleParams:
        """The settings this rule judges the run with: ``params``, or the variant its config calls for
        (GSPO's sequence-level clip ratios have their own thresholds). Asked once per tag."""
        return params

    def applies(self, info: MetricInfo, context: Context) -> bool:
        """Whether this rule judges a tag (by its concept, split and the run's config)."""
        return info.concept in self.concepts

    def select(self, steps: np.ndarray, context: Context) -> np.ndarray | None:
        """Mask of the new points to judge (None: all of them)."""
        return None

    def flags(
        self, values: np.ndarray, start: int, state: SlotState, params: RuleParams, context: Context
    ) -> Flags:
        """Verdicts for ``values[start:]``; earlier values are history (state: the rule's own state)."""
        raise NotImplementedError

    def explain(
        self,
        tag: str,
        point: Point,
        level: Level,
        params: RuleParams,
        state: SlotState,
        context: Context,
    ) -> str:
        """One sentence naming the metric, value, step and thresholds."""
        raise NotImplementedError

    def advice(self, params: RuleParams, context: Context) -> str:
        """What to try, with the run's own settings where they matter."""
        raise NotImplementedError

    def band(self, params: RuleParams, state: SlotState, context: Context) -> Band:
        """(warn_low, warn_high, crit_low, crit_high) in the metric's own units, for charts."""
        return NO_BAND

    def band_along(
        self, ref: np.ndarray, start: int, params: RuleParams, state: SlotState, context: Context
    ) -> BandLines:
        """The band at each judged point ``start, start + 1, ...`` (``ref``: their references, as
        `flags` returned them; NaN for rules without one), for charts that draw the band over time.

        Fixed thresholds by default; rules whose band follows a baseline (``dynamic_band``) override
        it, so a chart draws the threshold each point was judged against, not today's.
        """
        return constant_lines(self.band(params, state, context), len(ref))

    def persistences(self, params: RuleParams) -> tuple[tuple[int, int], tuple[int, int]]:
        """(warn, critical) persistence of this rule."""
        return params.persistence, params.critical_persistence


def with_prefix(params: RuleParams, prefix: str) -> RuleParams:
    """``params`` with every ``<prefix>_<key>`` setting in place of ``<key>``
    (``sequence_warn`` -> ``warn``)."""
    values = dict(params.values)
    for key, value in params.values.items():
        if key.startswith(prefix + "_"):
            values[key[len(prefix) + 1 :]] = value
    return replace(params, values=values)


def constant_lines(band: Band, count: int) -> BandLines:
    """``band`` repeated at ``count`` points (NaN for the lines it does not have)."""
    return tuple(np.full(count, np.nan if value is None else float(value)) for value in band)  # type: ignore[return-value]


def scaled(reference: np.ndarray, factor: float | None) -> np.ndarray:
    """``reference * factor`` (all NaN when the level is switched off)."""
    return reference * factor if factor is not None else np.full(len(reference), np.nan)


def threshold_flags(
    stat: np.ndarray, warn: float | None, critical: float | None, clear: float, direction: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(warn_on, warn_ok, crit_on, crit_ok) of a statistic against fixed thresholds.

    "above": beyond means >= threshold, back means < clear * threshold. "below": beyond means
    < threshold, back means > threshold / clear. A None threshold never fires.
    """

    def level(threshold: float | None) -> tuple[np.ndarray, np.ndarray]:
        if threshold is None:
            return np.zeros(len(stat), bool), np.ones(len(stat), bool)
        with np.errstate(invalid="ignore"):
            if direction == "above":
                return stat >= threshold, stat < threshold * clear
            return stat < threshold, stat > threshold / clear

    warn_on, warn_ok = level(warn)
    crit_on, crit_ok = level(critical)
    return warn_on, warn_ok, crit_on, crit_ok


def verdict(level: Level, params: RuleParams, render: Callable[[float], str], op: str) -> str:
    """ "warn at ≥ 0.25 in 3 of 5 points (critical at ≥ 0.9 in 4 of 5 points)": the level reported
    first, the other level after it, each with its threshold and persistence (``op``: "at ≥")."""
    terms = {}
    for name, threshold, (m, n) in (
        ("warn", params.warn, params.persistence),
        ("critical", params.critical, params.critical_persistence),
    ):
        if threshold is not None:
            terms[name] = f"{name} {op} {render(threshold)} in {persistence_text(m, n)}"
    main = terms.pop(level.label, f"{level.label}")
    return f"{main} ({next(iter(terms.values()))})" if terms else main


def judged(level: Level, params: RuleParams) -> str:
    """ "3 of 5 points" for the persistence of ``level``."""
    m, n = params.critical_persistence if level == Level.CRITICAL else params.persistence
    return persistence_text(m, n)
