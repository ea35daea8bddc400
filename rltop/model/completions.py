"""What the policy wrote: the index of a run's logged completions, and one step's rows once read.

TRL (``log_completions=True``) writes one parquet file per logging step,
``<output_dir>/completions/completions_{step:05d}.parquet``. Only a small summary of each file
stays in memory (`StepSummary`: its step, path, row count, per-reward means, length statistics
and the repetition signals the health rules read); the rows themselves (`Completion`) are read
from the file when a screen or a command asks for one step (`rltop.ingest.sources.completions`).
No pyarrow and no Textual here: the health and view layers read this module. `filled_by_repeat` and
`correctness_column` are what the completion rules' summary fields are made with.
"""

from __future__ import annotations

import bisect
import math
import re
from array import array
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

TOP_TEXT_CHARS = 120  # the most frequent completion is kept this long in the index (evidence lines)


@dataclass(frozen=True, slots=True)
class StepSummary:
    """One completions file, summarised: all that stays in memory of it."""

    step: int
    path: str
    rows: int
    version: object  # the file's stat version: a change means the file was rewritten
    rewards: tuple[tuple[str, float], ...]  # (reward column, mean over the rows), in column order
    advantage_mean: float | None
    length_mean: float  # completion lengths in characters (the file holds no token counts)
    length_max: int
    groups: int  # prompts in the step (a GRPO group is the rows sharing a prompt)
    group_size: int  # rows of its largest group
    # Sum over groups of the largest cluster of identical completions (clusters of two or more):
    # 14 of 16 means fourteen completions repeat another one of their own group.
    identical: int
    top_text: str  # the most frequent completion of the step (cut to TOP_TEXT_CHARS)
    top_count: int
    top_cut: bool  # top_text was cut
    digest: bytes  # of the (prompt, completion) pairs: equal digests mean the same generation
    lengths: bytes = b""  # every completion's length, ascending, as an array("I") (4 bytes a row)
    repeats: int | None = None  # step of the generation this file repeats (num_iterations > 1)
    # Distinct bigrams over all bigrams of the step's completions (`distinct_bigrams`): near 1 for
    # varied text, falling as the completions converge on one string or one template; None: no text.
    diversity: float | None = None
    # What the completion rules (`rltop.health.rules.detectors.completions`) read:
    empty: int = 0  # completions that are empty or only whitespace
    repetitive: int = 0  # completions filled by one repeated character, token or word (`filled_by_repeat`)
    repetitive_text: str = ""  # the most frequent of them (cut to TOP_TEXT_CHARS)
    top_groups: int = 0  # prompt groups in which the most frequent completion appears
    correctness: str = ""  # the reward column read as right (its maximum) / wrong (its minimum), if any
    right: int = 0  # completions scored right by it
    wrong: int = 0  # completions scored wrong by it
    right_length_mean: float | None = None
    wrong_length_mean: float | None = None
    wrong_text: str = ""  # the longest wrong completion (cut to TOP_TEXT_CHARS)

    def at_least(self, length: int) -> int:
        """How many completions are ``length`` characters or longer."""
        values = array("I", self.lengths)
        return len(values) - bisect.bisect_left(values, length)

    def reward_mean(self, name: str) -> float | None:
        """Mean of one reward column (None when the step does not have it)."""
        return next((value for column, value in self.rewards if column == name), None)


@dataclass
class Completion:
    """One row of a completions file: every column, exactly as the file holds it."""

    values: dict[str, Any]  # column -> value, in the file's column order
    rewards: tuple[str, ...]  # names of the reward columns (floats other than advantage)
    group: int = 0  # index of its prompt group within the step
    twins: int = 1  # completions of its group identical to it (itself included)
    length: int = 0  # characters of the completion
    at_cap: bool | None = None  # its length reaches max_completion_length (None: cap unknown)

    @property
    def prompt(self) -> str:
        """The prompt text."""
        return _text(self.values.get("prompt"))

    @property
    def completion(self) -> str:
        """The completion text."""
        return _text(self.values.get("completion"))

    @property
    def advantage(self) -> float | None:
        """The advantage TRL computed for it (None when the file has no such column)."""
        value = self.values.get("advantage")
        return float(value) if isinstance(value, (int, float)) else None

    def reward(self, name: str) -> float | None:
        """The value of one reward column."""
        value = self.values.get(name)
        return float(value) if isinstance(value, (int, float)) else None

    @property
    def total_reward(self) -> float:
        """Sum of the reward columns (the sort key "reward"; NaN and missing count as 0)."""
        total = 0.0
        for name in self.rewards:
            value = self.reward(name)
            if value is not None and value == value:
                total += value
        return total


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


