"""SVG snapshots of the dashboard and the detail screen, with a fixed clock.

The app runs over fixture runs loaded up front (no watcher), every time shown is relative to the
runs' own timestamps, and the theme is fixed: the pictures only change when rltop's look does.
Each test waits for a state (the repaint done, the focus placed), never for a duration, so a busy
machine takes the same pictures. The README's screenshots are these files.
Review changes with ``pytest tests/test_ui_snapshots.py --snapshot-update`` and the HTML report.
"""

from __future__ import annotations

import math
import time

import pytest
from helpers.paths import FIXTURES
from helpers.ui import focus_as_user, preloaded_app, seeded_and_resumed, wait_until, write_run

from rltop.ui.screens.detail import DetailScreen


@pytest.fixture
def utc(monkeypatch):
    """Clock times (the cursor readout's) in UTC, whatever the machine's time zone."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def _grid_drawn(app) -> bool:
    grid = app.dashboard.grid
    return not grid.display or (
        bool(grid.charts) and all(chart.data.main is not None for chart in grid.charts)
    )


async def _settled(pilot) -> None:
    """The dashboard shows its run, the focus is placed and no repaint is pending."""
    app = pilot.app
    await wait_until(pilot, lambda: app.dashboard.board.cards and app.focused is not None)
    await wait_until(pilot, lambda: app._flush_timer is None and not app.session.dirty)
    await wait_until(pilot, lambda: _grid_drawn(app))
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


def _detail(tag: str, *keys: str):
    """run_before: open the detail screen of ``tag`` and press ``keys`` there."""

    async def run_before(pilot) -> None:
        await _settled(pilot)
        pilot.app.open_detail(tag)
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, DetailScreen))
        detail = pilot.app.screen
        await wait_until(pilot, lambda: detail.chart.data.series is not None)
        for key in keys:
            await pilot.press(key)
        await wait_until(pilot, lambda: detail.readout.readout is not None)
        await pilot.pause()
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()

    return run_before


def test_dashboard_wide_ppo_unstable(snap_compare):
    assert snap_compare(preloaded_app("ppo_unstable"), terminal_size=(160, 50), run_before=_settled)


def test_dashboard_narrow_ppo_unstable(snap_compare):
    assert snap_compare(preloaded_app("ppo_unstable"), terminal_size=(40, 20), run_before=_settled)


def test_detail_val_ratio_with_threshold_band(snap_compare):
    async def open_detail(pilot) -> None:
        await _settled(pilot)
        pilot.app.open_detail("train/val/ratio")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, DetailScreen))
        await wait_until(pilot, lambda: pilot.app.screen.chart.data.series is not None)
        await pilot.pause()
        await pilot.wait_for_scheduled_animations()

    assert snap_compare(preloaded_app("ppo_unstable"), terminal_size=(100, 30), run_before=open_detail)


def test_overview_two_runs_one_critical_with_the_healthy_one_selected(snap_compare):
    app = preloaded_app("ppo_healthy", "ppo_unstable", follow="ppo_healthy")
    assert snap_compare(app, terminal_size=(100, 30), run_before=_settled)


def test_overview_two_runs_at_40x20(snap_compare):
    app = preloaded_app("grpo_healthy", "ppo_unstable")
    assert snap_compare(app, terminal_size=(40, 20), run_before=_settled)


def test_nine_runs_at_40x20_show_every_critical_or_count_it(snap_compare):
    """A fifth of the screen for nine runs: the selected run and a hint counting the runs above and
    below by level; alerts keep "(over)" and their numbers whole; names cut between words."""
    app = preloaded_app(paths=[str(FIXTURES / "trl2")])
    assert snap_compare(app, terminal_size=(40, 20), run_before=_settled)


def test_detail_of_a_crashed_run_with_a_longer_run_ticked(snap_compare, utc):
    """The 14-step run with its NaN keeps the whole x axis; the 2000-step run ticked beside it is
    cut to it, and its legend says so."""
    runs = [str(FIXTURES / "trl2" / name) for name in ("grpo_nan_crash", "grpo_long_healthy")]
    app = preloaded_app(paths=runs, run="grpo_nan_crash")
    ticked = _detail("train/grad_norm", "o", "space", "enter")  # grpo_long_healthy ticked
    assert snap_compare(app, terminal_size=(100, 30), run_before=ticked)


def test_names_of_a_seeded_and_resumed_folder(snap_compare, tmp_path):
    seeded_and_resumed(tmp_path)
    app = preloaded_app(paths=[str(tmp_path)])
    assert snap_compare(app, terminal_size=(100, 30), run_before=_settled)


def test_names_of_two_reward_functions_at_40_columns(snap_compare):
    async def rewards_only(pilot) -> None:
        await _settled(pilot)
        await pilot.press("slash", *"rewards/", "enter")
        await wait_until(pilot, lambda: pilot.app.dashboard.filter_text == "rewards/")
        await wait_until(pilot, lambda: pilot.app.focused is not None)
        await pilot.pause()

    assert snap_compare(preloaded_app("grpo_healthy"), terminal_size=(40, 20), run_before=rewards_only)


def test_alert_strip_at_80x24_and_a_filter_that_matches_nothing(snap_compare):
    async def no_match(pilot) -> None:
        await _settled(pilot)
        await pilot.press("slash", *"zzzz", "enter")
        await wait_until(pilot, lambda: pilot.app.dashboard.board.filter_counts()[0] == 0)
        await pilot.pause()

    assert snap_compare(preloaded_app("ppo_unstable"), terminal_size=(80, 24), run_before=no_match)


def test_a_finished_run_two_hours_later(snap_compare):
    app = preloaded_app("grpo_healthy", "ppo_healthy", seconds_after=2 * 3600 + 5)
    assert snap_compare(app, terminal_size=(100, 30), run_before=_settled)


def test_chart_grid_at_200x50(snap_compare):
    app = preloaded_app("ppo_healthy", "ppo_unstable", run="ppo_unstable")
    assert snap_compare(app, terminal_size=(200, 50), run_before=_settled)


def test_chart_grid_at_120x36(snap_compare):
    app = preloaded_app("ppo_healthy", "ppo_unstable", run="ppo_unstable")
    assert snap_compare(app, terminal_size=(120, 36), run_before=_settled)


def test_detail_seed_group_with_band(snap_compare, utc):
    app = preloaded_app(paths=[str(FIXTURES / "seeds")])
    assert snap_compare(app, terminal_size=(120, 36), run_before=_detail("train/reward"))


def test_detail_cursor_readout(snap_compare, utc):
    app = preloaded_app("ppo_healthy", "ppo_unstable", run="ppo_unstable")
    keys = ["o", "space", "enter"] + ["left"] * 5 + ["shift+left"] * 8  # ppo_healthy ticked to compare
    assert snap_compare(app, terminal_size=(120, 36), run_before=_detail("train/objective/kl", *keys))


def test_detail_log_y_on_a_loss_spanning_1e_2_to_1e6(snap_compare, utc, tmp_path):
    # A value loss that explodes over eight decades, the way a PPO value head blows up.
    loss = [10 ** (-2 + 8 * (step / 199) ** 2) * (1 + 0.3 * math.sin(step)) for step in range(200)]
    write_run(
        tmp_path / "ppo_value_explosion", {"train/loss/value_avg": loss, "train/val/ratio": [1.0] * 200}
    )
    app = preloaded_app(paths=[str(tmp_path)])
    assert snap_compare(app, terminal_size=(120, 36), run_before=_detail("train/loss/value_avg", "l"))


def test_completions_opened_from_the_entropy_collapse_alert(snap_compare):
    """Enter on the alert: the completions at its step, 16 identical answers at the length cap."""
    from rltop.ui.screens.completions import CompletionsScreen
    from rltop.ui.widgets.alert_item import AlertItem

    async def from_alert(pilot) -> None:
        await _settled(pilot)
        app = pilot.app
        item = next(i for i in app.dashboard.query(AlertItem) if i.finding.rule == "entropy_collapse")
        focus_as_user(app, item)  # as a user's key does: the dashboard leaves the cursor there
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, CompletionsScreen))
        screen = app.screen
        await wait_until(pilot, lambda: screen.loaded is not None and screen.loaded.summary.step == 60)
        await pilot.pause()
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()

    app = preloaded_app(paths=[str(FIXTURES / "trl2" / "grpo_collapse")])
    assert snap_compare(app, terminal_size=(100, 30), run_before=from_alert)
