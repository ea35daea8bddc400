"""An alert on one line of any width: the metric, what it did and its number are never cut.

A finding's message leads with its headline, ``kl reached 3.926 at step 12: critical at ≥ 1 …``:
the metric, a verb, and the number that decided the level. On a line too short for the whole
message the text is cut between words *after* that number; on a line too short for the headline
itself, the verb becomes a mark (``kl ↑3.926``) and then the metric's name is shortened at its
``/`` and ``_`` joints (``…/value_avg ↑3.302``). The number is kept as the message wrote it: a
headline never shows fewer digits than the full message would.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rltop.view.text.cells import cell_len
from rltop.view.text.fit import ELLIPSIS, cut_at_word, elisions

VERB_MARKS = {
    "spiked to": "↑",
    "reached": "↑",
    "rose to": "↑",
    "fell to": "↓",
    "stayed below": "<",
    "has been exactly": "=",
    "is": "",
    "was": "",
}
"""The verbs a finding's headline uses, and the mark that stands for each on a narrow line."""

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?%?×?|[-+±]?(?:NaN|nan|Inf|inf)"
_HEADLINE = re.compile(
    r"^(?P<subject>.*?)\s(?P<verb>" + "|".join(re.escape(verb) for verb in VERB_MARKS) + r")\s"
    r"(?P<number>" + _NUMBER + r")(?P<unit>\snats)?(?=[\s,:;)]|$)"
)


@dataclass(frozen=True)
class Headline:
    """The leading part of a message: ``subject verb number[ unit]``."""

    subject: str
    verb: str
    number: str
    end: int
    """Where the headline ends in the message."""

    @property
    def mark(self) -> str:
        """The short stand-in for the verb (``↑``, ``↓``...)."""
        return VERB_MARKS[self.verb]


def headline(message: str) -> Headline | None:
    """The message's headline, when it starts with one (None for free text such as a stall)."""
    match = _HEADLINE.match(" ".join(message.split()))
    if match is None:
        return None
    number = match.group("number") + (match.group("unit") or "")
    return Headline(match.group("subject"), match.group("verb"), number, match.end())


def fit_alert(message: str, width: int) -> str:
    """``message`` on one line of ``width`` cells, its headline whole whenever it can be.

    Best first: the whole message; the message cut between words after its headline; the headline
    alone; the verb as a mark; then the subject (a metric name) shortened at its joints, and only
    then inside a word (``entrop… ↓0.0002427``): the number goes last.
    """
    text = " ".join(message.split())
    if cell_len(text) <= width:
        return text
    found = headline(text)
    if found is None:
        return cut_at_word(text, width)
    cut = cut_at_word(text, width)
    if len(cut.rstrip(ELLIPSIS)) >= found.end:
        return cut
    head = text[: found.end]
    candidates = [head + ELLIPSIS, head]
    marked = f"{found.mark}{found.number}"
    candidates.append(f"{found.subject} {marked}")
    metric = found.subject.split(" ")[0]  # "objective/scores (median of the last 10 points)"
    # At its joints first; cut inside a word only where nothing else leaves room for the number.
    for subject in elisions(metric, max(1, width - 1 - cell_len(marked))):
        candidates.append(f"{subject} {marked}")
    fitting = next((candidate for candidate in candidates if cell_len(candidate) <= width), None)
    return fitting if fitting is not None else cut_at_word(f"{metric} {marked}", width)