WORDS_FOR_WORD_BIGRAMS = 4  # completions of fewer words on average are measured in characters


def distinct_bigrams(texts: list[str]) -> float | None:
    """The share of distinct bigrams among all bigrams of ``texts`` (distinct-2, Li et al. 2016).

    Word bigrams for prose; character bigrams when completions are shorter than a few words (a
    character-level tokenizer, one-word answers). A collapsing policy writes the same words in the
    same order: the share falls long before whole completions are identical (a shared prefix, a
    template with slots). None when there is no bigram at all.
    """
    words = [text.split() for text in texts]
    by_words = sum(len(w) for w in words) >= WORDS_FOR_WORD_BIGRAMS * max(len(texts), 1)
    units = words if by_words else [list(text) for text in texts]
    seen: set[tuple[str, str]] = set()
    total = 0
    for sequence in units:
        pairs = list(zip(sequence, sequence[1:]))
        total += len(pairs)
        seen.update(pairs)
    return len(seen) / total if total else None


REPEAT_MIN_CHARS = 8  # shorter completions are never called repetitive (a one-word answer is fine)
REPEAT_FILL = 0.8  # one unit repeated over at least this share of the completion fills it
REPEAT_UNIT = 16  # longest unit looked for: a character, a token, a word or a short phrase
_SCAN_CHARS = 20_000  # a long completion is judged on its first this many characters (bounded cost)


