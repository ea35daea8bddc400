"""Display names: what a run or a metric is called on every screen and in every report.

Both keep what tells things apart and drop what they share:

- A run is named by the name its tracker gave it (a W&B run name), else after its experiment
  folder. The parts of the path that every run shares (common prefix and suffix) go, and so do
  TRL's ``runs/`` folder and the ``<Mon>DD_HH-MM-SS_<host>`` session folders that transformers
  creates, unless two runs would then collide (two sessions of one ``output_dir``): only those keep
  their session. A lone folder name such as ``seed_1`` or ``logs`` keeps its parent
  (``grpo_seeds/seed_1``).
- A metric is named after its tag without ``train/`` (`metric_names`); where a column is narrow,
  the label drops segments from the outside in, keeping the part no other metric has
  (`metric_labels`: ``rewards/length_reward/mean`` -> ``length_reward/mean``), is never cut inside
  a word, and a reward function's name is never cut at all.
"""

from __future__ import annotations

import os
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from rltop.model.catalog import SPLITS, describe
from rltop.model.names import display_name as path_text
from rltop.view.text.cells import cell_len
from rltop.view.text.fit import elisions, pick_distinct

if TYPE_CHECKING:  # the dashboard's first frame imports this module: numpy must not come with it
    from rltop.model.run import Store

# transformers' TrainingArguments.logging_dir: runs/<%b%d_%H-%M-%S>_<hostname>
_TRANSFORMERS_SESSION = re.compile(r"^(?P<when>[A-Z][a-z]{2}\d{2}_\d{2}-\d{2}-\d{2})(?P<host>_.+)?$")
# Other timestamped folders: 2024-11-29_21-47-47, 20241129-214747 (Keras), 2024-11-29T21:47:47...
_DATED_SESSION = re.compile(r"^\d{4}-?\d{2}-?\d{2}[T_-]?\d{2}[-:]?\d{2}(?:[-:]?\d{2})?(?:[._-].*)?$")
_RUNS_FOLDER = "runs"
# Folder names that say nothing about the experiment: a lone one keeps its parent.
_GENERIC = frozenset({
    "runs", "logs", "log", "tb", "tensorboard", "tb_logs", "tblogs", "events", "summaries", "output",
    "outputs", "out", "trainer_output", "lightning_logs", "results",
})  # fmt: skip
# Folder names of one variant among several (seed_1, run_3, trial-2, 42): a lone one keeps its parent.
_VARIANT = re.compile(r"^(?:seed|run|trial|rep|replica|repeat|fold|version|v|s)?[_-]?\d+$", re.IGNORECASE)
_REWARD_FUNCTION = re.compile(r"(?:^|/)rewards/([^/]+)/")
_KEPT_SPLITS = frozenset(split for split in SPLITS if split != "train")


def metric_names(tags: Iterable[str]) -> dict[str, str]:
    """Tag -> the name tables show: the catalogue key (``train/`` dropped, ``eval/``/``test/`` kept).

    When dropping the prefix would make two names equal (``train/loss`` next to ``loss``), every
    tag of the run keeps its full name, so a table never shows the same name twice.
    """
    tags = list(tags)
    names = {}
    for tag in tags:
        info = describe(tag)
        names[tag] = info.key if info.split in ("", "train") else f"{info.split}/{info.key}"
    if len(set(names.values())) < len(names):
        return {tag: tag for tag in tags}
    return names


# -- metric labels in a narrow column ---------------------------------------------------------------


def metric_labels(names: Sequence[str], width: int) -> dict[str, str]:
    """Name -> a label of at most ``width`` cells for metrics shown together, all distinct.

    A name that fits stays whole. Otherwise the label is the longest tail of its ``/`` segments that
    fits and that no other name contains (the shared family goes first); when none fits, the
    shortest such tail, cut between words (`elisions`). A word is never cut inside, and a reward
    function's name (``rewards/<name>/mean``) is never cut at all: where nothing else fits, a label
    stays longer than ``width`` and the caller gives it a line of its own.
    """
    windows = {name: _windows(name) for name in names}
    counts = Counter(window for name in names for window in set(windows[name]))
    choices = {name: _label_choices(name, width, windows[name], counts) for name in names}
    labels = {name: options[0] for name, options in choices.items()}
    _drop_families_alike(labels, windows, counts, width)
    labels, used = pick_distinct(choices, labels)
    # Nothing distinct left (a name that is part of another one, eval/x next to x): full names then.
    return {name: label if used[label] == 1 else name for name, label in labels.items()}


