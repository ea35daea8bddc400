"""SVG snapshots of the runs compared (``d``) and of the overview grouped by a setting (``b``), on the
real learning-rate sweep and seed runs, with the conventions of ``test_ui_snapshots``: runs loaded
up front, the clock fixed after their newest point, the theme fixed, and every test waits for a
state. Review changes with ``pytest tests/test_ui_compare_snapshots.py --snapshot-update``.
"""

from __future__ import annotations

import pytest
from helpers.paths import FIXTURES
from helpers.ui import preloaded_app, wait_until

from rltop.ui.screens.diff import DiffScreen
from rltop.ui.widgets.diff_table import DiffTable

SWEEP = str(FIXTURES / "sweep_lr")
SEEDS = str(FIXTURES / "seeds_sweep")


async def _settled(pilot) -> None:
    """The dashboard shows its run, the focus is placed and no repaint is pending (as in
    ``test_ui_snapshots``, without importing it: that module loads the detail screen too)."""
    app = pilot.app
    await wait_until(pilot, lambda: app.dashboard.board.cards and app.focused is not None)
    await wait_until(pilot, lambda: app._flush_timer is None and not app.session.dirty)
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


async def _diff_shown(pilot) -> None:
    await _settled(pilot)
    await pilot.press("d")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, DiffScreen))
    table = pilot.app.screen.query_one(DiffTable)
    await wait_until(pilot, lambda: not table.display or table.row_count > 0)
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


async def _grouped(pilot) -> None:
    await _settled(pilot)
    await pilot.press("b")
    overview = pilot.app.dashboard.query_one("RunsOverview")
    await wait_until(pilot, lambda: any(getattr(row, "kind", "") == "setting" for row in overview.rows))
    pilot.app.clear_notifications()  # the toast times out: a slow machine would take it or not
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


@pytest.mark.parametrize("size", [(100, 30), (40, 20)], ids=["100x30", "40x20"])
def test_diff_of_the_learning_rate_sweep(snap_compare, size):
    assert snap_compare(preloaded_app(paths=[SWEEP]), terminal_size=size, run_before=_diff_shown)


@pytest.mark.parametrize("size", [(100, 30), (40, 20)], ids=["100x30", "40x20"])
def test_diff_of_seeds_is_their_seed_group(snap_compare, size):
    assert snap_compare(preloaded_app(paths=[SEEDS]), terminal_size=size, run_before=_diff_shown)


@pytest.mark.parametrize("size", [(100, 30), (40, 20)], ids=["100x30", "40x20"])
def test_overview_grouped_by_learning_rate(snap_compare, size):
    assert snap_compare(preloaded_app(paths=[SWEEP, SEEDS]), terminal_size=size, run_before=_grouped)
