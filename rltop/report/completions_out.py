"""``rltop completions`` output: one step's completions as text, JSON Lines or Markdown.

- ``jsonl``: one JSON object per row, every column exactly as the parquet file holds it (ints stay
  ints, floats round-trip, NaN is written as ``NaN`` as Python's json does); ASCII-only, so no
  character of a completion can reach a terminal raw.
- ``text``: a header, then per completion its marks, rewards, advantage, length, and the prompt
  and the completion wrapped to the width, every line escaped (`rltop.view.completions`).
- ``markdown``: fits an issue or pull-request comment: a summary table and each completion in a
  fenced block (the fence longer than any backtick run inside).
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Iterator

from rltop.model.completions import StepCompletions
from rltop.model.run import Run
from rltop.view.completions import CompletionRow, caption, reward_line
from rltop.view.text.cells import cell_len
from rltop.view.text.numbers import format_short
from rltop.view.text.safe import markdown_code, markdown_text, visible

COMPLETION_FORMATS = ("text", "jsonl", "markdown")
MAX_MARKDOWN_CHARS = 2000  # a completion longer than this is cut in Markdown (a comment must stay readable)


def jsonl_lines(step: StepCompletions, rows: list[CompletionRow]) -> Iterator[str]:
    """One JSON object per row: the file's columns and values, exactly."""
    for row in rows:
        yield json.dumps(row.source.values, ensure_ascii=True, default=str)


def _wrap(lines: list[str], width: int, indent: str) -> list[str]:
    out: list[str] = []
    for line in lines:
        out.extend(
            textwrap.wrap(
                line,
                width=max(width - len(indent), 10),
                initial_indent=indent,
                subsequent_indent=indent,
                replace_whitespace=False,
                drop_whitespace=False,
                break_on_hyphens=False,
            )
            or [indent]
        )
    return out


SEPARATOR = " · "


def _fold(line: str, width: int, indent: str = "  ") -> list[str]:
    """One line of facts (``a · b · c``) in lines of at most ``width`` cells: cut between the facts
    (the ``·`` ends the line), a fact too long for a line between its words; the lines after the
    first indented."""
    width = max(width, 10)
    facts = line.split(SEPARATOR)
    pieces = [fact + SEPARATOR.rstrip() for fact in facts[:-1]] + facts[-1:]
    lines: list[str] = []
    current = ""
    for piece in pieces:
        joined = f"{current} {piece}" if current else (indent if lines else "") + piece
        if cell_len(joined) <= width:
            current = joined
            continue
        if current:
            lines.append(current)
        wrapped = textwrap.wrap(
            piece, width=width, initial_indent=indent, subsequent_indent=indent, break_on_hyphens=False
        ) or [indent]
        lines.extend(wrapped[:-1])
        current = wrapped[-1]
    lines.append(current)
    return lines


def row_header(row: CompletionRow) -> str:
    """``#3 · group 1 · reward 1.5 (x 1, y 0.5) · advantage 0.23 · 16 chars · at cap · ×14 identical``."""
    parts = [f"#{row.number}", f"group {row.group}"]
    if row.rewards:
        detail = ", ".join(f"{name} {value}" for name, value in row.rewards)
        parts.append(f"reward {format_short(row.reward)} ({detail})")
    if row.advantage is not None:
        parts.append(f"advantage {format_short(row.advantage)}")
    parts.append(f"{row.length} chars")
    parts.extend(row.flags)
    parts.extend(f"{name} {value}" for name, value in row.extras)
    return " · ".join(parts)


def text_lines(step: StepCompletions, rows: list[CompletionRow], run: Run | None, width: int = 100,
               title: str = "") -> Iterator[str]:  # fmt: skip
    """The human-readable listing, every line wrapped to ``width`` (the caption and the row headers
    too, between their words, continued with an indent)."""
    if title:
        yield from _fold(visible(title), width)
    yield from _fold(caption(step.summary, run), width)
    means = reward_line(step.summary)
    if means:
        yield from _fold(f"means: {means}", width)
    for row in rows:
        yield ""
        yield from _fold(row_header(row), width)
        yield "  prompt:"
        yield from _wrap(row.prompt, width, "    ")
        yield "  completion:"
        yield from _wrap(row.completion, width, "    ")


def _fence(text: str) -> str:
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    return "`" * max(3, longest + 1)


def markdown_lines(step: StepCompletions, rows: list[CompletionRow], run: Run | None,
                   title: str = "") -> Iterator[str]:  # fmt: skip
    """A Markdown section: caption, a table of the rows, then each completion in a code block."""
    of = f" of {markdown_code(title, False)}" if title else ""
    yield f"### Completions at step {step.summary.step}{of}"
    yield ""
    yield markdown_text(caption(step.summary, run))
    yield ""
    rewards = [name for name, _ in rows[0].rewards] if rows else []
    extras = [name for name, _ in rows[0].extras] if rows else []
    head = [
        "#",
        "group",
        *(markdown_code(n) for n in rewards),
        "advantage",
        "chars",
        *(markdown_code(n) for n in extras),
        "marks",
    ]
    yield "| " + " | ".join(head) + " |"
    yield "|" + "---|" * len(head)
    for row in rows:
        advantage = format_short(row.advantage) if row.advantage is not None else "–"
        cells = [
            str(row.number),
            str(row.group),
            *(markdown_text(v) for _, v in row.rewards),
            advantage,
            str(row.length),
            *(markdown_text(v) for _, v in row.extras),
            ", ".join(row.flags),
        ]
        yield "| " + " | ".join(cells) + " |"
    for row in rows:
        yield ""
        yield f"**#{row.number}** prompt: {markdown_code(' / '.join(row.prompt), False)}"
        body = "\n".join(row.completion)
        if len(body) > MAX_MARKDOWN_CHARS:
            body = body[:MAX_MARKDOWN_CHARS] + f"… ({len(body) - MAX_MARKDOWN_CHARS} more characters)"
        fence = _fence(body)
        yield fence
        yield body
        yield fence
