"""The dashboard's chart grid while a run logs: every repaint draws the newest point, and the
shortcuts that keep a chart's picture and its lines (`detail_chart.REUSE_PICTURES`), the numpy
renderer (`plot_text`) and the ANSI decoder (`ansi_text`) give the frames the plain path gives,
segment for segment and style for style.

A run of 3,000 noisy steps is posted step by step, as the watcher posts batches; after each, the
first frame drawn after the repaint is recorded. Most new points move no dot of a long chart (the
picture is kept), some move a few lines (only those are converted again), a level change recolours
a border: each frame must equal the one drawn with every shortcut off.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers.live_frames import START, first_difference, live_app, live_batch, record_frames, region_lines
from helpers.ui import wait_until

from rltop.ui import ansi_text, plot_text
from rltop.ui.app import RltopApp
from rltop.ui.messages import LiveBatch
from rltop.ui.widgets import detail_chart

HISTORY = 3000
TAGS = ("train/reward", "train/kl", "train/entropy", "train/loss")


def _values(tag: str, steps: np.ndarray) -> np.ndarray:
    rng = np.random.default_rng(abs(hash(tag)) % 1000 + int(steps[0]))
    if tag == "train/reward":
        return 0.2 + 0.6 * (1 - np.exp(-steps / 800)) + rng.normal(0, 0.01, steps.shape[0])
    if tag == "train/kl":  # a k3 KL that dips below 0 near the end: a critical finding, a red border
        base = 0.01 + 0.02 * (1 - np.exp(-steps / 900)) + rng.normal(0, 0.004, steps.shape[0])
        return np.where(steps > HISTORY + 6, -0.05, base)
    return 1.0 + 0.1 * np.sin(steps / 50.0) + rng.normal(0, 0.01, steps.shape[0])


def _batch(first: int, count: int):
    return live_batch(first, count, TAGS, _values)


async def _frames(monkeypatch, shortcuts: bool) -> list[list]:
    monkeypatch.setattr(detail_chart, "REUSE_PICTURES", shortcuts)
    monkeypatch.setattr(plot_text, "ENABLED", shortcuts)
    monkeypatch.setattr(ansi_text, "ENABLED", shortcuts)
    clock = [START + HISTORY + 1.0]
    app = live_app(lambda: clock[0])
    frames = record_frames(app, lambda: _grid_lines(app))
    async with app.run_test(size=(200, 50)) as pilot:
        app.post_message(LiveBatch(_batch(1, HISTORY)))
        grid = app.dashboard.grid
        await wait_until(pilot, lambda: grid.display and len(grid.charts) >= 2 and frames)
        await wait_until(pilot, lambda: all(chart.figure is not None for chart in grid.charts))
        kept = []
        for step in range(HISTORY + 1, HISTORY + 13):
            clock[0] = START + step + 1.0
            app.post_message(LiveBatch(_batch(step, 1)))
            await wait_until(pilot, lambda step=step: any(held >= step for held, _ in frames))
            frame = next(lines for held, lines in frames if held >= step)
            for chart in grid.charts:  # each chart draws the newest point: never held back
                assert chart.figure is not None and chart.figure.xlim[1] == step, (chart.tag, step)
            kept.append(frame)
    return kept


async def test_the_grid_draws_each_new_point_and_the_shortcuts_draw_the_same_frames(monkeypatch):
    fast = await _frames(monkeypatch, shortcuts=True)
    plain = await _frames(monkeypatch, shortcuts=False)
    assert len(fast) == len(plain) == 12
    for index, (one, other) in enumerate(zip(fast, plain)):
        assert one == other, f"frame {index} differs: {first_difference(one, other)}"


def _grid_lines(app: RltopApp) -> list[list]:
    """The segments of the screen's lines the chart grid covers (the lines above it, the header's
    points per second and the alerts, follow the real clock and the order events arrive in)."""
    region = app.dashboard.grid.region
    return region_lines(app, region.x, region.right, region.y, region.bottom)


async def _after_theme(monkeypatch, shortcuts: bool, theme: str) -> list[list]:
    monkeypatch.setattr(detail_chart, "REUSE_PICTURES", shortcuts)
    app = live_app(lambda: START + HISTORY + 1.0)
    async with app.run_test(size=(200, 50)) as pilot:
        app.post_message(LiveBatch(_batch(1, HISTORY)))
        grid = app.dashboard.grid
        await wait_until(pilot, lambda: grid.display and grid.charts and all(c.figure for c in grid.charts))
        await pilot.pause()
        app.theme = theme
        await pilot.pause()
        await pilot.pause()
        return _grid_lines(app)


@pytest.mark.parametrize("theme", ["rltop-light", "rltop-ansi"])
async def test_a_theme_change_redraws_the_kept_charts(monkeypatch, theme):
    """The kept pictures and styles belong to a theme: a new theme draws the charts anew, as the
    plain path does."""
    fast, plain = await _after_theme(monkeypatch, True, theme), await _after_theme(monkeypatch, False, theme)
    assert fast == plain, first_difference(fast, plain)
