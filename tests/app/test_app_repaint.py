"""Live means live: a batch's values, step and level are on the first frame drawn after it is applied.

Batches are posted as the watcher posts them (`LiveBatch`), to an app over its own store. A probe
wrapped around the app's repaint records, for every repaint, which step the store held when the
repaint began and what the frame drawn right after it shows (a callback after the screen's next
refresh). Every wait is for a state: the batch applied, that frame drawn.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from helpers.paths import FIXTURES
from helpers.ui import cli_app, screen_lines, wait_until

from rltop.ingest.feed import ChangeBatch, PointsBatch
from rltop.model.run import Store
from rltop.model.series import Points
from rltop.ui.app import RltopApp
from rltop.ui.messages import LiveBatch

RATIO = "train/val/ratio"
START = 1_795_000_000.0


def _batch(first_step: int, ratio: list[float]) -> ChangeBatch:
    """``ratio`` at consecutive steps from ``first_step``, a loss beside it, one second apart."""
    steps = np.arange(first_step, first_step + len(ratio), dtype=np.int64)
    walls = START + steps.astype(np.float64)
    CLOCK.now = float(walls[-1]) + 1.0
    loss = np.full(len(ratio), 0.5)
    return ChangeBatch(
        points=[PointsBatch("run", RATIO, Points(steps, walls, np.asarray(ratio, dtype=np.float64))),
                PointsBatch("run", "train/loss/policy_avg", Points(steps.copy(), walls.copy(), loss))],
        changed_runs={"run": "/logs/run"},
        change_times={"run": float(walls[-1])},
    )  # fmt: skip


class FrameProbe:
    """Per repaint: (the store's last step when it began, the screen lines of the next frame)."""

    def __init__(self, app: RltopApp) -> None:
        self.app = app
        self.frames: list[tuple[int, list[str]]] = []
        repaint = app._repaint

        async def probed() -> None:
            run = app.session.store.runs.get("run")
            step = run.last_step if run is not None and run.last_step is not None else -1
            await repaint()
            app.screen.call_after_refresh(lambda: self.frames.append((step, screen_lines(app))))

        app._repaint = probed

    def first_showing(self, step: int) -> list[str] | None:
        """The first frame drawn after a repaint that began with ``step`` in the store."""
        return next((lines for held, lines in self.frames if held >= step), None)


class Clock:
    """The app's wall clock, one second after the newest point posted (a run that is training)."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


CLOCK = Clock()


def _card_value(frame: list[str], name: str) -> str | None:
    """The value the card of ``name`` shows: on the card's last line inside its border (wide), or
    after the sparkline on the metric's own line (narrow)."""
    for index, line in enumerate(frame):
        if re.search(rf"[╭┏][─━] {re.escape(name)} [─━]", line):  # a card's title (not a chart's)
            bottom = next(i for i in range(index + 1, len(frame)) if re.search(r"[╰┗]", frame[i]))
            found = re.search(r"[│┃] (\S+) ", frame[bottom - 1])
            return found.group(1) if found else None
        found = re.match(rf"\s*{re.escape(name)}\s+\S*\s+(\S+) \S (?:ok|WARN|CRIT)", line)
        if found:
            return found.group(1)
    return None


def _app() -> RltopApp:
    store = Store()
    store.run("run", "/logs/run")
    return cli_app(str(FIXTURES), "--theme", "rltop-dark", store=store, clock=CLOCK)


@pytest.mark.parametrize("size", [(40, 20), (100, 30), (200, 50)])
async def test_each_level_change_is_on_the_first_frame_after_its_batch(size):
    app = _app()
    probe = FrameProbe(app)
    stages = [  # (ratio values, the level the header must show, the last value a card must show)
        ([1.0] * 10, "OK", "1"),
        ([1.2, 1.2, 1.2], "WARN", "1.2"),  # outside [1/1.05, 1.05] in 3 of 5: warn
        ([3.25, 3.25, 3.25], "CRIT", "3.25"),  # outside [1/2, 2] in 3 of 5: critical
    ]
    async with app.run_test(size=size) as pilot:
        step = 1
        for values, level, shown in stages:
            app.post_message(LiveBatch(_batch(step, values)))
            step += len(values)
            last = step - 1
            await wait_until(pilot, lambda last=last: app.store.runs["run"].last_step == last)  # applied
            await wait_until(pilot, lambda last=last: probe.first_showing(last) is not None)  # drawn
            frame = probe.first_showing(last)
            header = " ".join(frame[:2])  # a narrow pane puts the run's facts on a second line
            assert level in header, (level, frame)
            assert f"step {last}" in header or f"{last}" in header, frame
            assert _card_value(frame, "val/ratio") == shown, frame


async def test_a_warning_that_clears_is_taken_off_the_screen_in_the_next_frame():
    app = _app()
    probe = FrameProbe(app)
    async with app.run_test(size=(100, 30)) as pilot:
        app.post_message(LiveBatch(_batch(1, [1.0] * 5 + [1.2] * 3)))
        await wait_until(pilot, lambda: probe.first_showing(8) is not None)
        assert "WARN" in probe.first_showing(8)[0]
        app.post_message(LiveBatch(_batch(9, [1.0] * 5)))
        await wait_until(pilot, lambda: probe.first_showing(13) is not None)
        frame = probe.first_showing(13)
        assert "OK" in frame[0] and "WARN" not in frame[0], frame[0]


async def test_a_stream_of_batches_is_drawn_as_it_comes_never_seconds_behind():
    """Thirty batches in a row, one step each, a new value each: every repaint draws the step and
    the value the store held when it began (the old policy, once drawing cost more than 0.8 % of a
    core, redrew the cards only every 0.5 to 5 s while the header moved on)."""
    app = _app()
    probe = FrameProbe(app)
    ratio = {step: 1.0 + step / 1000 for step in range(1, 36)}  # 1.001 ... 1.035: all ok
    async with app.run_test(size=(100, 30)) as pilot:
        app.post_message(LiveBatch(_batch(1, [ratio[step] for step in range(1, 6)])))
        await wait_until(pilot, lambda: probe.first_showing(5) is not None)
        for step in range(6, 36):
            app.post_message(LiveBatch(_batch(step, [ratio[step]])))
            await wait_until(pilot, lambda step=step: app.store.runs["run"].last_step == step)
            await pilot.pause(0.03)  # a trainer logging every 30 ms (the wait only paces the batches)
        await wait_until(pilot, lambda: probe.first_showing(35) is not None)
        drawn = [(held, lines) for held, lines in probe.frames if held > 0]
        for held, lines in drawn:
            assert f"step {held}" in lines[0], (held, lines[0])
            assert _card_value(lines, "val/ratio") == f"{ratio[held]:.4g}", (held, lines)
