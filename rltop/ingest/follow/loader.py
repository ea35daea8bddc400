"""One-shot loads (``rltop export``, ``rltop snapshot``): discover runs, read them whole, fill a Store.

The store is filled through the change feed's `apply_batch`, exactly as a live consumer fills its
own, so a load and a live tail of the same files give the same store.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from rltop.ingest import sources, storage
from rltop.ingest.feed import ChangeBatch, Changes, apply_batch, apply_completions
from rltop.ingest.follow.discovery import Discovery, DiscoveryError, RunSource, compile_filter, discover
from rltop.ingest.follow.runfiles import RunFiles, reading_failed
from rltop.ingest.follow.sessions import SessionGrouper, group_sources
from rltop.ingest.sources.completions import CompletionsFollower, folder_of
from rltop.model.run import Run, Store

REMOTE_CONCURRENCY = 16  # remote runs read at once by a one-shot load (requests in flight)


@dataclass
class LoadResult:
    """A loaded store plus everything worth telling the user about the load."""

    store: Store
    discovery: Discovery
    problems: list[str] = field(default_factory=list)


def read_run(
    files: RunFiles,
    store: Store,
    problems: list[str],
    tag_filter: re.Pattern[str] | None = None,
) -> Changes:
    """Read everything new in every file of one run into ``store``; return what changed."""
    changes: Changes = []
    for path in files.paths:
        # One batch per file: each tag's points of all its windows reach its series in one append
        # (no doubling and compacting of the columns, one pass of the feed per tag).
        batch = ChangeBatch()
        grew = False
        seen: float | None = None  # the file's mtime as its reader saw it
        while True:
            read = files.read(path)
            problems.extend(read.problems)
            batch.add_decoded(files.name, files.directory, read.result.decoded, tag_filter, path)
            grew = grew or bool(read.result.bytes_read)
            seen = read.result.mtime or seen
            if not read.more:
                break
        if grew:
            mtime = seen if seen is not None else storage.mtime(path)
            if mtime is not None:
                batch.change_times[files.name] = mtime
        else:
            batch.changed_runs.pop(files.name, None)  # nothing new: keep the old change time
        if not batch.is_empty():
            changes.extend(apply_batch(store, batch, consume=True))
        tail = files.unfinished(path)  # a one-shot load says what the end of the file hides
        if tail is not None:
            problems.append(tail)
    return changes


def load(
    paths: list[str],
    tags: str | None = None,
    runs: str | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> LoadResult:
    """Discover and fully read every run under ``paths`` (raises DiscoveryError, ValueError).

    A store that stops answering midway (`rltop.ingest.storage.Unreachable`) is a DiscoveryError:
    a one-shot load does not wait for it.
    """
    tag_filter = compile_filter(tags, "--tags")
    run_filter = compile_filter(runs, "--runs")
    try:
        return _load(paths, tag_filter, run_filter, on_progress)
    except storage.Unreachable as error:
        raise DiscoveryError(f"{', '.join(paths)}: cannot reach the storage: {error}") from None


def _load(
    paths: list[str],
    tag_filter: re.Pattern[str] | None,
    run_filter: re.Pattern[str] | None,
    on_progress: Callable[[int], None] | None,
) -> LoadResult:
    """`load` once the filters are compiled."""
    found = discover(paths)
    for kind in {source.kind for source in found.runs}:
        missing = sources.kind(kind).requirement()  # a one-shot load cannot read these runs at all
        if missing is not None:
            raise storage.MissingBackend(missing)
    found.runs = group_sources(found.runs, SessionGrouper())
    result = LoadResult(store=Store(), discovery=found, problems=list(found.problems))
    chosen = [s for s in found.runs if run_filter is None or run_filter.search(s.name)]
    read = functools.partial(_read_source, tag_filter=tag_filter)
    if len(chosen) > 1 and any(storage.is_remote(source.directory) for source in chosen):
        # Remote runs cost requests, not CPU: several in flight at once, so 1,000 runs on S3 take
        # about what their decoding takes, not 1,000 times a few round trips. Local runs are read
        # one by one (threads would only share the one core the decoding needs).
        with ThreadPoolExecutor(REMOTE_CONCURRENCY, thread_name_prefix="rltop-load") as pool:
            _collect(result, pool.map(read, chosen), on_progress)
    else:
        _collect(result, map(read, chosen), on_progress)
    return result


def _collect(result: LoadResult, loaded: Iterable[tuple[Run, list[str]]],
             on_progress: Callable[[int], None] | None) -> None:  # fmt: skip
    """Put each run read into the result's store, in discovery order, with its problems."""
    for run, problems in loaded:
        result.store.runs[run.name] = run
        result.problems.extend(problems)
        if on_progress is not None:
            on_progress(run.scalar_count())


def _read_source(source: RunSource, tag_filter: re.Pattern[str] | None) -> tuple[Run, list[str]]:
    """One run read whole into a store of its own, and what there is to say about it.

    Only `rltop.ingest.storage.Unreachable` propagates: anything else one run raises is said, and
    costs that run only.
    """
    store, problems = Store(), []
    run = store.run(source.name, source.directory)
    run.source, run.source_note, run.source_label = source.kind, source.note, source.label
    run.quiet_hint = sources.kind(source.kind).quiet_hint
    try:
        files = RunFiles(source.name, source.directory, source.files, source.kind)
        read_run(files, store, problems, tag_filter)
        load_completions(run, source.kind, problems)
    except storage.Unreachable:
        raise
    except Exception as error:  # one run failing never costs the other runs
        problems.append(reading_failed(source.directory, error))
    for series in run.series.values():
        series.compact()  # a one-shot load will not grow: no slack
    return run, problems


def load_completions(run: Run, kind: str, problems: list[str]) -> None:
    """Index the completions folder of the run's output_dir once (a one-shot load)."""
    update = CompletionsFollower(folder_of(sources.kind(kind).output_dir(run.directory))).scan(final=True)
    problems.extend(update.problems)
    apply_completions(run, update)
