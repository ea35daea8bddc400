"""Text that fits a column, measured in terminal cells: names shortened at segment and word
boundaries, messages cut between words so that every number stays whole."""

from __future__ import annotations

import re
from collections import Counter

from rltop.view.text.cells import cell_len, cut_cells, cut_cells_left

ELLIPSIS = "…"
_WORD_JOINTS = "_-."
"""Where the words of a name meet (``mean_terminated_length``)."""


def elide_name(name: str, width: int) -> str:
    """Shorten a slash-separated name to ``width`` cells at segment and word boundaries.

    ``rewards/length_reward/mean`` becomes ``rewards/…/mean``, then ``…/mean`` (or ``…mean``); a
    last segment that is still too long keeps its first and last words (``mean…length``). Only a
    word longer than the whole column is ever cut inside. Whatever was left out shows as ``…``.
    """
    return elisions(name, width)[0]


def elisions(name: str, width: int, cut_words: bool = True) -> list[str]:
    """Every way `elide_name` may shorten ``name`` to ``width`` cells, best first.

    Without ``cut_words`` a word is never cut inside (the list may then be empty).
    """
    if width <= 0:
        return [""] if cut_words else []
    if cell_len(name) <= width:
        return [name]
    parts = name.split("/")
    candidates = [
        f"{parts[0]}/{ELLIPSIS}/" + "/".join(parts[-keep:]) for keep in range(len(parts) - 2, 0, -1)
    ]
    candidates += [f"{ELLIPSIS}/" + "/".join(parts[-keep:]) for keep in range(len(parts) - 1, 0, -1)]
    if len(parts) > 1:
        candidates.append(ELLIPSIS + parts[-1])
    fitting = [candidate for candidate in candidates if cell_len(candidate) <= width]
    return fitting + word_cuts(parts[-1], width, cut_words)


def cut_word(word: str, width: int) -> str:
    """``word`` in ``width`` cells, cut between its words (``_``, ``-``, ``.``): see `word_cuts`."""
    return word_cuts(word, width)[0]


def word_cuts(word: str, width: int, cut_words: bool = True) -> list[str]:
    """Ways to fit ``word`` in ``width`` cells without cutting one of its words, best first.

    The first word stays; as many words as fit are kept around one ``…``, most kept first:
    ``mean_terminated_length`` -> ``mean…length``, ``mean_terminated…``. Only a first word longer
    than the column is cut inside (the last candidate, only with ``cut_words``).
    """
    if cell_len(word) <= width:
        return [word]
    tokens = re.split(r"([_.-])", word)
    words, joints = tokens[0::2], tokens[1::2]
    count = len(words)
    found: list[tuple[int, int, str]] = []

    def joined(first: int, end: int) -> str:  # words first..end-1 with the joints between them
        return "".join(words[i] + (joints[i] if i < end - 1 else "") for i in range(first, end))

    for lead in range(count - 1, 0, -1):
        head = joined(0, lead)
        for trail in range(count - lead - 1, -1, -1):
            tail = joined(count - trail, count) if trail else ""
            text = head + ELLIPSIS + tail
            if cell_len(text) <= width:
                found.append((cell_len(head) + cell_len(tail), lead, text))
    found.sort(key=lambda item: (-item[0], -item[1]))
    hard = [cut_cells(word, max(0, width - 1)) + ELLIPSIS] if cut_words else []
    return [text for _, _, text in found] + hard


def cut_middle(word: str, width: int) -> str:
    """``head…tail`` of ``width`` cells, cut between words: both ends of a long run name tell it
    apart (``grpo_lr1e-4_beta0.04…seed_3``), and a word is never cut inside (``…diverged``, not
    ``grpo_d…erged``) unless the name is one word too long for the column (then its start is cut)."""
    return middle_cuts(word, width)[0]