def _drop_families_alike(
    labels: dict[str, str], windows: dict[str, list[str]], counts: Counter, width: int
) -> None:
    """Where one reward function's metric had to drop ``rewards/``, the other functions' metrics
    that still show it drop it too, when that keeps them distinct: one group reads alike
    (``contains_x_reward/mean`` next to ``length_reward/mean``, not ``rewards/length_reward/mean``)."""
    families: dict[str, list[str]] = defaultdict(list)
    for name in labels:
        prefix, parts = _split_prefix(name)
        if len(parts) > 1 and protected_part(name) is not None:
            families[prefix + parts[0]].append(name)
    for family, members in families.items():
        if not any(not labels[name].startswith(family + "/") for name in members):
            continue
        for name in members:
            if labels[name] != name:
                continue
            shorter = next((w for w in windows[name][1:] if counts[w] == 1), None)
            if shorter is not None and cell_len(shorter) <= width:
                labels[name] = shorter


def protected_part(name: str) -> str | None:
    """The part of a metric name that must never be cut: a reward function's name."""
    match = _REWARD_FUNCTION.search(name)
    return match.group(1) if match else None


def _split_prefix(name: str) -> tuple[str, list[str]]:
    """(``eval/`` or ``test/`` or "", the other segments): the split is part of every label."""
    parts = name.split("/")
    if len(parts) > 1 and parts[0] in _KEPT_SPLITS:
        return parts[0] + "/", parts[1:]
    return "", parts


def _windows(name: str) -> list[str]:
    """The tails of ``name`` a label may be, longest first: each ends with its last segment.

    The last segment is the metric itself (``mean_terminated_length``); the ones before it name its
    family (``completions/``), which the group title and the neighbours already say. An ``eval/``
    or ``test/`` prefix is kept in every tail.
    """
    prefix, parts = _split_prefix(name)
    return [prefix + "/".join(parts[i:]) for i in range(len(parts))]


def _label_choices(name: str, width: int, windows: list[str], counts: Counter) -> list[str]:
    """Labels for ``name`` in ``width`` cells, best first (see `metric_labels`)."""
    if cell_len(name) <= width:
        return [name]
    protected = protected_part(name)
    if protected is not None:  # a reward function's name is part of every label of its metrics
        windows = [w for w in windows if protected in w.split("/")]
    own = [w for w in windows if counts[w] == 1] or (windows if protected is not None else [])
    fitting = [w for w in own if cell_len(w) <= width]
    if fitting:
        return fitting
    chosen = min(own, key=cell_len) if own else name
    if protected is not None and protected in chosen.split("/"):
        return [chosen]
    prefix, parts = _split_prefix(chosen)
    cuts = elisions("/".join(parts), width - cell_len(prefix), cut_words=False)
    # Last: the whole tail, longer than the column (never a word cut in two): a line of its own.
    return [prefix + option for option in cuts] + [chosen]


# -- run names ----------------------------------------------------------------------------------------


def run_display_names(directories: Mapping[str, str]) -> dict[str, str]:
    """Run name -> display name, for runs shown together (``directories``: run name -> its directory).

    See the module docstring. Names are distinct: where the rules would make two equal, those runs
    keep their full run names.
    """
    # Display forms (a path that is not UTF-8 shows its bytes as \xNN): what the names are made of.
    split = {
        name: _split_session(_segments(path_text(directory or name)))
        for name, directory in directories.items()
    }
    shown = _without_shared({name: identity for name, (identity, _) in split.items()})
    by_shown: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for name, parts in shown.items():
        by_shown[tuple(parts)].append(name)
    for names in by_shown.values():
        if len(names) > 1:
            sessions = {name: split[name][1] for name in names}
            for name, label in _session_labels(sessions).items():
                shown[name] = [*shown[name], label]
    result = {name: "/".join(parts) for name, parts in shown.items()}
    counts = Counter(result.values())
    return {name: display if counts[display] == 1 else name for name, display in result.items()}


