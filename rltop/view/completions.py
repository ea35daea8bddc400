"""One step's completions as every front end shows them: sorted, filtered, safe to print.

The completions screen, ``rltop completions`` (text and Markdown) read the same rows from here.
Text from the policy is shown literally: each line goes through `visible` (escape sequences,
bidi overrides and invisible characters become ``\\x1b``, ``\\u202e``…, text that was not UTF-8
arrives with U+FFFD already), and the front ends print it as plain text, never as markup.
Line breaks inside a completion stay line breaks; long lines are wrapped by the front end.
"""

from __future__ import annotations

from dataclasses import dataclass

from rltop.model.completion_checks import clipped_ratio, length_cap
from rltop.model.completions import Completion, StepCompletions, StepSummary, cap_agrees
from rltop.model.run import Run
from rltop.view.text.numbers import format_short as format_value
from rltop.view.text.safe import visible

SORTS = ("row", "reward", "advantage")  # the file's order, reward (sum of the reward columns), advantage


def safe_lines(text: str) -> list[str]:
    """The lines of ``text``, each made safe to print (a line break of the text is a new line)."""
    return [visible(line) for line in text.replace("\r\n", "\n").split("\n")]


@dataclass(frozen=True)
class CompletionRow:
    """One completion, ready to show."""

    number: int  # its row in the file, from 1
    group: int  # its prompt group, from 1
    prompt: list[str]  # safe lines
    completion: list[str]
    rewards: list[tuple[str, str]]  # (reward column, formatted value)
    reward: float  # sum of the reward columns
    advantage: float | None
    length: int
    at_cap: bool | None
    twins: int  # identical completions in its group, itself included
    extras: list[tuple[str, str]]  # other columns (log_extra), formatted
    source: Completion

    @property
    def flags(self) -> list[str]:
        """Short marks: "at cap", "×14 identical"."""
        marks = []
        if self.at_cap:
            marks.append("at cap")
        if self.twins > 1:
            marks.append(f"×{self.twins} identical")
        return marks

    def matches(self, needle: str) -> bool:
        """The prompt or the completion contains ``needle`` (case-insensitive)."""
        needle = needle.casefold()
        return needle in self.source.prompt.casefold() or needle in self.source.completion.casefold()


def _number(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return visible(str(value))
    if isinstance(value, int):
        return str(value)
    return format_value(float(value))


def build_rows(step: StepCompletions) -> list[CompletionRow]:
    """Every row of a step, in file order."""
    rows = []
    skip = {"step", "prompt", "completion", "advantage"}
    for number, row in enumerate(step.rows, 1):
        extras = [
            (visible(name), _number(value))
            for name, value in row.values.items()
            if name not in skip and name not in row.rewards
        ]
        rows.append(CompletionRow(
            number=number, group=row.group + 1, prompt=safe_lines(row.prompt),
            completion=safe_lines(row.completion),
            rewards=[(visible(name), _number(row.values.get(name))) for name in row.rewards],
            reward=row.total_reward, advantage=row.advantage, length=row.length, at_cap=row.at_cap,
            twins=row.twins, extras=extras, source=row,
        ))  # fmt: skip
    return rows


def arrange(rows: list[CompletionRow], sort: str = "row", text: str = "",
            unique: bool = False) -> list[CompletionRow]:  # fmt: skip
    """``rows`` filtered by ``text`` and sorted by ``sort`` (one of `SORTS`; best first).

    ``unique``: one row per distinct completion of a group (its first), its ``×N identical`` mark
    counting the others: sixteen identical answers read as one.
    """
    if text:
        rows = [row for row in rows if row.matches(text)]
    if unique:
        seen: set[tuple[int, str]] = set()
        kept = []
        for row in rows:
            key = (row.group, row.source.completion)
            if key not in seen:
                seen.add(key)
                kept.append(row)
        rows = kept
    if sort == "reward":
        return sorted(rows, key=lambda r: (-r.reward, r.number))
    if sort == "advantage":
        return sorted(rows, key=lambda r: (r.advantage is None, -(r.advantage or 0.0), r.number))
    if sort != "row":
        raise ValueError(f"unknown sort {sort!r} (choose from {', '.join(SORTS)})")
    return list(rows)


def cap_sentence(summary: StepSummary, run: Run | None) -> str:
    """What the step says about the length cap ("" when the run logs neither cap nor ratio)."""
    cap, ratio = length_cap(run), clipped_ratio(run, summary)
    if cap is None:
        return f"clipped_ratio {format_value(ratio)}" if ratio is not None else ""
    if ratio is None:
        return f"cap {cap} tokens (lengths here are characters)"
    if cap_agrees(summary, cap, ratio):
        return (
            f"{summary.at_least(cap)} of {summary.rows} at the cap of {cap} by their text "
            f"(clipped_ratio {format_value(ratio)})"
        )
    return (
        f"clipped_ratio {format_value(ratio)} (cap {cap} tokens; the text, in characters, cannot tell which)"
    )


def caption(summary: StepSummary, run: Run | None = None) -> str:
    """One line about the step: rows, groups, repetition, lengths, the cap cross-check."""
    parts = [f"step {summary.step}", f"{summary.rows} completions in {summary.groups} groups"]
    if summary.identical:
        parts.append(f"{summary.identical} of {summary.rows} identical within their group")
    if summary.empty:
        parts.append(f"{summary.empty} empty")
    if summary.repetitive:
        parts.append(f"{summary.repetitive} repetitive (one unit repeated over four fifths)")
    parts.append(f"{summary.length_mean:.1f} characters on average, at most {summary.length_max}")
    cap = cap_sentence(summary, run)
    if cap:
        parts.append(cap)
    if summary.repeats is not None:
        parts.append(f"same rows as step {summary.repeats} (num_iterations > 1: no new generation)")
    return " · ".join(parts)


def reward_line(summary: StepSummary) -> str:
    """Per-reward means and the mean advantage of a step: "x_prefix_reward 2 · advantage 0"."""
    parts = [f"{visible(name)} {format_value(value)}" for name, value in summary.rewards]
    if summary.advantage_mean is not None:
        parts.append(f"advantage {format_value(summary.advantage_mean)}")
    return " · ".join(parts)
