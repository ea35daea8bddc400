"""Short texts the dashboard shows: rates, and metric or run names that fit a column without cutting words.

Durations and display names are the reports' (`rltop.report.humanize.format_duration`,
`rltop.report.snapshot.display_names`), so the dashboard and a snapshot always say the same.
"""

from __future__ import annotations

ELLIPSIS = "…"
VALUE_WIDTH = 8
"""Cells for a value in a narrow metric line (`format_short`'s ordinary width)."""
NARROW_FIXED = 1 + VALUE_WIDTH + 1 + 1 + 1 + 4
"""Cells of a narrow metric line besides name and sparkline: gaps, value, trend, level badge."""


def format_rate(points_per_second: float) -> str:
    """``0 pts/s``, ``3.5 pts/s``, ``1.2k pts/s``."""
    if points_per_second < 0.05:
        return "0 pts/s"
    if points_per_second < 10:
        return f"{points_per_second:.1f} pts/s"
    if points_per_second < 1000:
        return f"{points_per_second:.0f} pts/s"
    return f"{points_per_second / 1000:.1f}k pts/s"


def elide_name(name: str, width: int) -> str:
    """Shorten a slash-separated metric name to ``width`` cells at segment and word boundaries.

    ``rewards/length_reward/mean`` becomes ``rewards/…/mean``, then ``…/mean`` (or ``…mean``); a
    last segment that is still too long keeps its leading words (``mean_terminated…``). Only a word
    longer than the whole column is ever cut inside. Whatever was left out shows as ``…``.
    """
    if width <= 0:
        return ""
    if len(name) <= width:
        return name
    parts = name.split("/")
    candidates = [
        f"{parts[0]}/{ELLIPSIS}/" + "/".join(parts[-keep:]) for keep in range(len(parts) - 2, 0, -1)
    ]
    candidates += [f"{ELLIPSIS}/" + "/".join(parts[-keep:]) for keep in range(len(parts) - 1, 0, -1)]
    if len(parts) > 1:
        candidates.append(ELLIPSIS + parts[-1])
    for candidate in candidates:
        if len(candidate) <= width:
            return candidate
    return _cut_at_word(parts[-1], width)


def _cut_at_word(word: str, width: int) -> str:
    """The longest prefix ending at a word boundary (``_``, ``-``, ``.``) that fits with ``…``."""
    room = max(0, width - 1)
    boundary = max(word.rfind(sep, 0, room + 1) for sep in "_-.")
    if boundary >= room // 2 and boundary > 0:
        return word[:boundary] + ELLIPSIS
    return word[:room] + ELLIPSIS


def cut_at_word(text: str, width: int) -> str:
    """``text`` on one line of ``width`` cells: whole words and a trailing ``…`` when it is too long."""
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    room = width - 1
    space = text.rfind(" ", 0, room + 1)
    if space >= room // 2:
        return text[:space].rstrip(" ,;:") + ELLIPSIS
    # One long "word" (a tag such as train/policy/approxkl_avg): cut after a / inside it, else
    # after a _, so the cut falls between the name's own parts.
    for joint in (text.rfind("/", 0, room), text.rfind("_", 0, room)):
        if joint >= room // 3:
            return text[: joint + 1] + ELLIPSIS
    return text[:room] + ELLIPSIS


def short_run_names(names: list[str], width: int) -> dict[str, str]:
    """Distinct short labels for runs shown together (a chart legend).

    TRL runs are ``<output_dir>/runs/<timestamp>``: the first segment tells runs of different
    output directories apart, the last one restarts within one directory. The first of those that
    is unique wins; otherwise the names are shortened as they are.
    """
    for pick in (lambda parts: parts[0], lambda parts: parts[-1]):
        labels = {name: pick(name.split("/")) for name in names}
        if len(set(labels.values())) == len(names):
            return {name: elide_name(label, width) for name, label in labels.items()}
    return {name: elide_name(name, width) for name in names}
