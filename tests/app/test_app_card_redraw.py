"""The metric cards while a run logs: the card shortcuts (`line_strips.REUSE_STYLES`: the Rich style
of each (style, column, row) a card drew kept for its next lines; `summary.REUSE_COLUMNS`: the
sparkline columns a new point cannot change kept; `kept_render.KEEP_LINES`: the containers, titles
and alert lines nothing changed hand the compositor their last lines; `header_bar.DRAW_OWN_LINES`)
draw the frames the plain path draws, segment for segment and style for style, in the card form
and in the one-line form of a narrow terminal.

A run of 3,000 noisy steps is posted step by step, as the watcher posts batches; after each, the
frame drawn after the repaint is recorded once the layout settled. The numbers line changes at every
point, a sparkline glyph now and then; a level change recolours a card and its sparkline; a tag with
non-finite points draws its marks.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers.live_frames import (
    START,
    Terminal,
    first_difference,
    live_app,
    live_batch,
    record_frames,
    region_lines,
)
from helpers.ui import focus_as_user, wait_until

from rltop.model import summary
from rltop.ui import kept_render, line_strips
from rltop.ui.app import RltopApp
from rltop.ui.messages import LiveBatch
from rltop.ui.widgets import header_bar

HISTORY = 3000
TAGS = ("train/reward", "train/kl", "train/entropy", "train/loss", "train/grad_norm", "train/clip_ratio",
        *(f"train/metric_{i:02d}" for i in range(8)))  # fmt: skip


def _values(tag: str, steps: np.ndarray) -> np.ndarray:
    rng = np.random.default_rng(sum(map(ord, tag)) + int(steps[0]))
    if tag == "train/reward":
        return 0.2 + 0.6 * (1 - np.exp(-steps / 800)) + rng.normal(0, 0.01, steps.shape[0])
    if tag == "train/kl":  # a k3 KL that dips below 0 near the end: a critical finding, a red card
        base = 0.01 + 0.02 * (1 - np.exp(-steps / 900)) + rng.normal(0, 0.004, steps.shape[0])
        return np.where(steps > HISTORY + 6, -0.05, base)
    if tag == "train/grad_norm":  # non-finite points, one of them among the new ones
        values = 0.5 + rng.normal(0, 0.05, steps.shape[0])
        return np.where((steps % 997 == 0) | (steps == HISTORY + 4), np.nan, values)
    return 1.0 + 0.1 * np.sin(steps / (30.0 + len(tag))) + rng.normal(0, 0.01, steps.shape[0])


def _batch(first: int, count: int):
    return live_batch(first, count, TAGS, _values)


async def _frames(monkeypatch, shortcuts: bool, size: tuple[int, int]) -> list[list]:
    monkeypatch.setattr(line_strips, "REUSE_STYLES", shortcuts)
    monkeypatch.setattr(kept_render, "KEEP_LINES", shortcuts)
    monkeypatch.setattr(header_bar, "DRAW_OWN_LINES", shortcuts)
    monkeypatch.setattr(summary, "REUSE_COLUMNS", shortcuts)
    clock = [START + HISTORY + 1.0]
    app = live_app(lambda: clock[0])
    frames = record_frames(app, list)  # (the board is read once the layout settled, below)
    terminal = Terminal(app, size)  # what the frames' updates leave on a terminal
    async with app.run_test(size=size) as pilot:
        app.post_message(LiveBatch(_batch(1, HISTORY)))
        board = app.dashboard.board
        await wait_until(pilot, lambda: board.display and frames and frames[-1][0] >= HISTORY)
        # The user's cursor on a card: the focus (and the focused widget's colours) stays there, so
        # each frame's alert lines depend on the data alone, not on when rltop moves its own focus.
        card = board.cards[0]
        focus_as_user(app, card)
        await wait_until(pilot, lambda: app.dashboard.focused is card and not app.dashboard._automatic_focus)
        kept = []
        for step in range(HISTORY + 1, HISTORY + 13):
            clock[0] = START + step + 1.0
            app.post_message(LiveBatch(_batch(step, 1)))
            await wait_until(pilot, lambda step=step: any(held >= step for held, _ in frames))
            # The frame once the layout settled: an alert that comes or goes moves the board a
            # frame later or not, as the event loop goes. A line a card failed to redraw would
            # still be the old one here.
            await pilot.pause()
            await pilot.pause()
            lines, shown = _board_lines(app), _board_cells(app, terminal)
            # The updates written so far leave the terminal showing this frame, cell for cell.
            assert shown == [
                [(char, segment.style) for segment in line for char in segment.text] for line in lines
            ]
            kept.append((lines, shown))
    return kept


@pytest.mark.parametrize("size", [(100, 30), (40, 20)])
async def test_the_card_shortcuts_draw_the_frames_of_the_plain_path(monkeypatch, size):
    fast = await _frames(monkeypatch, True, size)
    plain = await _frames(monkeypatch, False, size)
    assert len(fast) == len(plain) == 12
    for index, ((one, shown), (other, plain_shown)) in enumerate(zip(fast, plain)):
        assert one == other, f"frame {index} differs: {first_difference(one, other)}"
        for y, (mine, theirs) in enumerate(zip(shown, plain_shown)):
            assert mine == theirs, f"frame {index}, line {y} of the terminal differs:\n{mine}\n{theirs}"
    texts = ["".join(segment.text for line in frame for segment in line) for frame, _ in fast]
    assert len(set(texts)) > 1, "the frames should show the points as they come"


def _areas(app: RltopApp) -> list[tuple[int, int, int, int]]:
    """The screen's alert lines and cards (x, right, y, bottom): not the header (its rates follow
    the real clock), nor the scrollbars (a thumb follows a relayout that may land a frame later)."""
    widgets = (app.dashboard.alerts, app.dashboard.board)
    return [
        (
            widget.region.x,
            widget.region.right - widget.scrollbar_size_vertical,
            widget.region.y,
            widget.region.bottom,
        )
        for widget in widgets
    ]


def _board_cells(app: RltopApp, terminal: Terminal) -> list[list]:
    """The terminal's cells where `_board_lines` reads the screen."""
    return [line for area in _areas(app) for line in terminal.lines(*area)]


def _board_lines(app: RltopApp) -> list[list]:
    """The segments of the screen's lines the alerts and the cards cover (`_areas`)."""
    return [line for area in _areas(app) for line in region_lines(app, *area)]
