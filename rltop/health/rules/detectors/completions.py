"""Completion rules: judged from what the policy wrote (TRL's completions files), not from a scalar.

Each reads the run's completions index (`rltop.model.completions.StepSummary`, one a logged step) up
to the detectors' horizon, turns every logged step into a share, and holds a level while ``m`` of the
last ``n`` logged steps are beyond its threshold:

* ``template_collapse``: the same completion for most of a step's completions, across prompts (every
  prompt answered 'hello');
* ``repetitive_completions``: completions filled by one repeated character, token or word
  ('llllllll', '!!!!…': OpenRLHF#1120, facebookresearch/SPG#2);
* ``empty_completions``: completions that are empty, or a mean length collapsed toward 0 (a bare
  '\\boxed{N}' from answers of hundreds of characters);
* ``wrong_answer_length``: with a correctness reward, the wrong answers growing longer (Dr. GRPO's
  length bias: GRPO's per-sequence normalisation penalises long wrong answers less).

A finding's ``step`` is the logged step that shows its pattern most clearly and its message quotes
those completions, so the completions screen (``e`` on the alert) opens on them. Lengths are
characters: the files hold text. A pattern that held and is over stays listed, inactive.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rltop.health.evidence.signals import RunSignals
from rltop.health.evidence.text import QUOTE_CHARS
from rltop.health.findings import Finding, Level, Stage
from rltop.health.rules.base import Context
from rltop.health.rules.detectors import Detector
from rltop.health.settings import RuleDoc, RuleParams, Rules
from rltop.health.wording import num, pct
from rltop.model.completions import StepSummary

EARLY_STEPS = 5  # logged steps whose median is a length's early level


def quote(text: str, cut: bool = False) -> str:
    """A completion in quotes, cut to `QUOTE_CHARS` ("…" when cut)."""
    return repr(text[:QUOTE_CHARS] + ("…" if cut or len(text) > QUOTE_CHARS else ""))


@dataclass(frozen=True)
class Episode:
    """A stretch of logged steps at warn or worse: its level, bounds, and the step that shows it best."""

    level: Level
    first: int
    last: int
    peak: StepSummary
    value: float  # the share at the peak step
    active: bool


def episode(summaries: list[StepSummary], shares: np.ndarray, params: RuleParams) -> Episode | None:
    """The latest stretch where ``shares`` stayed beyond warn (m of the last n logged steps), its level
    the worst reached inside it (critical with its own m of n); None when there is none."""
    if not len(shares):
        return None
    levels = np.zeros(len(shares), int)
    for threshold, (m, n), level in (
        (params.warn, params.persistence, Level.WARN),
        (params.critical, params.critical_persistence, Level.CRITICAL),
    ):
        if threshold is None:
            continue
        with np.errstate(invalid="ignore"):
            beyond = (shares >= threshold).astype(int)
        counts = np.convolve(beyond, np.ones(n, int))[: len(shares)]
        levels = np.where((counts >= m) & (beyond > 0), np.maximum(levels, int(level)), levels)
    marked = np.flatnonzero(levels > 0)
    if not len(marked):
        return None
    end = int(marked[-1])
    start = end
    while start > 0 and levels[start - 1] > 0:
        start -= 1
    inside = slice(start, end + 1)
    peak = start + int(np.nanargmax(shares[inside]))
    return Episode(
        Level(int(levels[inside].max())),
        summaries[start].step,
        summaries[end].step,
        summaries[peak],
        float(shares[peak]),
        end == len(shares) - 1,
    )


def _same(text: str, other: str) -> bool:
    """The two (possibly cut) completions are the same one."""
    return text[:QUOTE_CHARS] == other[:QUOTE_CHARS]


def _summaries(signals: RunSignals) -> list[StepSummary]:
    index = signals.run.completions
    if not index:
        return []
    return [s for s in index.summaries() if s.rows and (signals.upto is None or s.step <= signals.upto)]


class CompletionRule(Detector):
    """A completion rule: a share per logged step, held with m of n logged steps (see `episode`)."""

    stage = Stage.SYMPTOM
    value_kind = "share"

    def shares(self, summaries: list[StepSummary], params: RuleParams) -> np.ndarray:
        """The judged share at each logged step (NaN: not judged there)."""
        raise NotImplementedError

    def describe(self, found: Episode, params: RuleParams, summaries: list[StepSummary]) -> str:
        """The finding's message: what the completions at its peak step show, quoted."""
        raise NotImplementedError

    def judge(
        self, signals: RunSignals, params: RuleParams, context: Context, run: str, rules: Rules
    ) -> Finding | None:
        summaries = _summaries(signals)
        found = episode(summaries, self.shares(summaries, params), params) if summaries else None
        if found is None:
            return None
        when = (
            f"since step {found.first}"
            if found.active
            else f"steps {found.first}-{found.last}, then back to normal"
        )
        m, n = params.critical_persistence if found.level == Level.CRITICAL else params.persistence
        threshold = params.critical if found.level == Level.CRITICAL else params.warn
        shown = num(threshold) + "×" if self.value_kind == "multiple" else pct(threshold)
        rule_text = f"{found.level.label} at ≥ {shown} in {m} of the last {n} logged steps"
        said = self.describe(found, params, summaries)
        message = f"{said} ({rule_text}); {when}."
        return Finding(
            found.level,
            self.name,
            run,
            "",
            found.peak.step,
            found.value,
            message,
            self.advice(params, context),
            first_step=found.first,
            last_step=found.last,
            active=found.active,
            title=self.title,
            stage=self.stage,
            evidence=(said,),
        )


