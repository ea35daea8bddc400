"""Helpers shared by the app tests: deterministic apps over the fixture runs, screen text, waiting."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from helpers.paths import FIXTURES
from rltop.ingest.follow.loader import load
from rltop.ui.app import RltopApp

FIXTURES_TRL = FIXTURES / "trl"


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


def cli_app(*argv: str, store=None, clock: Callable[[], float] | None = None) -> RltopApp:
    """The app ``rltop app ARGV`` runs, parsed and checked by the CLI's own parser and factory
    (`rltop.commands.app.make_app`); ``store``: shown as it is, no watcher; ``clock``: fixed."""
    from rltop.cli import build_parser
    from rltop.commands.app import make_app

    return make_app(build_parser().parse_args(["app", *argv]), store=store, clock=clock)


OPTIONS = {"run": "--run", "follow": "--follow", "screenshot_dir": "--screenshot-dir", "theme": "--theme"}
"""`preloaded_app`'s keywords and the command-line options they stand for."""


def preloaded_app(
    *names: str, seconds_after: float = 4.0, paths: list[str] | None = None, **options: str
) -> RltopApp:
    """``rltop app`` over fixture runs (or ``paths``; no watcher), its clock fixed ``seconds_after``
    the newest point; ``options`` (run, follow, screenshot_dir, theme) as on the command line."""
    if paths is None:
        paths = [str(FIXTURES_TRL / name) for name in names] if names else [str(FIXTURES_TRL)]
    store, newest = fixed_store(paths)
    options.setdefault("theme", "rltop-dark")
    argv = [word for key, value in options.items() for word in (OPTIONS[key], value)]
    return cli_app(*paths, *argv, store=store, clock=lambda: newest + seconds_after)


def write_run(
    directory: Path,
    series: dict[str, list[float]],
    start: float = 1_795_000_000.0,
    gap: float = 10.0,
    config: dict | None = None,
    finished: bool = False,
) -> Path:
    """A run written by rltop's event writer: ``series`` tag -> values at steps 1, 2, …, one point
    every ``gap`` seconds of (fixed) wall time from ``start``; ``config`` as ``args/text_summary``;
    ``finished``: transformers' end-of-training summary at the last step."""
    import json

    from rltop.ingest.sources.tfevents.tfrecord.writer import EventWriter

    with EventWriter(directory, start=start) as writer:
        if config is not None:
            writer.add_text("args/text_summary", json.dumps(config), 0, start)
        steps = max(len(values) for values in series.values())
        for index in range(steps):
            for tag, values in series.items():
                if index < len(values):
                    writer.add_scalar(tag, values[index], index + 1, start + gap * index)
        if finished:
            writer.add_scalar("train/train_runtime", gap * steps, steps, start + gap * steps)
    return directory


def seeded_and_resumed(root: Path) -> list[str]:
    """Four runs as TRL writes them today: two seeds of one experiment, two sessions of a resumed one."""
    layout = {
        "grpo_seeds/seed_1/runs/Nov29_21-47-47_vm": 0.0,
        "grpo_seeds/seed_2/runs/Nov29_21-51-41_vm": 300.0,
        "grpo_resumed/runs/Dec01_07-56-02_vm": 600.0,
        "grpo_resumed/runs/Dec01_07-56-27_vm": 900.0,
    }
    for folder, offset in layout.items():
        reward = [0.1 * step for step in range(1, 21)]
        write_run(
            root / folder,
            {"train/reward": reward, "train/entropy": [2.0] * 20},
            start=1_795_000_000.0 + offset,
            finished=True,
        )
    return list(layout)


def focus_as_user(app, widget) -> None:
    """Put the cursor on ``widget`` as a user's key does: at once, and rltop leaves it there."""
    from rltop.ui.messages import CursorMovedByUser

    app.dashboard.set_focus(widget)
    widget.post_message(CursorMovedByUser())


async def burst(pilot, *keys: str) -> None:
    """Send ``keys`` all at once, as key auto-repeat or a paste does, then wait until they are handled.

    ``pilot.press`` waits for the app between keys; a burst must not (keys queue up behind each other).
    """
    from textual import events

    app = pilot.app
    for key in keys:
        event = events.Key(key, key if len(key) == 1 else {"slash": "/"}.get(key))
        event.set_sender(app)
        app._driver.send_message(event)
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


def notifications(app) -> list[str]:
    """The messages of the toasts the app raised (toasts are drawn on a layer of their own)."""
    return [notification.message for notification in app._notifications]


def screen_lines(app) -> list[str]:
    """The text of every line of the current screen, as a terminal would show it."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def screen_text(app) -> str:
    """The current screen as one string."""
    return "\n".join(screen_lines(app))


async def wait_until(pilot, condition: Callable[[], bool], timeout: float = 30.0) -> None:
    """Let the app run until ``condition()`` holds; fail with AssertionError after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await pilot.pause(0.05)


async def refreshed(pilot, node=None) -> None:
    """Wait until the screen was refreshed after everything queued so far was handled: the
    callbacks ``node`` (default: the current screen) and its screen queued to run after the next
    refresh have run, and the messages they sent (a focus change) were handled.

    The proof is a marker queued behind them: Textual runs a pump's messages, and a screen's
    after-refresh callbacks, in the order they came. For "nothing happened" assertions.
    """
    await pilot.pause()  # every message sent so far handled: their after-refresh callbacks are queued
    ran: list[bool] = []
    (node if node is not None else pilot.app.screen).call_after_refresh(ran.append, True)
    await wait_until(pilot, lambda: bool(ran))
    await pilot.pause()  # what those callbacks sent (``focus()`` goes through the app's queue)


async def settled(pilot) -> None:
    """The dashboard shows its run and placed its cursor: no repaint pending, the focus calls that
    repaint queued have run, animations are over (the state a dashboard test starts from)."""
    app = pilot.app
    await wait_until(pilot, lambda: app.session is not None and app.session.current is not None)
    await wait_until(pilot, lambda: app.dashboard.board.cards and app.focused is not None)
    await wait_until(pilot, lambda: app._flush_timer is None and not app.session.dirty)
    await refreshed(pilot)
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()
