"""Helpers shared by the app tests: deterministic apps over the fixture runs, screen text, waiting."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from rltop.ingest.loader import load
from rltop.ui.app import RltopApp

FIXTURES = Path(__file__).parent / "fixtures" / "trl"


def fixed_store(paths: list[str]):
    """Load ``paths`` and make every time in the store depend on the event files only.

    File modification times differ between checkouts, so each run's "last change" is set to its
    newest point's wall time; with a clock fixed relative to that, every screen is reproducible.
    """
    store = load(paths).store
    for run in store.runs.values():
        run.last_change_time = run.last_point_wall_time
    newest = max((run.last_point_wall_time or 0.0) for run in store.runs.values())
    return store, newest


def preloaded_app(*names: str, seconds_after: float = 4.0, **kwargs) -> RltopApp:
    """An app over fixture runs (no watcher), its clock fixed ``seconds_after`` the newest point."""
    paths = [str(FIXTURES / name) for name in names] if names else [str(FIXTURES)]
    store, newest = fixed_store(paths)
    kwargs.setdefault("theme", "rltop-dark")
    return RltopApp(paths, store=store, clock=lambda: newest + seconds_after, **kwargs)


def screen_lines(app) -> list[str]:
    """The text of every line of the current screen, as a terminal would show it."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def screen_text(app) -> str:
    """The current screen as one string."""
    return "\n".join(screen_lines(app))


async def wait_until(pilot, condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Let the app run until ``condition()`` holds; fail with AssertionError after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await pilot.pause(0.05)