class TemplateCollapse(CompletionRule):
    """One completion written for most prompts of a step (empty and repetitive ones have their rules)."""

    name, title = "template_collapse", "one completion for every prompt"
    defaults = {"warn": 0.5, "critical": 0.9, "min_prompts": 2}
    doc = RuleDoc(
        "Template collapse",
        "completions files: share of a step's completions equal to its most frequent one, across "
        "≥ {min_prompts} prompts",
        "above",
        "≥ {warn}",
        "≥ {critical}",
        "{persistence} logged steps",
        "one string for every prompt is not a solved task; scalars show it only by its side effects "
        "(entropy, groups without signal)",
    )

    def shares(self, summaries: list[StepSummary], params: RuleParams) -> np.ndarray:
        least = params["min_prompts"]
        return np.array(
            [
                s.top_count / s.rows
                if s.top_groups >= least and s.top_text.strip() and not _same(s.top_text, s.repetitive_text)
                else np.nan
                for s in summaries
            ]
        )

    def describe(self, found: Episode, params: RuleParams, summaries: list[StepSummary]) -> str:
        s = found.peak
        return (
            f"the policy writes one completion for every prompt: {s.top_count} of {s.rows} completions "
            f"at step {s.step} ({s.top_groups} of {s.groups} prompts) are {quote(s.top_text, s.top_cut)}"
        )

    def advice(self, params: RuleParams, context: Context) -> str:
        return (
            "The reward pays for one string whatever the prompt: make it depend on the prompt (check "
            "what the most frequent completion scores), add a KL penalty (beta) or lower the learning "
            f"rate{context.calibration.now('learning_rate')}, and resume from a checkpoint before it."
        )


class RepetitiveCompletions(CompletionRule):
    """Completions filled by one repeated unit (`rltop.model.completions.filled_by_repeat`)."""

    name, title = "repetitive_completions", "repetitive completions"
    defaults = {"warn": 0.25, "critical": 0.5}
    doc = RuleDoc(
        "Repetitive completions",
        "completions files: share of completions four fifths filled by one repeated character, token or word",
        "above",
        "≥ {warn}",
        "≥ {critical}",
        "{persistence} logged steps",
        "'llll…' or '!!!!…' for half the batch is a degenerate policy (OpenRLHF#1120, SPG#2)",
    )

    def shares(self, summaries: list[StepSummary], params: RuleParams) -> np.ndarray:
        return np.array([s.repetitive / s.rows for s in summaries])

    def describe(self, found: Episode, params: RuleParams, summaries: list[StepSummary]) -> str:
        s = found.peak
        return (
            f"{s.repetitive} of {s.rows} completions at step {s.step} are one character, token or word "
            f"repeated, such as {quote(s.repetitive_text)}"
        )

    def advice(self, params: RuleParams, context: Context) -> str:
        c = context.calibration
        return (
            "The policy degenerated into repeating itself: lower the learning rate"
            f"{c.now('learning_rate')}, add a KL penalty (beta) or a repetition penalty in the reward, "
            "check what the reward pays for repeated text, and resume from a checkpoint before it."
        )