def middle_cuts(word: str, width: int) -> list[str]:
    """Every way to fit ``word`` in ``width`` cells keeping whole words from its start and its end
    around one ``…``, best first: most cells kept, where keeping both ends counts two cells more
    (``grpo…seed_3`` before ``grpo_lr1e-4…``). A cut inside a word comes after the cuts that keep at
    least half the width."""
    if cell_len(word) <= width:
        return [word]
    if width <= 1:
        return [ELLIPSIS[:width]]
    tokens = re.split(r"([_.-])", word)
    words, joints = tokens[0::2], tokens[1::2]
    count = len(words)

    def joined(first: int, end: int) -> str:  # words first..end-1 with the joints between them
        return "".join(words[i] + (joints[i] if i < end - 1 else "") for i in range(first, end))

    found: list[tuple[int, bool, str]] = []
    for lead in range(count):
        for trail in range(count - lead):
            if lead + trail == 0:
                continue
            head, tail = joined(0, lead), joined(count - trail, count) if trail else ""
            text = head + ELLIPSIS + tail
            if cell_len(text) <= width:
                found.append((cell_len(head) + cell_len(tail), bool(lead and trail), text))
    found.sort(key=lambda item: -(item[0] + 2 * item[1]))
    cuts = [text for kept, _, text in found if 2 * kept >= width - 1]
    return cuts + [_cells_middle(word, width)] + [text for kept, _, text in found if 2 * kept < width - 1]


def _cells_middle(word: str, width: int) -> str:
    """``head…tail`` by cells: the tail from a word joint, the head wherever the width ends."""
    tail_room = (width - 1) // 2
    tail = cut_cells_left(word, tail_room)
    cut = min((tail.find(sep) for sep in _WORD_JOINTS if sep in tail[:-1]), default=-1)
    if 0 <= cut < len(tail) // 2:
        tail = tail[cut:]
    head = cut_cells(word, width - 1 - cell_len(tail))
    return head + ELLIPSIS + tail


def fit_path(name: str, width: int) -> str:
    """A run name of ``width`` cells: leading segments dropped first (``…/seed_1``), then the last
    segment cut between words (`cut_middle`)."""
    return path_cuts(name, width)[0]


def path_cuts(name: str, width: int) -> list[str]:
    """Every way `fit_path` may shorten ``name`` to ``width`` cells, best first."""
    if cell_len(name) <= width:
        return [name]
    parts = name.split("/")
    candidates = [f"{ELLIPSIS}/" + "/".join(parts[-keep:]) for keep in range(len(parts) - 1, 0, -1)]
    return [c for c in candidates if cell_len(c) <= width] + middle_cuts(parts[-1], width)


def fit_paths(names: list[str], width: int) -> dict[str, str]:
    """Run name -> its `fit_path` of ``width`` cells, distinct where a way to cut them allows:
    runs listed together must not read alike (``…healthy`` twice)."""
    return pick_distinct({name: path_cuts(name, width) for name in names})[0]


def pick_distinct(
    choices: dict[str, list[str]], labels: dict[str, str] | None = None
) -> tuple[dict[str, str], Counter]:
    """Name -> label: its first choice (or its entry in ``labels``), except where two names would read
    alike: the second takes its next choice that no other name has. Also how often each label is used
    (a label still used twice had no distinct choice left)."""
    labels = {name: options[0] for name, options in choices.items()} if labels is None else labels
    used = Counter(labels.values())
    for name, options in choices.items():  # two names cut the same way: the second takes its next way
        if used[labels[name]] > 1:
            spare = next((option for option in options[1:] if not used[option]), None)
            if spare is not None:
                used[labels[name]] -= 1
                labels[name] = spare
                used[spare] += 1
    return labels, used


def cut_at_word(text: str, width: int) -> str:
    """``text`` on one line of ``width`` cells: whole words and a trailing ``…`` when it is too long.

    Cuts fall between words, so a number is never cut short (``reached 1.7…`` would read as a
    different value). Only a single word longer than half the line is cut inside, after a ``/``
    or a ``_`` of its own (a tag such as ``train/policy/approxkl_avg``).
    """
    text = " ".join(text.split())
    if cell_len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    room = width - 1
    head = cut_cells(text, room)
    space = head.rfind(" ") if len(head) < len(text) and text[len(head)] != " " else len(head)
    if space >= len(head) // 2:
        return text[:space].rstrip(" ,;:") + ELLIPSIS
    for joint in (head.rfind("/"), head.rfind("_")):
        if joint >= len(head) // 3:
            return text[: joint + 1] + ELLIPSIS
    return head + ELLIPSIS
