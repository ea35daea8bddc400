"""What the rest of a run says around a stretch of steps: the evidence behind "critical".

A number crossing a line is not damage by itself. A per-token KL of 1.9 in a run whose reward
climbs from 0.15 to 1.9 while its entropy stays put is a policy that moved far *and learned*; the
same KL with the reward falling, the entropy collapsing, updates clipped wholesale or completions
running into the length cap is a run being damaged. `RunSignals` answers those questions for the
rules whose critical level needs corroboration (`Rule.adjust`) and for the run-level detectors.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rltop.health.findings import Level
from rltop.health.numerics.robust import noise_sigma
from rltop.health.settings import Rules
from rltop.health.wording import num, pct
from rltop.model.catalog import describe
from rltop.model.run import Run
from rltop.model.series import Series

# Concepts of the signals (`rltop.model.catalog.concepts`), most telling first (the first one a run
# logs is used): the main reward is GRPO's reward, else PPO's RLHF (shaped) reward, else the score.
REWARD_CONCEPTS = ("reward", "shaped_reward", "task_score")
ENTROPY_CONCEPTS = ("policy_entropy",)
LENGTH_CONCEPTS = ("response_length",)
CLIPPED_CONCEPTS = ("truncation_ratio",)
# Rules whose critical episodes mean the updates themselves are drastic.
DRASTIC_RULES = ("ratio_drift", "approx_kl", "clip_fraction", "grpo_clip_ratio")
LEVEL_POINTS = 10  # points whose median gives "the level" of a signal at some step
GRACE_POINTS = 10  # a consequence may show this many points after the episode that caused it
NOISE_POINTS = 500  # a signal's noise is measured on its latest points (bounded cost per call)

# (level, first step, last step) of every episode of one rule on the run's tags.
Episodes = Callable[[str], list[tuple[Level, int, int]]]


@dataclass(frozen=True)
class Trend:
    """A signal's level before and at the end of a stretch, and whether it really moved."""

    start: float
    end: float
    margin: float

    @property
    def falling(self) -> bool:
        """Fell by more than its own noise allows."""
        return self.end < self.start - self.margin

    @property
    def rising(self) -> bool:
        """Rose by more than its own noise allows."""
        return self.end > self.start + self.margin


def early_level(values: np.ndarray) -> float | None:
    """The early level of a signal: the highest of its first point and the medians of its first 3
    and first 10 points (a fall within the first points must not make "early" the fallen level)."""
    if not len(values):
        return None
    return float(max(values[0], np.median(values[:3]), np.median(values[:LEVEL_POINTS])))