def filled_by_repeat(text: str) -> bool:
    """Whether one unit of up to `REPEAT_UNIT` characters, repeated back to back, fills at least
    `REPEAT_FILL` of ``text`` ('llllllll', '!!!!…' after a few words, 'the the the …').

    For each period p the longest stretch where every character equals the one p places later is a
    run of a p-character unit; its length plus p is the span that unit covers. A span of four fifths
    of the text covers its middle three fifths, so a period that does not repeat the middle (a string
    comparison, at C speed) is left out first: varied text costs a few microseconds.
    """
    text = text.strip()[:_SCAN_CHARS]
    size = len(text)
    if size < REPEAT_MIN_CHARS:
        return False
    middle = text[size - int(REPEAT_FILL * size) : int(REPEAT_FILL * size)]
    longest = min(REPEAT_UNIT, size // 3)
    periods = [p for p in range(1, longest + 1) if p >= len(middle) or middle[p:] == middle[:-p]]
    if not periods:
        return False
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    need = REPEAT_FILL * size
    for period in periods:
        same = codes[period:] == codes[:-period]
        if _longest_true(same) + period >= need:
            return True
    return False


def _longest_true(flags: np.ndarray) -> int:
    """Length of the longest stretch of True in a boolean array."""
    if not flags.any():
        return 0
    padded = np.concatenate(([False], flags, [False])).astype(np.int8)
    edges = np.flatnonzero(np.diff(padded))
    return int((edges[1::2] - edges[::2]).max())


CORRECTNESS = re.compile(r"correct|accura|exact|solved|(^|_)acc($|_)|math_verify|is_right|success", re.I)


def correctness_column(rewards: dict[str, list[Any]]) -> str:
    """The reward column that says right or wrong: named like a correctness reward ("accuracy_reward",
    "correctness", "exact_match") with exactly two values across the step (0/1, -1/1). "" when none."""
    for name, values in rewards.items():
        if not CORRECTNESS.search(name):
            continue
        seen = {float(v) for v in values if isinstance(v, (int, float)) and math.isfinite(v)}
        if len(seen) <= 2 and seen:
            return name
    return ""


@dataclass
class StepCompletions:
    """The rows of one step, read from its file, and what the file said."""

    summary: StepSummary
    rows: list[Completion] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    problem: str = ""  # why the rows could not be read ("" when they were)


class CompletionIndex:
    """Every logged completions step of one run, by step: what stays in memory."""

    def __init__(self) -> None:
        self._by_step: dict[int, StepSummary] = {}
        self._steps: list[int] = []  # sorted
        self.note = ""  # why completions exist but cannot be read (pyarrow missing), "" otherwise

    def __len__(self) -> int:
        return len(self._steps)

    def __bool__(self) -> bool:
        return bool(self._steps)

    @property
    def steps(self) -> list[int]:
        """The logged steps, ascending."""
        return list(self._steps)

    def add(self, summary: StepSummary) -> None:
        """Add or replace the summary of one step; a file repeating the previous generation says so."""
        if summary.step not in self._by_step:
            bisect.insort(self._steps, summary.step)
        self._by_step[summary.step] = summary
        position = self._steps.index(summary.step)
        self._relink(position)
        if position + 1 < len(self._steps):
            self._relink(position + 1)

    def _relink(self, position: int) -> None:
        """Set `repeats` of the step at ``position`` from its predecessor's digest."""
        step = self._steps[position]
        summary = self._by_step[step]
        repeats = None
        if position > 0:
            before = self._by_step[self._steps[position - 1]]
            if before.digest == summary.digest and before.rows == summary.rows:
                repeats = before.repeats if before.repeats is not None else before.step
        if repeats != summary.repeats:
            self._by_step[step] = _with_repeats(summary, repeats)

    def remove(self, step: int) -> None:
        """Forget one step (its file was deleted)."""
        if self._by_step.pop(step, None) is not None:
            position = self._steps.index(step)
            del self._steps[position]
            if position < len(self._steps):
                self._relink(position)

    def at(self, step: int) -> StepSummary | None:
        """The summary of exactly ``step``."""
        return self._by_step.get(step)

    def nearest(self, step: int) -> StepSummary | None:
        """The logged step closest to ``step`` (the earlier one on a tie); None when none is logged."""
        if not self._steps:
            return None
        position = bisect.bisect_left(self._steps, step)
        candidates = self._steps[max(0, position - 1) : position + 1]
        best = min(candidates, key=lambda s: (abs(s - step), s))
        return self._by_step[best]

    def at_or_before(self, step: int) -> StepSummary | None:
        """The latest logged step at or before ``step`` (what the policy wrote by then)."""
        position = bisect.bisect_right(self._steps, step)
        return self._by_step[self._steps[position - 1]] if position else None

    def latest(self) -> StepSummary | None:
        """The newest logged step."""
        return self._by_step[self._steps[-1]] if self._steps else None

    def neighbour(self, step: int, offset: int) -> StepSummary | None:
        """The logged step ``offset`` places after (or before, negative) ``step``; None past the ends."""
        position = bisect.bisect_left(self._steps, step) + offset
        if 0 <= position < len(self._steps):
            return self._by_step[self._steps[position]]
        return None

    def summaries(self) -> list[StepSummary]:
        """Every summary, by step."""
        return [self._by_step[step] for step in self._steps]


def cap_agrees(summary: StepSummary, cap: int, clipped_ratio: float) -> bool:
    """The share of completions of at least ``cap`` characters matches TRL's ``clipped_ratio``.

    The files hold text, the cap counts tokens: only when the two shares agree (within one
    completion) is "characters >= cap" a fair reading of "hit the cap" (a character-level
    tokenizer, or completions that never stop); otherwise the text cannot tell.
    """
    if not summary.rows:
        return False
    return abs(summary.at_least(cap) / summary.rows - clipped_ratio) <= 1.0 / summary.rows + 1e-9


def _with_repeats(summary: StepSummary, repeats: int | None) -> StepSummary:
    return replace(summary, repeats=repeats)
