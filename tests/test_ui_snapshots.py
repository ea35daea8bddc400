"""SVG snapshots of the dashboard (wide and narrow) and the detail screen, with a fixed clock.

The app runs over fixture runs loaded up front (no watcher), every time shown is relative to the
runs' own timestamps, and the theme is fixed: the pictures only change when rltop's look does.
Review changes with ``pytest tests/test_ui_snapshots.py --snapshot-update`` and the HTML report.
"""

from __future__ import annotations

from ui_helpers import preloaded_app, wait_until

from rltop.ui.screens.detail import DetailScreen


async def _dashboard_ready(pilot) -> None:
    app = pilot.app
    await wait_until(pilot, lambda: app.dashboard.board.cards and app.focused is not None)
    await pilot.pause(0.3)
    await pilot.wait_for_scheduled_animations()


def test_dashboard_wide_ppo_unstable(snap_compare):
    assert snap_compare(preloaded_app("ppo_unstable"), terminal_size=(160, 50), run_before=_dashboard_ready)


def test_dashboard_narrow_ppo_unstable(snap_compare):
    assert snap_compare(preloaded_app("ppo_unstable"), terminal_size=(40, 20), run_before=_dashboard_ready)


def test_detail_val_ratio_with_threshold_band(snap_compare):
    async def open_detail(pilot) -> None:
        await _dashboard_ready(pilot)
        pilot.app.open_detail("train/val/ratio")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, DetailScreen))
        await pilot.pause(0.3)

    assert snap_compare(preloaded_app("ppo_unstable"), terminal_size=(100, 30), run_before=open_detail)
