"""``rltop tail PATH...``: every point already written, then every new point as it lands.

One line per point, in the format of ``rltop export`` (JSON Lines by default here, so that
``rltop tail ./logs --tags val/ratio | jq`` just works; ``--format csv`` starts with the header).
Output is flushed after each batch. Runs appearing, deleted runs, damaged files and the fallback
to polling are reported on stderr, never mixed into the data. Ctrl-C or SIGTERM end it with
exit code 0; a path that does not exist is exit code 2. A directory with no event files yet is
fine: tail says once where it looks and waits for training to start.

A run that stops logging while tail follows it is said on stderr with the dashboard's words and
levels: the health engine's stall rule, read from what tail kept of each run (`rltop.live.activity`:
no points), once per level and pause.
"""

from __future__ import annotations

import argparse
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from rltop.commands.common import (
    EXIT_OK,
    EXIT_USAGE,
    add_filters,
    add_format,
    add_paths,
    add_poll,
    add_raw,
    add_rules,
    error_line,
    install_stop_signals,
    note,
    warn,
)

if TYPE_CHECKING:  # imported for real inside run(): `rltop --help` stays instant
    from rltop.ingest.feed import ChangeBatch, PointsBatch
    from rltop.live.activity import ActivityLog

NAME = "tail"
CHUNK_LINES = 8192  # lines formatted and written at a time (a stop request is checked between)
STUCK_WRITE = 0.5  # seconds a write may block (reader of the pipe paused) before a signal aborts it


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register ``tail``."""
    parser = sub.add_parser(
        NAME,
        help="print every point, then new points as training writes them",
        description="Print every scalar point already written, then each new point as it is written, "
        "one line each (keys/columns run, tag, step, wall_time, value, as in `rltop export`), until "
        "Ctrl-C. Warnings and run changes go to stderr, and so does a followed run that stops logging "
        "(the dashboard's stall rule; --rules sets it). Waits when no event file exists yet.",
    )
    add_paths(parser)
    add_format(parser, ("jsonl", "csv"))
    add_filters(parser)
    add_poll(parser)
    add_raw(parser, "names")
    add_rules(parser)
    return parser


class _Interrupted(Exception):
    """Raised by the signal handler to abandon a write that blocks (the pipe's reader paused)."""


class _Tail:
    """The main-thread side of ``rltop tail``: takes batches from the watcher and prints them."""

    def __init__(self, fmt: str, raw: bool = False, activity: ActivityLog | None = None) -> None:
        self.fmt = fmt
        self.raw = raw  # exact names (by default control characters in them are escaped)
        self.stop = threading.Event()
        self.inbox: queue.SimpleQueue = queue.SimpleQueue()  # the watcher never waits for us
        self.writing_since: float | None = None
        self.directories: dict[str, str] = {}
        """Run -> its directory, from the "new run" events: what the runs' display names are made of."""
        self._names: dict[str, str] = {}
        self.activity = activity
        """What the stall rule reads of each run (None: stalls are not said)."""
        self.live: set[str] = set()
        """Runs that grew while tail followed them: only those can stall (an old run is not news)."""

    def on_signal(self, signum: int, frame: object) -> None:
        """SIGINT/SIGTERM: stop after the current line; abandon a write that is stuck."""
        self.stop.set()
        if self.writing_since is not None and time.monotonic() - self.writing_since > STUCK_WRITE:
            raise _Interrupted

    def pump(self, alive: Callable[[], bool]) -> bool:
        """Print batches until asked to stop (True) or until the watcher died (False)."""
        while not self.stop.is_set():
            try:
                batch = self.inbox.get(timeout=0.1)
            except queue.Empty:
                if not alive():
                    return False
                self.say_stalls()
                continue
            self.show(batch)
            self.say_stalls()
        return True

    def say_stalls(self, now: float | None = None) -> None:
        """Each followed run whose stall level rose (the engine's rule), on stderr, by its display name."""
        if self.activity is None or not self.live:
            return
        from rltop.model.names import display_message

        for finding in self.activity.stalls(time.time() if now is None else now, self.live):
            warn(display_message(finding.message, "", "", finding.run, self.display_name(finding.run)))
            sys.stderr.flush()

    def show(self, batch: ChangeBatch) -> None:
        """Events on stderr, then the points on stdout, flushed."""
        from rltop.ingest.feed import APPEARED

        if self.activity is not None:
            grew = self.activity.apply(batch)
            if not batch.initial:
                self.live |= grew
        for event in batch.events:
            if event.kind == APPEARED and event.run is not None and event.directory:
                self.directories[event.run] = event.directory
                self._names = {}
            # Each kind's severity (`EventKind.severity`): a reload follows the reader's warning
            # about the file, so it is a note that the run's points come again, not a second
            # warning. Runs found by the first read are not news.
            if event.kind == APPEARED and batch.initial:
                continue
            if event.kind.severity == "warning":
                warn(event.message)
                sys.stderr.flush()
            else:
                note(event.message)
        if batch.points:
            self.write_points(batch.points)

    def display_name(self, run: str) -> str:
        """``run``'s display name among the runs seen so far (`rltop.view.names`)."""
        if not self._names:
            from rltop.view.names import run_display_names

            self._names = run_display_names(self.directories)
        return self._names.get(run, run)

    def write_points(self, batches: list[PointsBatch]) -> None:
        """Each point as one line, written in chunks (a stop request is honoured between them)."""
        from rltop.report.export import format_points

        lines: list[str] = []
        for batch in batches:
            points = batch.points
            for line in format_points(
                batch.run, batch.tag, points, points.single_precision, self.fmt, self.raw, batch.session
            ):
                lines.append(line)
                if len(lines) >= CHUNK_LINES:
                    self.write(lines)
                    lines = []
                    if self.stop.is_set():
                        return
        self.write(lines)

    def write(self, lines: list[str]) -> None:
        """Write whole lines and flush (a signal can only cut a write that is stuck)."""
        if not lines:
            return
        self.writing_since = time.monotonic()
        try:
            sys.stdout.write("\n".join(lines) + "\n")
            sys.stdout.flush()
        finally:
            self.writing_since = None


def run(args: argparse.Namespace) -> int:
    """Follow the paths until Ctrl-C or SIGTERM."""
    from rltop.health.settings import load_rules
    from rltop.live.activity import ActivityLog

    tail = _Tail(args.format, args.raw, ActivityLog(load_rules(args.rules)["stall"]))
    previous = install_stop_signals(tail.on_signal)
    watcher = None
    try:
        from rltop.ingest.follow.watcher import Watcher
        from rltop.report.export import CSV_HEADER

        watcher = Watcher(args.paths, tail.inbox.put, poll=args.poll, tags=args.tags, runs=args.runs)
        watcher.start()  # DiscoveryError (exit 2) for a path that does not exist
        if args.format == "csv":
            tail.write([CSV_HEADER])
        if not tail.pump(lambda: watcher.running):
            error_line("tailing stopped (see the warning above)")
            return EXIT_USAGE
    except _Interrupted:
        # The pipe's reader stopped reading: drop what is still buffered for it, or the final
        # flush at exit would block again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except KeyboardInterrupt:
        pass
    finally:
        if watcher is not None:
            watcher.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return EXIT_OK
