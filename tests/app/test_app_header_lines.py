"""The header draws its own strips (`header_bar.DRAW_OWN_LINES`, `LineStrips`): for every kind of
header line — each level, a finished or stale run, a fleet of runs, paused, filtered, a note, a
source and its aside, wide characters, a name too long for the line — at 40, 100 and 200 columns
(the narrow layout's two lines at 40), in each built-in theme, the strips are those Textual makes of
the same text, segment for segment and style for style. It falls back to Textual's drawing where
Textual would draw otherwise (text selected in it)."""

from __future__ import annotations

import pytest
from helpers.live_frames import START, live_app
from helpers.ui import wait_until
from textual.widget import Widget

from rltop.health.findings import Level
from rltop.ui.logic.header_info import HeaderInfo
from rltop.ui.themes import RLTOP_THEMES
from rltop.ui.widgets import header_bar
from rltop.ui.widgets.header_bar import HeaderBar

INFOS = [
    HeaderInfo(),
    HeaderInfo(run="run", kind="GRPO", step_text="step 41", level=Level.OK, age_text="updated 0 s ago"),
    HeaderInfo(
        run="grpo_long_name_of_a_run/seed_3",
        kind="PPO",
        step_text="finished at step 2000",
        level=Level.WARN,
        finished=True,
        age_text="2 h ago",
        rate_text="50 pts/s",
        fleet=[("critical", 2), ("warn", 1), ("ok", 3)],
    ),
    HeaderInfo(
        run="運行_训练_ラン",
        kind="RLOO",
        step_text="step 7",
        level=Level.CRITICAL,
        age_text="updated 3 min ago",
        stale=True,
        paused_points=120,
        filter_text="kl|entropy",
        note="polling 2 s",
        source="from trainer_state.json",
        source_aside="(checkpoint 40)",
    ),
    HeaderInfo(
        run="r" * 300,
        kind="GRPO",
        step_text="step 1",
        level=Level.OK,
        loading_text="reading 3/9 runs",
        fleet=[("ok", 1), ("empty", 1)],
    ),
]


def _textual_strips(header: HeaderBar) -> list[list]:
    header._render_content()  # what Textual's own `Widget.render_line` draws
    return [list(Widget.render_line(header, y)) for y in range(header.size.height)]


def _own_strips(header: HeaderBar) -> list[list]:
    return [list(header.render_line(y)) for y in range(header.size.height)]


@pytest.mark.parametrize("size", [(40, 20), (100, 30), (200, 50)])
async def test_the_header_draws_the_strips_textual_draws(size):
    app = live_app(lambda: START)
    async with app.run_test(size=size) as pilot:
        header = app.dashboard.query_one(HeaderBar)
        await wait_until(pilot, lambda: header.size.width > 0 and app.repaint_count > 0)
        assert header.size.height == (2 if size[0] < 60 else 1)
        drawn = {}
        for theme in RLTOP_THEMES:
            before = header.visual_style
            app.theme = theme
            await wait_until(
                pilot,
                lambda first=theme == "rltop-dark", before=before: first or header.visual_style != before,
            )
            for component in HeaderBar.COMPONENT_CLASSES:  # (kept until restyled: a new theme restyles)
                assert header.get_component_rich_style(component) == Widget.get_component_rich_style(
                    header, component
                )
            for info in INFOS:
                header.show(info)
                own, textual = _own_strips(header), _textual_strips(header)
                assert own == textual, (theme, info)
                assert header._drawn is not None and header._drawn[2] is not None  # (drawn by its own path)
            drawn[theme] = own
        assert len({repr(strips) for strips in drawn.values()}) == len(RLTOP_THEMES)  # (each theme's colours)


async def test_the_header_leaves_selected_text_to_textual(monkeypatch):
    app = live_app(lambda: START)
    async with app.run_test(size=(100, 30)) as pilot:
        header = app.dashboard.query_one(HeaderBar)
        await wait_until(pilot, lambda: header.size.width > 0 and app.repaint_count > 0)
        header.show(INFOS[2])
        drawn = [header.render_line(0)]
        monkeypatch.setattr(header_bar, "DRAW_OWN_LINES", False)
        assert drawn == [header.render_line(0)]
        monkeypatch.setattr(header_bar, "DRAW_OWN_LINES", True)
        monkeypatch.setattr(HeaderBar, "text_selection", property(lambda self: object()))
        header._drawn = None
        header.render_line(0)
        assert header._drawn is None  # (Textual drew it)
