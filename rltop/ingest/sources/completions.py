"""The completions source: TRL's ``<output_dir>/completions/completions_NNNNN.parquet`` files.

TRL 1.16 with ``log_completions=True`` writes, on rank 0, one parquet file per logging step:
columns ``step`` (int64), ``prompt``, ``completion`` (strings), one float column per reward
function (named after it), the columns of reward functions' ``log_extra`` and ``advantage``; one
row per completion of the generation batch. With ``num_iterations > 1`` the file of a step that
did not generate repeats the previous generation's rows under the new step; the final log
rewrites the last file. None of it reaches TensorBoard.

A `CompletionsFollower` lists one run's folder and summarises each new or rewritten file into a
`rltop.model.completions.StepSummary` (read once, then dropped: only the index stays in memory);
`read_step` reads one file's rows when a screen or a command asks. pyarrow is optional (the
``rltop[completions]`` extra; TRL installs it through ``datasets``): it is imported only once a
file is read, and without it the follower says once what to install. Files are read through
`rltop.ingest.storage`, so completions under an ``s3://`` output_dir work too. A file still being
written (no parquet footer yet) is tried again when it changes; one that stays unreadable is
reported once.
"""

from __future__ import annotations

import hashlib
import math
import re
import time
from array import array
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from rltop.ingest import storage
from rltop.model.completions import (
    TOP_TEXT_CHARS,
    Completion,
    StepCompletions,
    StepSummary,
    correctness_column,
    distinct_bigrams,
    filled_by_repeat,
)

FOLDER = "completions"
FILE_NAME = re.compile(r"^completions_(\d+)\.parquet$")
INSTALL_HINT = "pip install 'rltop[completions]' (pyarrow) to read them"
SETTLE = 10.0  # seconds after its last change an unreadable file is reported (before: being written)
MIN_SCAN = 1.0  # a follower lists its folder at most this often (seconds)
NOT_REWARDS = frozenset({"step", "advantage"})


class MissingPyarrow(ImportError):
    """pyarrow is not installed: completions cannot be read."""


def missing_message(where: str) -> str:
    """The one line said when completions exist but pyarrow is missing."""
    return f"{where}: TRL completions found; {INSTALL_HINT}"


def _pyarrow():
    """(pyarrow, pyarrow.parquet), imported on first use (MissingPyarrow without them)."""
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise MissingPyarrow(INSTALL_HINT) from None
    return pyarrow, pyarrow.parquet


def folder_of(output_dir: str) -> str:
    """The completions folder of a training ``output_dir``."""
    return storage.join(output_dir, FOLDER)


def is_completions_file(name: str) -> bool:
    """True for TRL's ``completions_NNNNN.parquet`` names (native file events ask it: cheap)."""
    return name.startswith("completions_") and FILE_NAME.match(name) is not None


def file_step(name: str) -> int | None:
    """``completions_00042.parquet`` -> 42; None for other names."""
    found = FILE_NAME.match(name)
    return int(found.group(1)) if found else None


@dataclass
class CompletionsUpdate:
    """What one scan of a completions folder found."""

    added: list[StepSummary] = field(default_factory=list)  # new or rewritten steps
    removed: list[int] = field(default_factory=list)  # steps whose file was deleted
    problems: list[str] = field(default_factory=list)
    note: str | None = None  # the index's note changed to this ("" clears it)

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.problems or self.note is not None)