def _segments(path: str) -> list[str]:
    # Only "/" separates (a backslash is part of a name: the \xNN of a byte that is not UTF-8).
    return [part for part in os.path.normpath(path).split("/") if part not in ("", ".")]


def is_session_folder(segment: str) -> bool:
    """A timestamped folder of one training session (transformers' ``Nov29_21-47-47_vm`` and the like)."""
    return bool(_TRANSFORMERS_SESSION.match(segment) or _DATED_SESSION.match(segment))


def _split_session(parts: list[str]) -> tuple[list[str], str | None]:
    """(the experiment's segments, the session folder or None): ``out/exp/runs/Nov29_…`` -> out/exp."""
    if len(parts) < 2 or not is_session_folder(parts[-1]):
        return parts, None
    identity = parts[:-1]
    if len(identity) > 1 and identity[-1] == _RUNS_FOLDER:
        identity = identity[:-1]
    return identity, parts[-1]


def _without_shared(identities: dict[str, list[str]]) -> dict[str, list[str]]:
    """Drop the segments every run shares (prefix and suffix), keeping at least one per run."""
    paths = list(identities.values())
    if len(paths) == 1:
        ((name, parts),) = identities.items()
        return {name: _with_context(parts, len(parts) - 1)}
    shortest = min(len(p) for p in paths)
    prefix = 0
    while prefix < shortest and len({p[prefix] for p in paths}) == 1:
        prefix += 1
    suffix = 0
    while suffix < shortest - prefix and len({p[len(p) - 1 - suffix] for p in paths}) == 1:
        suffix += 1
    while True:
        cut = {name: parts[prefix : len(parts) - suffix] for name, parts in identities.items()}
        if all(cut.values()) or (prefix == 0 and suffix == 0):
            break
        if suffix:
            suffix -= 1
        else:
            prefix -= 1
    if prefix and all(_needs_context(parts[0]) for parts in cut.values() if parts):
        prefix -= 1  # seed_1, seed_2 alone say nothing: grpo_seeds/seed_1, grpo_seeds/seed_2
        cut = {name: parts[prefix : len(parts) - suffix] for name, parts in identities.items()}
    return {name: parts or identities[name][-1:] for name, parts in cut.items()}


def _needs_context(segment: str) -> bool:
    return segment.lower() in _GENERIC or bool(_VARIANT.match(segment))


def _with_context(parts: list[str], start: int) -> list[str]:
    """``parts[start:]``, extended to the left while its first segment says nothing on its own."""
    start = max(0, start)
    while start > 0 and _needs_context(parts[start]):
        start -= 1
    return parts[start:]


def _session_labels(sessions: dict[str, str | None]) -> dict[str, str]:
    """A label per run with a session folder: the folder, without the host part all of them share."""
    matches = {name: _TRANSFORMERS_SESSION.match(s) for name, s in sessions.items() if s is not None}
    hosts = {m.group("host") for m in matches.values() if m is not None}
    labels = {}
    for name, session in sessions.items():
        if session is None:
            continue
        match = matches.get(name)
        drop_host = (
            match is not None
            and len(hosts) == 1
            and len(matches) == len([s for s in sessions.values() if s is not None])
            and all(m is not None for m in matches.values())
        )
        labels[name] = match.group("when") if drop_host and match is not None else session
    return labels


def store_display_names(store: Store) -> dict[str, str]:
    """Run name -> display name of every run in ``store``: the name its tracker gave it (a W&B run
    name, `Run.title`) when it has one that its folder does not already say and no other run
    shares, else `run_display_names` of its folder."""
    names = run_display_names({name: run.directory for name, run in store.runs.items()})
    titles = {name: run.title for name, run in store.runs.items() if _own_title(run.title, run.directory)}
    if titles:
        taken = Counter([*titles.values(), *(shown for name, shown in names.items() if name not in titles)])
        names.update({name: title for name, title in titles.items() if taken[title] == 1})
    return names


def _own_title(title: str, directory: str) -> bool:
    """A tracker's name that says more than the folder: not empty, not the run's id (a W&B run without
    a name is called by its id, which its folder ``run-<date>-<id>`` already holds)."""
    return bool(title.strip()) and title not in path_text(directory)
