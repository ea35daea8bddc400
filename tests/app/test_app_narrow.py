"""A narrow pane keeps the meaning (pilot tests at 40 × 20): live alerts read apart from those that
are over, an alert's number is never cut, a NaN stays marked in a 5-cell sparkline, run names are
cut between their words, the overview shows every critical run or counts it, and the dashboard
opens on a run whose critical is happening now before one whose criticals are over."""

from __future__ import annotations

import re

from helpers.paths import FIXTURES
from helpers.ui import preloaded_app, screen_lines, settled, wait_until, write_run

from rltop.ui.widgets.alert_item import AlertItem
from rltop.view.chart.spark import NON_FINITE_GLYPH
from rltop.view.text.headline import headline

TRL2 = FIXTURES / "trl2"
JOINTS = "_-./"


def _closed_alert_lines(app) -> list[tuple[AlertItem, str]]:
    return [(item, item.render().plain) for item in app.dashboard.query(AlertItem) if not item.is_open]


async def test_over_stays_and_the_number_after_reached_is_whole_at_40_columns():
    app = preloaded_app("ppo_unstable")
    async with app.run_test(size=(40, 20)) as pilot:
        await settled(pilot)
        await pilot.press("down")  # the first alert closes: every alert is one line
        await wait_until(pilot, lambda: len(_closed_alert_lines(app)) == len(app.dashboard.query(AlertItem)))
        lines = _closed_alert_lines(app)
        assert len(lines) >= 6
        over = 0
        for item, line in lines:
            assert len(line) <= item.content_size.width <= 40
            if not item.alert.finding.active:
                assert "(over)" in line, line  # a latched critical never reads like a live one
                over += 1
            found = headline(item.alert.message)
            if found is not None:
                assert re.search(rf"(^|[\s↑↓<=]){re.escape(found.number)}(\s|…|$)", line), line
        assert over >= 3
        visible = "\n".join(screen_lines(app))
        assert "(over) objective/kl ↑33.79 nats" in visible  # the number after "reached", whole


async def test_the_nan_mark_stays_on_a_narrow_sparkline():
    app = preloaded_app(paths=[str(TRL2 / "grpo_nan_crash")])
    async with app.run_test(size=(40, 20)) as pilot:
        await settled(pilot)
        card = next(card for card in app.dashboard.board.cards if card.tag == "train/grad_norm")
        assert card.compact
        line = card.render().plain
        spark = line[card.name_width + 1 :].split()[0]
        assert 1 < len(spark) < 14 and spark.endswith(NON_FINITE_GLYPH)  # 14 points, NaN at the last


def _cut_between_words(shown: str, name: str) -> bool:
    """``shown`` is ``name``, or whole words from its start and end around one ``…``."""
    if shown == name:
        return True
    head, _, tail = shown.partition("…")
    head_ok = not head or (name.startswith(head) and name[len(head)] in JOINTS)
    tail_ok = not tail or (name.endswith(tail) and name[-len(tail) - 1] in JOINTS)
    return head_ok and tail_ok and len(head) + len(tail) < len(name)


async def test_run_names_are_cut_between_their_words_and_stay_distinct(tmp_path):
    names = [
        "grpo_qwen2_lr3e-6_beta0.04_diverged",
        "grpo_qwen2_lr3e-6_beta0.04_healthy",
        "ppo_qwen2_lr1e-5_kl0.05_value_spike",
        "ppo_qwen2_lr1e-5_kl0.05_healthy",
    ]
    for index, name in enumerate(names):
        write_run(tmp_path / name, {"train/loss": [1.0, 0.9, 0.8 + index / 100]})
    app = preloaded_app(paths=[str(tmp_path)])
    async with app.run_test(size=(40, 20)) as pilot:
        await settled(pilot)
        await pilot.press("v")  # hidden and shown again: the overview is on
        await pilot.press("v")
        await wait_until(pilot, lambda: app.dashboard.overview.display and app.dashboard.overview.rows)
        overview = app.dashboard.overview
        lines = overview.render().plain.splitlines()
        assert len(lines) == 4
        shown = [line[3:].split(" ")[0] for line in lines]
        assert all("…" in name for name in shown)  # 35 characters do not fit: every name is cut
        for name in shown:
            assert any(_cut_between_words(name, full) for full in names), name
        assert len(set(shown)) == 4
        assert any(name.endswith("diverged") for name in shown)
        assert any(name.endswith("value_spike") for name in shown)


async def test_the_overview_shows_every_critical_run_or_counts_it():
    app = preloaded_app(paths=[str(TRL2)])
    async with app.run_test(size=(40, 20)) as pilot:
        await settled(pilot)
        overview = app.dashboard.overview
        rows = overview.rows
        assert len(rows) == 9 and overview.max_lines == 4  # a fifth of the screen
        lines = overview.render().plain.splitlines()
        assert len(lines) == 4
        window = overview._window()
        shown = rows[window.first : window.first + window.count]
        assert any(row.selected for row in shown)
        hidden_crit = sum(1 for row in rows if row not in shown and row.level is not None and row.level == 2)
        counted = sum(int(n) for line in lines for n in re.findall(r"\+(\d+) CRIT", line))
        assert hidden_crit > 0 and counted == hidden_crit
        assert lines[0].lstrip().startswith("↑") or lines[-1].lstrip().startswith("↓")
        before = app.session.current
        await pilot.click(overview, offset=(4, 0 if lines[0].lstrip().startswith("↑") else 3))
        await wait_until(pilot, lambda: app.session.current != before)  # a click on the hint shows
        shown = next(row for row in overview.rows if row.name == app.session.current)  # a run it counted
        assert shown.level == 2


async def test_the_dashboard_opens_on_an_active_critical_before_a_latched_one(tmp_path):
    """``old_nan`` had a NaN at step 5 (critical, over, not acknowledged: latched) and logs on;
    ``live_nan`` logs a NaN at its newest point. The live one is shown, though the other is newer."""
    start = 1_795_000_000.0
    write_run(
        tmp_path / "old_nan", {"train/grad_norm": [1.0] * 4 + [float("nan")] + [1.0] * 25}, start=start + 100
    )
    write_run(tmp_path / "live_nan", {"train/grad_norm": [1.0] * 19 + [float("nan")]}, start=start)
    app = preloaded_app(paths=[str(tmp_path)])
    async with app.run_test(size=(40, 20)) as pilot:
        await settled(pilot)
        views = {view.name: view for view in app.session.run_views()}
        assert {view.level for view in views.values()} == {2}  # both critical
        old = next(view for view in views.values() if view.display_name == "old_nan")
        assert old.live_level < 2 and (old.last_point_wall_time or 0) > max(
            view.last_point_wall_time or 0 for view in views.values() if view is not old
        )
        assert app.session.display_name(app.session.current) == "live_nan"