class CompletionsFollower:
    """Follows the completions folder of one run: each scan returns what changed since the last."""

    def __init__(self, directory: str, clock=time.monotonic) -> None:
        self.directory = directory
        self.clock = clock
        self._versions: dict[str, object] = {}  # path -> version summarised (or reported)
        self._steps: dict[str, int] = {}  # path -> its step, for the files summarised
        self._said_missing = False
        self._last_scan: float | None = None
        self._listing_problems: set[str] = set()  # said once, until the folder lists again

    def reset(self) -> None:
        """Forget what was read: the next scan reports every file again (the run was reloaded)."""
        self._versions.clear()
        self._steps.clear()
        self._said_missing = False
        self._last_scan = None

    def due(self) -> bool:
        """True when the folder may be listed again (at most every `MIN_SCAN` seconds)."""
        return self._last_scan is None or self.clock() - self._last_scan >= MIN_SCAN

    def scan(self, final: bool = False) -> CompletionsUpdate:
        """List the folder; summarise new and rewritten files; say which ones were deleted.

        ``final``: nothing will be read again (a one-shot load), so an unreadable file is said
        even when it changed just now (live, it may still be being written: it waits `SETTLE`).
        """
        self._last_scan = self.clock()
        update = CompletionsUpdate()
        listed = self._list(update)
        if listed is None:  # there but unreadable (chmod, a flaky mount): keep the index as it is
            return update
        for path in [p for p in self._steps if p not in listed]:
            update.removed.append(self._steps.pop(path))
        for path in [p for p in self._versions if p not in listed]:
            del self._versions[path]
        if not listed:
            return update
        for path, (step, info) in sorted(listed.items(), key=lambda item: item[1][0]):
            if self._versions.get(path) == info.version:
                continue
            try:
                summary = summarise(path, step, info)
            except MissingPyarrow:
                if not self._said_missing:
                    self._said_missing = True
                    update.note = missing_message(storage.display(self.directory))
                    update.problems.append(update.note)
                return update
            except storage.Unreachable:
                raise
            except Exception as error:  # a torn, truncated or foreign file: never a crash
                settled = time.time() - info.mtime >= SETTLE
                if settled or final:
                    self._versions[path] = info.version
                    still = "" if settled else "; still being written?"
                    update.problems.append(
                        f"{storage.display(path)}: not a readable parquet file ({error}){still}; skipped"
                    )
                continue
            self._versions[path] = info.version
            self._steps[path] = step
            update.added.append(summary)
        return update

    def _list(self, update: CompletionsUpdate) -> dict[str, tuple[int, storage.FileStat]] | None:
        """path -> (step, stat) of every completions file in the folder (empty when there is none).

        None when the folder exists but cannot be listed: only a folder that is gone empties the
        index (a permission error is not a deletion); the problem is said once.
        """
        what = storage.kind(self.directory)
        if what != "directory":
            # Nothing there on an object store is simply no folder (asking again costs a request per
            # run); on disk a permission error reads as nothing too, so ask whether it is gone.
            gone = what is None and storage.is_remote(self.directory)
            return {} if gone or storage.is_gone(self.directory) else None
        problems: list[str] = []
        listed: dict[str, tuple[int, storage.FileStat]] = {}
        for directory, names in storage.walk(self.directory, problems.append):
            if directory.rstrip("/") != storage.absolute(self.directory).rstrip("/"):
                continue  # only the folder itself: TRL writes no subfolders
            for name in names:
                step = file_step(name)
                if step is None:
                    continue
                path = storage.join(directory, name)
                try:
                    listed[path] = (step, storage.stat(path))
                except FileNotFoundError:
                    continue  # deleted between the listing and the stat
            break
        if problems:
            update.problems.extend(p for p in problems if p not in self._listing_problems)
            self._listing_problems = set(problems)
            return None
        self._listing_problems = set()
        return listed


def _read_table(path: str):
    """The parquet table of ``path`` (read through the storage backends)."""
    pa, pq = _pyarrow()
    with storage.open_file(path) as handle:
        data = handle.read(0, handle.stat().size)
    return pq.ParquetFile(pa.BufferReader(data)).read()


def _column_values(column) -> list[Any]:
    """A column as Python values; text that is not UTF-8 is decoded with U+FFFD replacements."""
    pa, _ = _pyarrow()
    kind = column.type
    if pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
        return [None if v is None else v.decode("utf-8", "replace") for v in column.to_pylist()]
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        try:
            return column.to_pylist()
        except UnicodeDecodeError:  # a writer that skipped validation
            raw = column.cast(pa.large_binary() if pa.types.is_large_string(kind) else pa.binary())
            return [None if v is None else v.decode("utf-8", "replace") for v in raw.to_pylist()]
    return column.to_pylist()


def _columns(table) -> dict[str, list[Any]]:
    return {name: _column_values(table.column(name)) for name in table.column_names}


def reward_columns(table) -> tuple[str, ...]:
    """The reward columns: float columns other than ``advantage`` (``log_extra`` ints are not)."""
    pa, _ = _pyarrow()
    return tuple(f.name for f in table.schema if pa.types.is_floating(f.type) and f.name not in NOT_REWARDS)


def _mean(values: list[Any]) -> float | None:
    finite = [float(v) for v in values if isinstance(v, (int, float)) and math.isfinite(v)]
    return sum(finite) / len(finite) if finite else None


def group_of(prompts: list[Any]) -> list[int]:
    """The group index of each row: rows sharing a prompt are one group, numbered by first row."""
    numbers: dict[Any, int] = {}
    return [numbers.setdefault(p, len(numbers)) for p in prompts]