class EmptyCompletions(CompletionRule):
    """Empty completions, or the mean length collapsing toward 0 (`collapse` of its early level)."""

    name, title = "empty_completions", "completions emptying"
    defaults = {"warn": 0.5, "critical": 0.9, "collapse": 0.1, "min_early_chars": 20.0}
    doc = RuleDoc(
        "Completions emptying",
        "completions files: share of empty completions; mean length below {collapse} of its early level",
        "above",
        "≥ {warn} empty, or the mean length collapsed",
        "≥ {critical} empty",
        "{persistence} logged steps",
        "the policy stops answering; a shorter answer is fine, one a tenth of its early length "
        "(970 → 9 tokens in a real veRL run) is not",
    )

    def shares(self, summaries: list[StepSummary], params: RuleParams) -> np.ndarray:
        empty = np.array([s.empty / s.rows for s in summaries])
        lengths = np.array([s.length_mean for s in summaries])
        early = float(np.median(lengths[:EARLY_STEPS]))
        if early >= params["min_early_chars"] and params.warn is not None:
            # A mean length collapsed below its share of the early level counts as half empty (warn).
            collapsed = lengths <= params["collapse"] * early
            empty = np.where(collapsed, np.maximum(empty, params.warn), empty)
        return empty

    def describe(self, found: Episode, params: RuleParams, summaries: list[StepSummary]) -> str:
        s = found.peak
        early = float(np.median([x.length_mean for x in summaries[:EARLY_STEPS]]))
        if s.empty:
            said = f"{s.empty} of {s.rows} completions at step {s.step} are empty"
        else:
            said = f"the completions at step {s.step} are {s.length_mean:.1f} characters on average"
        shown = f" (the most frequent: {quote(s.top_text, s.top_cut)})" if s.empty < s.rows else ""
        return f"{said}{shown}; {early:.1f} characters on average in the first steps"

    def advice(self, params: RuleParams, context: Context) -> str:
        return (
            "The policy learned to stop answering: check what an empty or very short completion scores "
            "(a length or brevity reward that pays for nothing at all), require an answer in the reward, "
            "and resume from a checkpoint before it."
        )


class WrongAnswerLength(CompletionRule):
    """With a correctness reward: the wrong answers' mean length as a multiple of its early level."""

    name, title, stage = "wrong_answer_length", "wrong answers growing longer", Stage.SYMPTOM
    value_kind = "multiple"
    defaults = {"warn": 1.5, "critical": None, "min_wrong": 2}
    doc = RuleDoc(
        "Wrong answers growing longer",
        "completions files with a correctness reward (0/1 column named like accuracy or correct): "
        "mean length of the wrong completions",
        "above",
        "≥ {warn}× its early level, and longer than the right ones",
        "{critical}",
        "{persistence} logged steps",
        "never critical: Dr. GRPO's length bias (GRPO's per-sequence normalisation lets long wrong answers "
        "off lightly) wastes tokens, it does not break the run",
    )

    def shares(self, summaries: list[StepSummary], params: RuleParams) -> np.ndarray:
        least = params["min_wrong"]
        wrong = np.array(
            [
                s.wrong_length_mean if s.wrong >= least and s.wrong_length_mean is not None else np.nan
                for s in summaries
            ],
            float,
        )
        known = wrong[np.isfinite(wrong)]
        if len(known) < EARLY_STEPS:
            return np.full(len(summaries), np.nan)
        early = float(np.median(known[:EARLY_STEPS]))
        if early <= 0:
            return np.full(len(summaries), np.nan)
        right = np.array([s.right_length_mean if s.right_length_mean is not None else 0.0 for s in summaries])
        # Wrong answers growing longer than the right ones: both growing is the task asking for more.
        return np.where(wrong > right, wrong / early, np.nan)

    def describe(self, found: Episode, params: RuleParams, summaries: list[StepSummary]) -> str:
        s = found.peak
        ratio = found.value
        right = f", the right ones {s.right_length_mean:.0f}" if s.right_length_mean is not None else ""
        return (
            f"by {s.correctness}, the {s.wrong} wrong completions at step {s.step} are "
            f"{s.wrong_length_mean:.0f} characters on average, {num(ratio)}× their early length{right}; "
            f"the longest: {quote(s.wrong_text)}"
        )

    def advice(self, params: RuleParams, context: Context) -> str:
        return (
            "Long wrong answers cost little under GRPO's per-sequence normalisation: use loss_type "
            "dr_grpo or dapo (token-level normalisation), add a length penalty for wrong answers, or cap "
            f"max_completion_length{context.calibration.now('max_completion_length')}."
        )


COMPLETION_RULES = (TemplateCollapse(), RepetitiveCompletions(), EmptyCompletions(), WrongAnswerLength())
