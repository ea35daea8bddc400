"""Frames a live dashboard draws, for the tests that hold a shortcut's frames equal to the plain
path's: a run posted batch by batch as the watcher posts it, each repaint's frame recorded."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from helpers.paths import FIXTURES
from helpers.ui import cli_app
from rltop.ingest.feed import ChangeBatch, PointsBatch
from rltop.model.run import Store
from rltop.model.series import Points
from rltop.ui.app import RltopApp

START = 1_795_000_000.0
"""The wall time of step 0 of the posted run (one step a second)."""


def live_batch(
    first: int, count: int, tags: Sequence[str], values: Callable[[str, np.ndarray], np.ndarray]
) -> ChangeBatch:
    """Steps ``first`` to ``first + count - 1`` of every tag of the run ``run``, as one watcher batch."""
    steps = np.arange(first, first + count, dtype=np.int64)
    walls = START + steps.astype(np.float64)
    return ChangeBatch(
        points=[
            PointsBatch("run", tag, Points(steps.copy(), walls.copy(), values(tag, steps))) for tag in tags
        ],
        changed_runs={"run": "/logs/run"},
        change_times={"run": float(walls[-1])},
    )


def live_app(clock: Callable[[], float]) -> RltopApp:
    """The dashboard on an empty store holding the run ``run``, batches posted to it by the test."""
    store = Store()
    store.run("run", "/logs/run")
    return cli_app(str(FIXTURES), "--theme", "rltop-dark", store=store, clock=clock)


def record_frames(app: RltopApp, capture: Callable[[], list]) -> list[tuple[int, list]]:
    """(the run's last step, ``capture()``) of each frame drawn after a repaint, appended as drawn."""
    frames: list[tuple[int, list]] = []
    repaint = app._repaint

    async def probed() -> None:
        run = app.session.store.runs.get("run")
        step = run.last_step if run is not None and run.last_step is not None else -1
        await repaint()
        app.screen.call_after_refresh(lambda: frames.append((step, capture())))

    app._repaint = probed
    return frames


def region_lines(app: RltopApp, x: int, right: int, y: int, bottom: int) -> list[list]:
    """The segments of the screen's lines ``y`` to ``bottom`` between columns ``x`` and ``right``."""
    strips = app.screen._compositor.render_strips()
    return [list(strip.crop(x, right)) for strip in strips[y:bottom]]


def first_difference(one: list[list], other: list[list]) -> str:
    """Where two frames first differ, with both lines' text and segments (for an assertion message)."""
    for y, (mine, theirs) in enumerate(zip(one, other)):
        if mine != theirs:
            texts = ["".join(segment.text for segment in line) for line in (mine, theirs)]
            return f"line {y}:\n{texts[0]!r}\n{texts[1]!r}\n{mine}\n{theirs}"
    return f"{len(one)} lines against {len(other)}"
