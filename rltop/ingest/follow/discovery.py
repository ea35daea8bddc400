"""Find the runs under the paths a user gives, and the kind of source each is read from.

A path is a local path or an fsspec URL (`rltop.ingest.storage`); every file under it that a
source kind claims (`rltop.ingest.sources`: event files, trainer_state.json…; by its name, and by
its first bytes for kinds of common names such as veRL's ``train.log``) belongs to the run
its kind names (for event files the directory holding them; for trainer_state.json the
``output_dir`` above ``checkpoint-N/``). A run's name is its directory relative to the root it was
found under (with several roots, the root's own name comes first, with as many parent directories
as it takes to keep names unique), in its display form: a byte that is not UTF-8 shows as
``\\xNN`` (`display_name`); the directory keeps the raw path, to open files.

A training ``output_dir`` with sources of several kinds (event files *and* checkpoints) is read
from the best kind only (the highest rank: event files hold every logged point with its wall time),
and its runs say so (`RunSource.note`). Files of one run are in their kind's reading order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rltop.ingest import sources, storage
from rltop.ingest.reading import SourceKind
from rltop.model.names import display_name


class DiscoveryError(ValueError):
    """A path the user gave cannot be used at all (missing, unreadable)."""


@dataclass
class RunSource:
    """One run directory, the kind of source it is read from, and its files in reading order."""

    name: str
    directory: str
    files: list[str] = field(default_factory=list)
    kind: str = sources.DEFAULT  # a `rltop.ingest.sources.KINDS` key
    note: str = ""  # what it is read from, and why when there was a choice ("trainer_state.json also…")
    label: str = ""  # the same in a few words, for the dashboard's header


@dataclass
class Discovery:
    """The runs found, plus warnings about what was skipped and where rltop looked."""

    runs: list[RunSource] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    roots: list[str] = field(default_factory=list)
    # Run directories left out because their output_dir has a better kind of source -> its label.
    superseded: dict[str, str] = field(default_factory=dict)


def compile_filter(pattern: str | None, what: str) -> re.Pattern[str] | None:
    """Compile a user regex (``--tags``/``--runs``); ValueError names the option on bad syntax."""
    if pattern is None:
        return None
    try:
        return re.compile(pattern)
    except re.error as error:
        raise ValueError(f"invalid {what} regex {pattern!r}: {error}") from None


def is_gone(path: str) -> bool:
    """True only when ``path`` does not exist: a permission error (EACCES) is not a deletion."""
    return storage.is_gone(path)


def check_paths(paths: list[str]) -> None:
    """Raise `DiscoveryError` for a path that does not exist or cannot be read.

    A URL whose package is missing raises `rltop.ingest.storage.MissingBackend` (one line naming
    the extra to install); a store that does not answer is a DiscoveryError too (one line, exit 2).
    """
    for path in paths:
        try:
            storage.check(path)
        except FileNotFoundError:
            raise DiscoveryError(f"{path}: no such file or directory") from None
        except PermissionError:
            raise DiscoveryError(f"{path}: permission denied") from None
        except storage.Unreachable as error:
            raise DiscoveryError(f"{path}: cannot reach the storage: {error}") from None
        # A path that is itself a kind's folder or file (./wandb, a run folder, a .wandb file) needs
        # that kind's reader: say what to install before anything else. Deeper in a tree, beside
        # event files of the same training, the other kind may not even be read.
        require_readers(path, [storage.name(storage.absolute(path))])


def require_readers(path: str, names: list[str]) -> None:
    """`rltop.ingest.storage.MissingBackend` (one line naming the extra) when ``names`` hold files of a
    kind whose reader needs a package that is not installed (W&B run files without wandb)."""
    for kind in sources.KINDS.values():
        if any(kind.marks(name) for name in names):
            missing = kind.requirement()
            if missing is not None:
                raise storage.MissingBackend(f"{path}: {missing}")


def discover(paths: list[str], missing_ok: bool = False, labels: list[str] | None = None) -> Discovery:
    """Find every run under ``paths`` (directories, run directories or single source files).

    A path that does not exist raises `DiscoveryError`, unless ``missing_ok`` (the live watcher
    re-discovering while a root is deleted and re-created): then it is a problem line. ``labels``:
    the name prefix of each root (default: `root_labels` of ``paths``). A store that stops
    answering raises `rltop.ingest.storage.Unreachable`.
    """
    if not missing_ok:
        check_paths(paths)
    result = Discovery(roots=[storage.absolute(p) for p in paths])
    found: dict[tuple[str, str], RunSource] = {}  # (kind, run directory) -> its source
    for path, label in zip(paths, root_labels(paths) if labels is None else labels):
        what = storage.kind(path)
        if what == "file":
            _add_single_file(path, label, found, result)
        elif what == "directory":
            _walk(path, label, found, result)
        elif not storage.is_gone(path):
            result.problems.append(f"{path}: permission denied; waiting for access")
        elif storage.is_url(path):
            continue  # an empty prefix of an object store: nothing was written there yet
        else:
            result.problems.append(f"{path}: no such file or directory (deleted?); waiting for it")
    result.runs = _prefer_best_kind(list(found.values()), result)
    for run in result.runs:
        run.files.sort(key=sources.kind(run.kind).order)
    result.runs.sort(key=lambda r: r.name)
    return result


def root_labels(paths: list[str]) -> list[str]:
    """Name prefixes for the roots: none for one root, else each root's shortest distinct tail.

    ``/x/a/logs`` and ``/x/b/logs`` become ``a/logs`` and ``b/logs``, so two roots with the same
    base name never merge their runs.
    """
    if len(paths) < 2:
        return [""] * len(paths)
    parts = [storage.parts(p) for p in paths]
    for depth in range(1, max(len(p) for p in parts) + 1):
        labels = ["/".join(p[-depth:]) or "/" for p in parts]
        if len(set(labels)) == len(set(map(tuple, parts))):
            return labels
    return ["/".join(p) or "/" for p in parts]


def _join_name(label: str, relative: str) -> str:
    relative = "" if relative == "." else relative
    if label and relative:
        return f"{label}/{relative}"
    return label or relative


def _add_single_file(path: str, label: str, found: dict, result: Discovery) -> None:
    full = storage.absolute(path)
    claimed = sources.claim(storage.name(path))
    kind = sources.recognise(full) if claimed is not None else None
    if claimed is not None and kind is None:
        result.problems.append(
            f"{path}: not one of the {claimed.label} (its first bytes do not look like one, or nothing "
            "is logged yet); skipped"
        )
        return
    if kind is not None and kind.members is not None:
        problems = len(result.problems)
        members = _members(kind, full, result)
        if not members and len(result.problems) == problems:
            result.problems.append(
                f"{path}: no run in it (not one of the {kind.label}, or none logged yet); skipped"
            )
        for member, directory in members:
            relative = storage.relative(directory, storage.parent(full))  # <project>/<run name>
            _source(found, kind, directory, display_name(_join_name(label, relative))).files.append(member)
        return
    if kind is None:
        result.problems.append(
            f"{path}: not a TensorBoard event file nor another file rltop reads "
            f"({sources.what_is_read()}); skipped"
        )
        return
    directory = kind.run_directory(full)
    name = display_name(label or storage.name(directory))
    _source(found, kind, directory, name).files.append(full)


def _members(kind: SourceKind, full: str, result: Discovery) -> list[tuple[str, str]]:
    """The runs in a file holding several (`SourceKind.members`). A file whose runs cannot be
    listed (a damaged or locked trackio database) is one problem line naming it: the other files
    are still listed."""
    try:
        return kind.members(full)  # type: ignore[misc]
    except (storage.Unreachable, storage.MissingBackend):
        raise  # about every path of that storage: `discover` says so once
    except Exception as error:  # one unreadable file never hides the runs of the others
        why = str(error) if isinstance(error, (ValueError, OSError)) else f"{type(error).__name__}: {error}"
        result.problems.append(f"{full}: {why}")
        return []


def _source(found: dict, kind: SourceKind, directory: str, name: str) -> RunSource:
    key = (kind.name, directory)
    source = found.get(key)
    if source is None:
        source = found[key] = RunSource(name=name, directory=directory, kind=kind.name)
    return source


def _walk(root: str, label: str, found: dict, result: Discovery) -> None:
    root_abs = storage.absolute(root)
    for directory, names in storage.walk(root_abs, result.problems.append):
        for file_name in names:
            if sources.claim(file_name) is None:
                continue
            full = storage.join(directory, file_name)
            if not storage.is_url(full) and storage.kind(full) != "file":
                continue  # a directory or a dangling symlink with a source's name
            kind = sources.recognise(full)  # kinds of common names (train.log) look inside
            if kind is None:
                continue
            run_directory = kind.run_directory(full)
            relative = storage.relative(run_directory, root_abs)
            if relative == ".." or relative.startswith("../"):
                relative = storage.name(run_directory)  # a checkpoint folder given as the root
            if kind.members is None:
                name = display_name(_join_name(label, relative) or storage.name(root_abs))
                _source(found, kind, run_directory, name).files.append(full)
                continue
            for member, member_directory in _members(kind, full, result):  # a file holding several runs
                name = display_name(_join_name(label, storage.relative(member_directory, root_abs)))
                _source(found, kind, member_directory, name).files.append(member)


def _prefer_best_kind(runs: list[RunSource], result: Discovery) -> list[RunSource]:
    """Keep, per training output_dir, only the runs of its best kind; the kept ones say why.

    Kinds of equal rank (W&B run files and trackio databases: both hold every logged point) are
    all kept: neither hides the other's runs.
    """
    by_output: dict[str, list[RunSource]] = {}
    for run in runs:
        by_output.setdefault(sources.kind(run.kind).output_dir(run.directory), []).append(run)
    kept: list[RunSource] = []
    for group in by_output.values():
        kinds = {run.kind: sources.kind(run.kind) for run in group}
        top = max(k.rank for k in kinds.values())
        best = [k for k in kinds.values() if k.rank == top]
        dropped = [k for k in kinds.values() if k.rank < top]
        described = {k.name: sources.describe(k, dropped) for k in best}
        for run in group:
            if run.kind in described:
                run.note, run.label = described[run.kind]
                kept.append(run)
            else:
                result.superseded[run.directory] = best[0].label
    return kept
