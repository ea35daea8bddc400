"""Find the runs under the paths a user gives: a run is a directory that directly holds event files.

A run's name is its directory relative to the root it was found under (with several roots, the
root's own name comes first, with as many parent directories as it takes to keep names unique), in
its display form: a byte that is not UTF-8 shows as ``\\xNN`` (`display_name`); the directory keeps
the raw path, to open files.
Files of one run are read in the order of the timestamp in their names (restarts and several
writers), which is the order they were started.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from rltop.model.names import display_name

EVENT_PREFIX = "events.out.tfevents."
_TIMESTAMP = re.compile(r"^events\.out\.tfevents\.(\d+(?:\.\d+)?)")


class DiscoveryError(ValueError):
    """A path the user gave cannot be used at all (missing, unreadable)."""


@dataclass
class RunSource:
    """One run directory and its event files in reading order."""

    name: str
    directory: str
    files: list[str] = field(default_factory=list)


@dataclass
class Discovery:
    """The runs found, plus warnings about what was skipped and where rltop looked."""

    runs: list[RunSource] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    roots: list[str] = field(default_factory=list)


def compile_filter(pattern: str | None, what: str) -> re.Pattern[str] | None:
    """Compile a user regex (``--tags``/``--runs``); ValueError names the option on bad syntax."""
    if pattern is None:
        return None
    try:
        return re.compile(pattern)
    except re.error as error:
        raise ValueError(f"invalid {what} regex {pattern!r}: {error}") from None


def is_event_file(name: str) -> bool:
    """True for TensorBoard event file names (``events.out.tfevents.<time>.<host>...``)."""
    return name.startswith(EVENT_PREFIX) and not name.endswith((".tmp", ".swp", "~"))


def event_file_order(name: str) -> tuple[float, str]:
    """Sort key: the writer's start time from the file name, then the name itself."""
    match = _TIMESTAMP.match(name)
    return (float(match.group(1)) if match else float("inf"), name)


def is_gone(path: str) -> bool:
    """True only when ``path`` does not exist: a permission error (EACCES) is not a deletion."""
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return True
    except OSError:
        return False
    return False


def check_paths(paths: list[str]) -> None:
    """Raise `DiscoveryError` for a path that does not exist or cannot be read."""
    for path in paths:
        if not os.path.exists(path):
            raise DiscoveryError(f"{path}: no such file or directory")
        if not os.access(path, os.R_OK) or (os.path.isdir(path) and not os.access(path, os.X_OK)):
            raise DiscoveryError(f"{path}: permission denied")


def discover(paths: list[str], missing_ok: bool = False) -> Discovery:
    """Find every run under ``paths`` (directories, run directories or single event files).

    A path that does not exist raises `DiscoveryError`, unless ``missing_ok`` (the live watcher
    re-discovering while a root is deleted and re-created): then it is a problem line.
    """
    if not missing_ok:
        check_paths(paths)
    result = Discovery(roots=[os.path.abspath(p) for p in paths])
    runs: dict[str, RunSource] = {}
    labels = _root_labels(paths)
    for path, label in zip(paths, labels):
        if os.path.isfile(path):
            _add_single_file(path, label, runs, result)
        elif os.path.isdir(path):
            _walk(path, label, runs, result)
        elif not is_gone(path):
            result.problems.append(f"{path}: permission denied; waiting for access")
        else:
            result.problems.append(f"{path}: no such file or directory (deleted?); waiting for it")
    for run in runs.values():
        run.files.sort(key=lambda f: event_file_order(os.path.basename(f)))
    result.runs = sorted(runs.values(), key=lambda r: r.name)
    return result


def _root_labels(paths: list[str]) -> list[str]:
    """Name prefixes for the roots: none for one root, else each root's shortest distinct tail.

    ``/x/a/logs`` and ``/x/b/logs`` become ``a/logs`` and ``b/logs``, so two roots with the same
    base name never merge their runs.
    """
    if len(paths) < 2:
        return [""] * len(paths)
    parts = [os.path.normpath(os.path.abspath(p)).strip(os.sep).split(os.sep) for p in paths]
    for depth in range(1, max(len(p) for p in parts) + 1):
        labels = ["/".join(p[-depth:]) or "/" for p in parts]
        if len(set(labels)) == len(set(map(tuple, parts))):
            return labels
    return ["/".join(p) or "/" for p in parts]


def _join_name(label: str, relative: str) -> str:
    relative = "" if relative == "." else relative.replace(os.sep, "/")
    if label and relative:
        return f"{label}/{relative}"
    return label or relative


def _add_single_file(path: str, label: str, runs: dict[str, RunSource], result: Discovery) -> None:
    if not is_event_file(os.path.basename(path)):
        result.problems.append(f"{path}: not a TensorBoard event file (events.out.tfevents.*); skipped")
        return
    directory = os.path.dirname(os.path.abspath(path))
    name = display_name(label or os.path.basename(directory))
    run = runs.setdefault(directory, RunSource(name=name, directory=directory))
    run.files.append(os.path.abspath(path))


def _walk(root: str, label: str, runs: dict[str, RunSource], result: Discovery) -> None:
    root_abs = os.path.abspath(root)
    seen: set[tuple[int, int]] = set()

    def on_error(error: OSError) -> None:
        result.problems.append(f"{error.filename}: cannot list directory ({error.strerror}); skipped")

    for directory, subdirs, files in os.walk(root_abs, onerror=on_error, followlinks=True):
        try:
            stat = os.stat(directory)
        except OSError:
            subdirs[:] = []
            continue
        key = (stat.st_dev, stat.st_ino)
        if key in seen:
            result.problems.append(f"{directory}: symlink loop or repeated directory; skipped")
            subdirs[:] = []
            continue
        seen.add(key)
        subdirs.sort()
        events = [f for f in files if is_event_file(f)]
        if not events:
            continue
        relative = os.path.relpath(directory, root_abs)
        name = display_name(_join_name(label, relative) or os.path.basename(root_abs))
        run = runs.setdefault(directory, RunSource(name=name, directory=directory))
        for file in events:
            full = os.path.join(directory, file)
            if os.path.isfile(full):
                run.files.append(full)