class RunSignals:
    """Lookups into one run's series and rule episodes, for evidence and detectors."""

    def __init__(
        self, run: Run, episodes: Episodes, upto: int | None = None, rules: Rules | None = None
    ) -> None:
        self.run = run
        self._episodes = episodes
        self.upto = upto  # judge only the points up to this step (None: all of them)
        self.rules = rules  # the thresholds in force (extreme levels), None in tests that need none
        self._by_key: dict[str, Series] = {}
        self._by_concept: dict[str, Series] = {}
        for tag, series in run.series.items():
            info = describe(tag)
            if info.split in ("", "train") and len(series):
                self._by_key.setdefault(info.key, series)
                if info.concept:
                    self._by_concept.setdefault(info.concept, series)
        # One assessment asks the same questions many times (each episode, each detector): the
        # answers are kept for the lifetime of this object, which is one assessment.
        self._memo: dict[tuple, object] = {}

    def _cached(self, key: tuple, compute):
        found = self._memo.get(key, _MISSING)
        if found is _MISSING:
            found = self._memo[key] = compute()
        return found

    def episodes_of(self, rule: str) -> list[tuple[Level, int, int]]:
        """Every episode of ``rule`` on the run's tags (closed ones and the current one)."""
        return self._cached(("episodes", rule), lambda: self._episodes(rule))

    def noise(self, series: Series) -> float:
        """Point-to-point noise of a series' latest `NOISE_POINTS` finite values."""
        return self._cached(
            ("noise", id(series)), lambda: noise_sigma(self.finite_upto(series)[1][-NOISE_POINTS:])
        )

    def settled(self, step: int) -> bool:
        """Every signal the evidence reads has points past ``step``: what it says can no longer change."""
        for concepts in (REWARD_CONCEPTS, ENTROPY_CONCEPTS, LENGTH_CONCEPTS, CLIPPED_CONCEPTS):
            series = self.series(concepts)
            if series is not None and (series.last_step or 0) <= step:
                return False
        return True

    def series(self, concepts: tuple[str, ...]) -> Series | None:
        """The run's training series of the first of ``concepts`` it logs (None when none)."""
        for concept in concepts:
            found = self._by_concept.get(concept)
            if found is not None:
                return found
        return None

    def concept(self, name: str) -> Series | None:
        """The training series of one concept (whatever the run's framework calls it)."""
        return self._by_concept.get(name)

    def tag(self, key: str) -> Series | None:
        """The training series of one exact key (a family member: ``rewards/<f>/mean``)."""
        return self._by_key.get(key)

    def keys(self) -> list[str]:
        """Keys of every training series (without their ``train/`` prefix)."""
        return list(self._by_key)

    def finite_upto(self, series: Series, last: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(steps, values) of the finite points at or before step ``last`` (all when None)."""
        steps, values = self._cached(("finite", id(series)), lambda: _finite(series, self.upto))
        if last is not None:
            end = int(np.searchsorted(steps, last, side="right"))
            steps, values = steps[:end], values[:end]
        return steps, values

    def trend(self, series: Series, first: int, last: int) -> Trend | None:
        """The level of ``series`` just before step ``first`` against its level at step ``last``."""
        steps, values = self.finite_upto(series, last)
        before = values[steps < first][-LEVEL_POINTS:]
        if before.size == 0:
            before = values[:LEVEL_POINTS]
        recent = values[-LEVEL_POINTS:]
        if before.size < 3 or recent.size < 3:
            return None
        margin = max(3.0 * 1.2533 * self.noise(series) / np.sqrt(LEVEL_POINTS), 1e-9)
        return Trend(float(np.median(before)), float(np.median(recent)), margin)

    def overlapping(self, rule: str, first: int, last: int, level: Level = Level.WARN):
        """Episodes of ``rule`` at ``level`` or worse that overlap steps ``first..last``."""
        return [e for e in self.episodes_of(rule) if e[0] >= level and e[1] <= last and e[2] >= first]

    def grace_end(self, series: Series | None, last: int) -> int:
        """The step `GRACE_POINTS` points after ``last`` in ``series`` (a consequence shows later)."""
        if series is None or not len(series):
            return last
        steps = series.steps
        index = int(np.searchsorted(steps, last, side="right")) + GRACE_POINTS - 1
        return int(steps[min(index, len(steps) - 1)]) if index >= 0 else last

    def entropy_share(self, last: int) -> float | None:
        """Entropy at step ``last`` (median of its last points) as a share of its early level."""
        series = self.series(ENTROPY_CONCEPTS)
        if series is None:
            return None
        _, values = self.finite_upto(series, last)
        if values.size < 3:
            return None
        early = early_level(values)
        return float(np.median(values[-LEVEL_POINTS:]) / early) if early and early > 0 else None

    def evidence_end(self, last: int) -> int:
        """The last step whose data `damage` may read for an episode ending at ``last``."""
        entropy, reward = self.series(ENTROPY_CONCEPTS), self.series(REWARD_CONCEPTS)
        return max(self.grace_end(entropy, last), self.grace_end(reward, last))

    def damage(self, first: int, last: int) -> list[str]:
        """Signs that the run is being damaged during steps ``first..last`` (and just after)."""
        reasons: list[str] = []
        entropy = self.series(ENTROPY_CONCEPTS)
        end = max(self.grace_end(entropy, last), last)
        collapse = self.overlapping("entropy_collapse", first, end)
        if collapse:
            reasons.append(f"the entropy collapsing (from step {min(e[1] for e in collapse)})")
        reward = self.series(REWARD_CONCEPTS)
        if reward is not None:
            trend = self.trend(reward, first, self.grace_end(reward, last))
            if trend is not None and trend.falling:
                reasons.append(f"the reward falling ({num(trend.start)} → {num(trend.end)})")
            elif self.overlapping("reward_collapse", first, end):
                reasons.append("the reward giving back its gains")
        drastic = [rule for rule in DRASTIC_RULES if self.overlapping(rule, first, end, Level.CRITICAL)]
        if drastic:
            reasons.append(f"drastic updates ({', '.join(drastic)} critical)")
        if self._running_into_cap(first, end):
            reasons.append("completions running into the length cap")
        return reasons

    def _running_into_cap(self, first: int, end: int) -> bool:
        """Truncation turned critical during the stretch, or was critical while lengths grew."""
        if not self.overlapping("truncation", first, end, Level.CRITICAL):
            return False
        if not self.overlapping("truncation", first, first, Level.CRITICAL):
            return True  # it became critical during the stretch
        length = self.series(LENGTH_CONCEPTS)
        trend = self.trend(length, first, end) if length is not None else None
        return trend is not None and trend.rising

    def calm(self, first: int, last: int) -> str:
        """What healthy signs the run shows during steps ``first..last`` (for a capped verdict)."""
        parts: list[str] = []
        reward = self.series(REWARD_CONCEPTS)
        trend = self.trend(reward, first, last) if reward is not None else None
        if trend is not None:
            verb = "rose" if trend.rising else "held"
            parts.append(f"the reward {verb} ({num(trend.start)} → {num(trend.end)})")
        share = self.entropy_share(last)
        if share is not None:
            parts.append(f"the entropy is at {pct(share)} of its early level")
        return " and ".join(parts) or "no other metric shows damage"

    def reward_position(self, last: int | None = None) -> tuple[float, float, bool] | None:
        """(position of the reward's recent level in its own range 0..1, that level, whether it rose).

        None without a reward or with fewer than `LEVEL_POINTS` points.
        """
        reward = self.series(REWARD_CONCEPTS)
        if reward is None:
            return None
        steps, values = self.finite_upto(reward)
        end = len(values) if last is None else int(np.searchsorted(steps, last, side="right"))
        if end < LEVEL_POINTS:
            return None
        low, high = self._cached(
            ("range", id(reward)), lambda: (np.minimum.accumulate(values), np.maximum.accumulate(values))
        )
        low, high = float(low[end - 1]), float(high[end - 1])
        recent = float(np.median(values[end - LEVEL_POINTS : end]))
        start = float(np.median(values[:LEVEL_POINTS]))
        margin = 3.0 * 1.2533 * self.noise(reward) / np.sqrt(LEVEL_POINTS)
        position = (recent - low) / (high - low) if high > low else 0.0
        return position, recent, recent - start > max(margin, 1e-9)


_MISSING = object()


def _finite(series: Series, upto: int | None) -> tuple[np.ndarray, np.ndarray]:
    steps, values = series.steps, series.values
    if upto is not None:
        end = int(np.searchsorted(steps, upto, side="right"))
        steps, values = steps[:end], values[:end]
    keep = np.isfinite(values)
    if keep.all():
        return steps, values
    return steps[keep], values[keep]
