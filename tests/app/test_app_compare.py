"""The dashboard compares runs: ``d`` shows the config diff with each verdict and the split line,
``b`` groups the runs overview by a setting that differs, with each group's worst level.

On the real sweep (``tests/fixtures/sweep_lr``) and seed runs (``tests/fixtures/seeds_sweep``).
Each test waits for a state, never for a duration.
"""

from __future__ import annotations

from helpers.paths import FIXTURES
from helpers.ui import preloaded_app, screen_text, wait_until

from rltop.health.findings import Level
from rltop.ui.logic.keys import DASHBOARD_KEYS, keys_text
from rltop.ui.screens.dashboard import DashboardScreen
from rltop.ui.screens.diff import DiffScreen
from rltop.ui.screens.runs import RunsScreen
from rltop.ui.widgets.diff_table import DiffTable
from rltop.ui.widgets.runs_overview import RunsOverview

SWEEP = str(FIXTURES / "sweep_lr")
SEEDS = str(FIXTURES / "seeds_sweep")
SUMMARY = (
    "2 runs with learning_rate ≥ 0.01 went critical on entropy collapse; 3 with learning_rate ≤ 0.001 did not"
)


async def _ready(pilot) -> None:
    app = pilot.app
    await wait_until(pilot, lambda: app.session.current is not None and app.dashboard.board.cards)
    await wait_until(pilot, lambda: app.focused is not None and app._flush_timer is None)


def _table_rows(table: DiffTable) -> list[list[str]]:
    return [[str(cell) for cell in table.get_row_at(index)] for index in range(table.row_count)]


def test_the_keys_are_in_the_one_key_table():
    keys = {key.keys: key for key in DASHBOARD_KEYS}
    assert keys["d"].action == "config_diff" and keys["b"].action == "group_by"
    text = keys_text()
    assert "compare the runs" in text and "group the runs overview by a setting" in text


async def test_d_shows_the_diff_with_each_verdict_and_enter_shows_that_run():
    app = preloaded_app(paths=[SWEEP])
    async with app.run_test(size=(100, 30)) as pilot:
        await _ready(pilot)
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, DiffScreen) and app.screen.query(DiffTable))
        table = app.screen.query_one(DiffTable)
        await wait_until(pilot, lambda: table.row_count == 5)
        rows = _table_rows(table)
        assert [row[0] for row in rows] == ["lr_1e-5", "lr_1e-4", "lr_1e-3", "lr_1e-2", "lr_5e-2"]
        assert [row[2] for row in rows] == ["1e-05", "0.0001", "0.001", "0.01", "0.05"]
        assert rows[2][1] == "● ok" and rows[3][1].startswith("✖ CRIT entropy collapse")
        text = " ".join(screen_text(app).split())
        assert "1 setting differs: learning_rate" in text and "189 settings equal" in text
        assert str(app.screen.query_one("#diff-summary").render()) == f"→ {SUMMARY}"
        assert "went critical on entropy collapse" in text
        table.move_cursor(row=3)
        # A verdict changes while the screen is open (the repaint hands it the new comparison): the
        # table follows, the cursor stays on its run.
        changed = app.session.comparison()
        changed.split = None
        app.screen.update(changed)
        await wait_until(
            pilot, lambda: not str(app.screen.query_one("#diff-summary").render()).startswith("→")
        )
        assert table.cursor_row == 3 and table.row_count == 5
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, DashboardScreen))
        await wait_until(pilot, lambda: (app.dashboard.shown_run or "").startswith("lr_1e-2"))


async def test_d_from_the_runs_list_and_escape_closes():
    app = preloaded_app(paths=[SWEEP])
    async with app.run_test(size=(100, 30)) as pilot:
        await _ready(pilot)
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, RunsScreen))
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, DiffScreen))
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, RunsScreen))
        # Enter on a run of the diff opened from the list: back to the dashboard, showing it.
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, DiffScreen) and app.screen.query(DiffTable))
        table = app.screen.query_one(DiffTable)
        await wait_until(pilot, lambda: table.row_count == 5)
        table.move_cursor(row=2)  # lr_1e-3
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, DashboardScreen))
        await wait_until(pilot, lambda: (app.dashboard.shown_run or "").startswith("lr_1e-3"))


async def test_seeds_show_their_seed_group_and_no_table():
    app = preloaded_app(paths=[SEEDS])
    async with app.run_test(size=(100, 30)) as pilot:
        await _ready(pilot)
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, DiffScreen))
        assert not app.screen.query_one(DiffTable).display
        text = " ".join(screen_text(app).split())
        assert "3 runs differ only in their seed: seed group seeds_sweep/seed_*" in text
        assert "No setting splits" not in text and not app.screen.query_one("#diff-summary").display


async def test_one_run_has_nothing_to_compare():
    app = preloaded_app(paths=[SWEEP + "/lr_1e-3"])
    async with app.run_test(size=(100, 30)) as pilot:
        await _ready(pilot)
        await pilot.press("d")
        await wait_until(
            pilot, lambda: any("nothing to compare" in str(n.message) for n in app._notifications)
        )
        assert isinstance(app.screen, DashboardScreen)


async def test_b_groups_the_overview_by_learning_rate_with_the_worst_level_and_then_off():
    app = preloaded_app(paths=[SWEEP, SEEDS])
    async with app.run_test(size=(100, 30)) as pilot:
        await _ready(pilot)
        overview = app.dashboard.query_one(RunsOverview)
        await pilot.press("b")
        await wait_until(pilot, lambda: app.session.group_by == "learning_rate")
        await wait_until(pilot, lambda: any(getattr(row, "kind", "") == "setting" for row in overview.rows))
        heads = [row for row in overview.rows if getattr(row, "kind", "") == "setting"]
        assert [row.label for row in heads] == [
            f"learning_rate = {v}" for v in ("1e-05", "0.0001", "0.001", "0.01", "0.05")
        ]
        assert [row.level for row in heads] == [
            Level.CRITICAL,
            Level.WARN,
            Level.OK,
            Level.CRITICAL,
            Level.CRITICAL,
        ]
        # Only the shown run's value is open: the 0.05 group holds the worst run, shown by default.
        labels = [row.label for row in overview.rows]
        assert labels[labels.index("learning_rate = 0.05") + 1] == "sweep_lr/lr_5e-2"
        assert len(overview.rows) == 6
        # A click on the 1e-3 line shows its worst run, and opens the value: the three seeds ran at
        # 1e-3 too, their seed group's line stays above their runs.
        assert heads[2].size == 4
        overview.post_message(RunsOverview.Chosen(heads[2].name))
        await wait_until(pilot, lambda: len(overview.rows) == 5 + 1 + 4)
        labels = [row.label for row in overview.rows]
        start = labels.index("learning_rate = 0.001")
        assert labels[start + 1] == "seeds_sweep/seed_*"
        assert getattr(overview.rows[start + 1], "kind", "") == "seed group"
        assert labels[start + 6] == "learning_rate = 0.01"  # group line, 3 seeds, lr_1e-3
        # Next: max_steps (60 for the seeds, 80 for the sweep), then not grouped.
        await pilot.press("b")
        await wait_until(pilot, lambda: app.session.group_by == "max_steps")
        await pilot.press("b")
        await wait_until(pilot, lambda: app.session.group_by is None)
        await wait_until(pilot, lambda: not any(getattr(r, "kind", "") == "setting" for r in overview.rows))