def summarise(path: str, step: int, info: storage.FileStat) -> StepSummary:
    """Read one completions file and keep its summary (the rows are dropped)."""
    table = _read_table(path)
    columns = _columns(table)
    rows = table.num_rows
    prompts = columns.get("prompt", [None] * rows)
    texts = ["" if c is None else str(c) for c in columns.get("completion", [None] * rows)]
    groups = group_of(prompts)
    identical, group_size = 0, 0
    by_group: dict[int, Counter] = {}
    for group, text in zip(groups, texts):
        by_group.setdefault(group, Counter())[text] += 1
    for counts in by_group.values():
        group_size = max(group_size, sum(counts.values()))
        largest = max(counts.values())
        if largest > 1:
            identical += largest
    top_text, top_count = Counter(texts).most_common(1)[0] if texts else ("", 0)
    lengths = [len(t) for t in texts]
    digest = hashlib.blake2b(digest_size=16)
    for prompt, text in zip(prompts, texts):
        digest.update(repr((prompt, text)).encode("utf-8", "surrogatepass"))
    rewards = {name: columns[name] for name in reward_columns(table)}
    return StepSummary(
        step=step, path=path, rows=rows, version=info.version,
        rewards=tuple((name, m) for name, values in rewards.items() if (m := _mean(values)) is not None),
        advantage_mean=_mean(columns.get("advantage", [])),
        length_mean=sum(lengths) / rows if rows else 0.0, length_max=max(lengths, default=0),
        groups=len(by_group), group_size=group_size, identical=identical,
        top_text=top_text[:TOP_TEXT_CHARS], top_count=top_count, top_cut=len(top_text) > TOP_TEXT_CHARS,
        digest=digest.digest(), lengths=array("I", sorted(lengths)).tobytes(),
        diversity=distinct_bigrams(texts),
        **_degeneracy(texts, groups, top_text), **_right_and_wrong(texts, rewards),
    )  # fmt: skip


def _degeneracy(texts: list[str], groups: list[int], top_text: str) -> dict[str, Any]:
    """The fields of a step's summary about degenerate text: empty and repetitive completions, and
    in how many prompt groups the most frequent completion appears."""
    repetitive = Counter(text for text in texts if filled_by_repeat(text))
    example = repetitive.most_common(1)[0][0] if repetitive else ""
    return {
        "empty": sum(1 for text in texts if not text.strip()),
        "repetitive": sum(repetitive.values()),
        "repetitive_text": example[:TOP_TEXT_CHARS],
        "top_groups": len({group for group, text in zip(groups, texts) if text == top_text}),
    }


def _right_and_wrong(texts: list[str], rewards: dict[str, list[Any]]) -> dict[str, Any]:
    """Lengths of the right and of the wrong completions, by the step's correctness reward (none: {})."""
    column = correctness_column(rewards)
    if not column:
        return {}
    scores = [float(v) if isinstance(v, (int, float)) and math.isfinite(v) else None for v in rewards[column]]
    known = [v for v in scores if v is not None]
    if not known:
        return {}
    low, high = min(known), max(known)
    right = [len(t) for t, v in zip(texts, scores) if v is not None and v == high and high > low]
    # One value only: all wrong when it is the bottom of a 0/1 (or -1/1) reward, else nothing is wrong.
    scored_wrong = high > low or low <= 0
    wrong_texts = [t for t, v in zip(texts, scores) if v is not None and v == low and scored_wrong]
    wrong = [len(t) for t in wrong_texts]
    return {
        "correctness": column,
        "right": len(right),
        "wrong": len(wrong),
        "right_length_mean": sum(right) / len(right) if right else None,
        "wrong_length_mean": sum(wrong) / len(wrong) if wrong else None,
        "wrong_text": max(wrong_texts, key=len, default="")[:TOP_TEXT_CHARS],
    }


def read_step(summary: StepSummary, cap: int | None = None) -> StepCompletions:
    """The rows of one step, read from its file now (``cap``: max_completion_length, when known).

    Never raises for a bad file: the problem is in ``StepCompletions.problem``; without pyarrow
    the problem is the install hint.
    """
    try:
        table = _read_table(summary.path)
    except MissingPyarrow:
        return StepCompletions(summary, problem=missing_message(storage.display(summary.path)))
    except Exception as error:  # deleted or rewritten meanwhile, torn: say it, do not crash
        return StepCompletions(summary, problem=f"{storage.display(summary.path)}: cannot read ({error})")
    columns = _columns(table)
    names = list(table.column_names)
    rewards = reward_columns(table)
    prompts = columns.get("prompt", [None] * table.num_rows)
    groups = group_of(prompts)
    rows = []
    for index in range(table.num_rows):
        values = {name: columns[name][index] for name in names}
        rows.append(Completion(values=values, rewards=rewards, group=groups[index]))
    counts = Counter((row.group, row.completion) for row in rows)
    for row in rows:
        row.twins = counts[(row.group, row.completion)]
        row.length = len(row.completion)
        row.at_cap = None if cap is None else row.length >= cap
    return StepCompletions(summary, rows=rows, columns=names)
