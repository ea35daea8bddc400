"""Evidence only the text gives: what the policy wrote at the step a finding is about.

TRL's completions files (`rltop.model.completions`, indexed with the run) say what no scalar can:
that 14 of 16 completions are the same string (an entropy collapse seen in plain text), that the
completions at the cap are really cut (``completions/clipped_ratio`` cross-checked against their
length), which completion a rising reward is paying for. Each related finding gets one sentence,
read from the index (no file is opened here):

- ``entropy_collapse`` and ``zero_std_groups``: the share of completions identical within their
  group, and the most frequent one;
- ``truncation``: the share at the length cap, cross-checked with ``clipped_ratio``;
- ``reward_hacking``: the most frequent completion.

The sentence is appended to the finding's message ("…; completions: 14 of 16 at step 240 are
identical within their group; the most frequent (14×): 'xxxxxxxxxxxxxxxx'."), so every front end
and export shows it; `Finding.evidence` holds it alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from rltop.health.findings import Finding
from rltop.health.wording import num, pct
from rltop.model.completion_checks import clipped_ratio, length_cap
from rltop.model.completions import StepSummary, cap_agrees
from rltop.model.run import Run

QUOTE_CHARS = 40  # the most frequent completion is quoted this long


def quoted(summary: StepSummary) -> str:
    """The most frequent completion in quotes, cut to `QUOTE_CHARS` ("…" when cut)."""
    text = summary.top_text
    cut = summary.top_cut or len(text) > QUOTE_CHARS
    return repr(text[:QUOTE_CHARS] + ("…" if cut else ""))


def identical(summary: StepSummary, run: Run) -> str:
    """ "14 of 16 completions at step 240 are identical within their group; the most frequent…"."""
    if not summary.identical:
        return f"all {summary.rows} at step {summary.step} differ within their groups"
    sentence = f"{summary.identical} of {summary.rows} at step {summary.step} are identical"
    sentence += " within their group"
    if summary.top_count > 1:
        sentence += f"; the most frequent ({summary.top_count}×): {quoted(summary)}"
    return sentence


def at_cap(summary: StepSummary, run: Run) -> str:
    """The share of completions at the cap, cross-checked with ``completions/clipped_ratio``."""
    cap, ratio = length_cap(run), clipped_ratio(run, summary)
    if cap is None or ratio is None:
        return ""
    if cap_agrees(summary, cap, ratio):
        return (
            f"{summary.at_least(cap)} of {summary.rows} at step {summary.step} are "
            f"{cap} characters or longer, as clipped_ratio {num(ratio)} says"
        )
    return (
        f"those at step {summary.step} have {summary.length_mean:.0f} characters on "
        f"average (at most {summary.length_max}): their text cannot confirm clipped_ratio "
        f"{num(ratio)} (the cap counts {cap} tokens)"
    )


def most_frequent(summary: StepSummary, run: Run) -> str:
    """The completion a reward pays for, when one repeats."""
    if summary.top_count < 2:
        return ""
    share = pct(summary.top_count / summary.rows) if summary.rows else "?"
    return (
        f"the most frequent at step {summary.step} ({summary.top_count} of "
        f"{summary.rows}, {share}): {quoted(summary)}"
    )


SENTENCES: dict[str, Callable[[StepSummary, Run], str]] = {
    "entropy_collapse": identical,
    "zero_std_groups": identical,
    "truncation": at_cap,
    "reward_hacking": most_frequent,
}


def with_text_evidence(findings: list[Finding], run: Run) -> list[Finding]:
    """``findings``, each related one with what the completions at its latest step show."""
    index = run.completions
    if not index:
        return findings
    out = []
    for finding in findings:
        sentence_of = SENTENCES.get(finding.rule)
        step = finding.last_step if finding.last_step is not None else finding.step
        summary = None
        if sentence_of is not None and step is not None:
            summary = index.at_or_before(step) or index.nearest(step)
        sentence = sentence_of(summary, run) if summary is not None else ""
        if sentence:
            message = finding.message.rstrip(".")
            finding = replace(finding, message=f"{message}; completions: {sentence}.", evidence=(sentence,))
        out.append(finding)
    return out
