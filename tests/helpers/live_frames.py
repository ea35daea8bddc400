"""Frames a live dashboard draws, for the tests that hold a shortcut's frames equal to the plain
path's: a run posted batch by batch as the watcher posts it, each repaint's frame recorded."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from rich.cells import cell_len
from rich.segment import ControlType

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


class Terminal:
    """The cells a terminal shows after the updates the app wrote to it (each frame's changed
    spans, or a whole screen), played segment by segment as a terminal plays them: what a
    shortcut that skips work in a frame must leave exactly as the plain path leaves it."""

    def __init__(self, app: RltopApp, size: tuple[int, int]) -> None:
        width, height = size
        self.cells: list[list[tuple[str, object]]] = [[(" ", None)] * width for _ in range(height)]
        display = app._display

        def played(screen, renderable) -> None:
            if renderable is not None:
                self.play(renderable)
            display(screen, renderable)

        app._display = played

    def play(self, update) -> None:
        """Apply one compositor update (Textual's ChopsUpdate or LayoutUpdate)."""
        x = y = 0
        for segment in update.__rich_console__(None, None):
            if segment.control:
                for code in segment.control:
                    if code[0] == ControlType.CURSOR_MOVE_TO:
                        x, y = code[1], code[2]
            elif segment.text == "\n":
                x, y = 0, y + 1
            else:
                cells = cells_of([segment])
                if 0 <= y < len(self.cells):
                    row = self.cells[y]
                    row[x : x + len(cells)] = cells[: max(0, len(row) - x)]
                x += len(cells)

    def lines(self, x: int, right: int, y: int, bottom: int) -> list[list[tuple[str, object]]]:
        """The cells of lines ``y`` to ``bottom`` between columns ``x`` and ``right``."""
        return [row[x:right] for row in self.cells[y:bottom]]


def cells_of(segments) -> list[tuple[str, object]]:
    """A line's cells: (character, style), a wide character's second cell ("", style)."""
    cells = []
    for segment in segments:
        for char in segment.text:
            cells.append((char, segment.style))
            cells.extend([("", segment.style)] * (cell_len(char) - 1))
    return cells


def first_difference(one: list[list], other: list[list]) -> str:
    """Where two frames first differ, with both lines' text and segments (for an assertion message)."""
    for y, (mine, theirs) in enumerate(zip(one, other)):
        if mine != theirs:
            texts = ["".join(segment.text for segment in line) for line in (mine, theirs)]
            return f"line {y}:\n{texts[0]!r}\n{texts[1]!r}\n{mine}\n{theirs}"
    return f"{len(one)} lines against {len(other)}"
