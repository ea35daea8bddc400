"""Messages of the dashboard: from background threads (the only way they reach the UI) and between widgets."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:  # the feed module loads numpy; the first frame is painted before that
    from rltop.ingest.feed import ChangeBatch


class LiveBatch(Message):
    """One `ChangeBatch` from the watcher thread, applied by the app on the UI thread.

    Data messages are never coalesced by Textual (no ``can_replace``): every batch is applied.
    """

    def __init__(self, batch: ChangeBatch) -> None:
        super().__init__()
        self.batch = batch


class ReadProgress(Message):
    """How far the watcher's first read got: points and runs read and not delivered yet."""

    def __init__(self, points: int, runs: int) -> None:
        super().__init__()
        self.points = points
        self.runs = runs


class WatcherFailed(Message):
    """The watcher could not start (the path vanished between the check and the start)."""

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason


class OpenDetail(Message):
    """Enter (or a double click) on a metric card or an alert: show the detail screen of ``tag``."""

    def __init__(self, tag: str) -> None:
        super().__init__()
        self.tag = tag


class OpenCompletions(Message):
    """Show what the policy wrote at ``step`` (None: the newest logged step) of the current run.

    Sent by the dashboard's key, an alert (Enter, when its run logged completions), and the detail
    screen (the cursor's step).
    """

    def __init__(self, step: int | None = None, tag: str | None = None, run: str | None = None) -> None:
        super().__init__()
        self.step = step
        self.tag = tag  # the metric it was opened from (the title says so)
        self.run = run  # None: the run the dashboard shows


class Acknowledge(Message):
    """``a``: un-latch the criticals of ``tag`` (None: of the whole run) that are over."""

    def __init__(self, tag: str | None) -> None:
        super().__init__()
        self.tag = tag


class FilterChanged(Message):
    """The dashboard's tag filter changed: the header shows it, the detail screen's n/N follow it."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class CursorMovedByUser(Message):
    """A key or a click moved the cursor: from now on it stays where the user put it (rltop no longer
    moves it to a worse alert). The move itself is made at once by the widget (`Screen.set_focus`),
    so a burst of keys moves key by key; only this note travels up."""
