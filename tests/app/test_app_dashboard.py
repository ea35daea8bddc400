"""Pilot tests of the dashboard on the real TRL fixtures: alerts, layouts, detail, runs, filter."""

from __future__ import annotations

import re

from helpers.ui import preloaded_app, refreshed, screen_lines, screen_text, settled, wait_until

from rltop.health.findings import Level
from rltop.ui.screens.dashboard import DashboardScreen
from rltop.ui.screens.detail import DetailScreen
from rltop.ui.screens.runs import RunsScreen
from rltop.ui.widgets.alert_item import AlertItem
from rltop.ui.widgets.filter_bar import FilterBar
from rltop.ui.widgets.metric_card import MetricCard


async def test_ppo_unstable_alert_strip_shows_critical_entropy_and_ratio_findings():
    app = preloaded_app("ppo_unstable")
    async with app.run_test(size=(160, 50)) as pilot:
        await settled(pilot)
        items = app.dashboard.alerts.items
        by_tag = {(item.finding.tag, Level(item.finding.level)) for item in items}
        assert ("train/policy/entropy_avg", Level.CRITICAL) in by_tag
        assert any(tag == "train/val/ratio" and level >= Level.WARN for tag, level in by_tag)
        # Worst first: every critical comes before every warning.
        levels = [Level(item.finding.level) for item in items]
        assert levels == sorted(levels, reverse=True)
        text = screen_text(app)
        assert "CRIT" in text and "policy/entropy_avg" in text and "val/ratio" in text
        # Wide layout: several cards a row, bordered; the worst alert has focus and shows its advice.
        assert not app.dashboard.narrow and app.dashboard.board.columns >= 4
        await wait_until(pilot, lambda: isinstance(app.focused, AlertItem))
        assert app.focused.finding.level == Level.CRITICAL
        await wait_until(pilot, lambda: "→" in screen_text(app))
        # The header says run (its experiment folder, not the session folder), trainer kind, step and
        # freshness (fixed clock: 4 s after the last point). The run reached its planned last step:
        # finished, in the muted colour.
        header = screen_lines(app)[0]
        assert "ppo_unstable" in header and "runs/" not in header and "Nov29" not in header
        assert "PPO" in header and "finished at step 150" in header and "4 s ago" in header


async def test_narrow_layout_40x20_one_line_per_metric_alerts_first():
    app = preloaded_app("ppo_unstable")
    async with app.run_test(size=(40, 20)) as pilot:
        await settled(pilot)
        assert app.dashboard.narrow
        lines = screen_lines(app)
        assert all(len(line) <= 40 for line in lines)
        # Below the two header lines, rows that start with a level badge are alerts.
        badge = re.compile(r"^ *[✖▲] (CRIT|WARN) ")
        alert_rows = [i for i, line in enumerate(lines) if i >= 2 and badge.search(line)]
        metric_rows = [i for i, line in enumerate(lines) if re.search(r"\s(ok[▲✖]?|WARN|CRIT)\s*$", line)]
        assert alert_rows and metric_rows and max(alert_rows) < min(metric_rows)
        # Every metric line: name, sparkline, value, trend, level. A name is whole, or its last
        # segments (the family is the group's), or cut between two of its words, never inside one.
        words = {card.tag: set(re.split(r"[/_]", card.model.name)) for card in app.dashboard.board.cards}
        for card in app.dashboard.board.cards:
            assert card.compact
            if not card.display or card.region.height == 0:
                continue
            line = card.render().plain
            assert len(line) <= card.content_size.width
            shown = line.split(" ")[0]
            assert card.model.name.endswith(shown) or "…" in shown
            assert set(re.split(r"[/_…]", shown)) - {""} <= words[card.tag], shown
        # Alerts are single lines cut between words (a number is never cut short).
        for item in app.dashboard.alerts.items:
            text = item.render().plain
            assert "\n" not in text
            if text.endswith("…"):
                shown = re.sub(r"^. (CRIT|WARN) +(\(over\) )?(\(\d episodes\) )?", "", text[:-1]).rstrip()
                message = " ".join(item.alert.message.split())
                # Cut between words or at a "/" of a metric path, never inside a word or a number.
                boundary = message[len(shown)] in " ,;:" or shown.endswith("/")
                assert message.startswith(shown) and boundary, (shown, message)


async def test_wide_layout_160x50_groups_in_catalogue_order():
    app = preloaded_app("ppo_unstable")
    async with app.run_test(size=(160, 50)) as pilot:
        await settled(pilot)
        groups = [group.group for group in app.dashboard.board.groups]
        assert groups[0] == "Key values"
        assert groups.index("Stability") < groups.index("Policy")
        card = app.dashboard.board.card("train/policy/entropy_avg")
        assert card is not None and card.has_class("-crit")
        assert card.region.width >= 30 and card.region.height >= 4


async def test_enter_opens_detail_and_escape_returns_to_the_same_card():
    app = preloaded_app("ppo_unstable")
    async with app.run_test(size=(120, 40)) as pilot:
        await settled(pilot)
        assert app.dashboard.board.focus_tag("train/val/ratio")
        await pilot.pause()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, DetailScreen))
        detail = app.screen
        assert detail.tag == "train/val/ratio"
        chart = detail.chart
        # The info pane is filled after the chart's first paint at its laid-out size.
        await wait_until(pilot, lambda: "What it is" in screen_text(app) and chart.content_size.area > 0)
        plain = chart.render().plain
        assert "┤" in plain and "140" in plain  # axes drawn, integer step ticks
        assert chart.figure.xlim == (1.0, 150.0)  # up to the last step
        info = screen_text(app)
        assert "What it is" in info and "float around 1.0" in info
        assert "thresholds: Ratio drift: warn outside [1/1.05, 1.05], critical outside [1/2, 2]" in info
        # s changes the smoothing, x the axis; n/N step through the metrics (the arrows move the cursor).
        await pilot.press("s")
        assert app.chart_options.smoothing == 0.8
        await pilot.press("x")
        assert app.chart_options.x_mode == "relative"
        await pilot.press("n")
        assert detail.tag != "train/val/ratio"
        await pilot.press("N")
        assert detail.tag == "train/val/ratio"
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, DashboardScreen))
        assert isinstance(app.focused, MetricCard) and app.focused.tag == "train/val/ratio"


async def test_enter_on_an_alert_opens_its_metric():
    app = preloaded_app("ppo_unstable")
    async with app.run_test(size=(120, 40)) as pilot:
        await settled(pilot)
        assert isinstance(app.focused, AlertItem)
        tag = app.focused.finding.tag
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, DetailScreen))
        assert app.screen.tag == tag


async def test_runs_list_switches_run_and_keeps_the_focused_metric():
    app = preloaded_app("grpo_healthy", "grpo_unstable", "grpo_liger_cpu_crash")
    async with app.run_test(size=(120, 40)) as pilot:
        await settled(pilot)
        first = app.session.current
        assert first is not None
        assert app.dashboard.board.focus_tag("train/entropy")
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, RunsScreen))
        text = screen_text(app)
        for name in ("grpo_healthy", "grpo_unstable", "grpo_liger_cpu_crash"):
            assert name in text
        assert "empty" in text  # the crashed run has no scalar
        target = "grpo_unstable" if not first.startswith("grpo_unstable") else "grpo_healthy"
        rows = [row.name for row in app.screen.rows]
        index = next(i for i, name in enumerate(rows) if name.startswith(target))
        table = app.screen.query_one("#runs-table")
        table.move_cursor(row=index)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, DashboardScreen))
        await wait_until(
            pilot, lambda: app.dashboard.shown_run is not None and app.dashboard.shown_run.startswith(target)
        )
        await wait_until(pilot, lambda: isinstance(app.focused, MetricCard))
        assert app.focused.tag == "train/entropy"
        assert target in screen_lines(app)[0]
        # ] goes on to the next run in name order.
        await pilot.press("right_square_bracket")
        await wait_until(pilot, lambda: not app.dashboard.shown_run.startswith(target))


async def test_slash_filter_is_a_case_insensitive_regex_and_escape_clears_it():
    app = preloaded_app("ppo_unstable")
    async with app.run_test(size=(120, 40)) as pilot:
        await settled(pilot)
        total = len(app.dashboard.board.cards)
        await pilot.press("slash")
        await pilot.press(*"RATIO|entropy_avg")
        await wait_until(pilot, lambda: app.dashboard.filter_text == "RATIO|entropy_avg")
        shown = [card.tag for card in app.dashboard.board.cards if card.display]
        assert shown and all(re.search("ratio|entropy_avg", tag) for tag in shown)
        assert len(shown) < total
        await wait_until(pilot, lambda: f"of {total} tags" in screen_text(app))  # the status is drawn
        assert f"{len(shown)} of {total} tags" in screen_text(app)
        # A broken regex keeps the last good filter and says why.
        await pilot.press(*"(")
        await wait_until(pilot, lambda: "invalid regex" in screen_text(app))  # the "(" was handled
        assert [card.tag for card in app.dashboard.board.cards if card.display] == shown
        assert "invalid regex" in screen_text(app)
        await pilot.press("backspace", "enter")
        await wait_until(pilot, lambda: not app.dashboard.query_one(FilterBar).display)  # Enter closed it
        assert isinstance(app.focused, MetricCard) and app.focused.tag in shown
        assert "/RATIO|entropy_avg/" in screen_lines(app)[0]
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.dashboard.filter_text == "")
        assert all(card.display for card in app.dashboard.board.cards)


async def test_arrow_keys_move_between_cards_and_into_the_alerts():
    app = preloaded_app("ppo_unstable")
    async with app.run_test(size=(100, 30)) as pilot:
        await settled(pilot)
        board = app.dashboard.board
        assert board.columns == 3
        board.focus_first()
        await pilot.pause()
        first = app.focused
        await pilot.press("l")
        assert app.focused is board.cards[1]
        await pilot.press("j")  # down: same column of the next row (the next group here)
        assert isinstance(app.focused, MetricCard) and app.focused is not first
        await pilot.press("k", "k")  # up past the first row: into the alert strip
        assert isinstance(app.focused, AlertItem)
        await pilot.press("j")
        assert isinstance(app.focused, (AlertItem, MetricCard))


async def test_keys_help_theme_pause_and_command_palette_actions():
    app = preloaded_app("ppo_unstable")
    async with app.run_test(size=(100, 30)) as pilot:
        await settled(pilot)
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: "acknowledge" in screen_text(app))
        assert "filter tags" in screen_text(app)
        await pilot.press("escape")
        theme = app.theme
        await pilot.press("t")
        assert app.theme != theme and app.theme.startswith("rltop-")
        await pilot.press("p")
        assert app.paused and "PAUSED" in screen_lines(app)[0]
        await pilot.press("p")
        assert not app.paused
        titles = {command.title for command in app.get_system_commands(app.screen)}
        assert {"Runs", "Filter tags", "Pause / resume", "Next theme", "Help"} <= titles


async def test_detail_overlays_the_same_metric_of_a_run_picked_to_compare():
    app = preloaded_app("grpo_healthy", "grpo_unstable", "grpo_liger_cpu_crash", run="grpo_unstable")
    async with app.run_test(size=(120, 35)) as pilot:
        await settled(pilot)
        assert app.session.current.startswith("grpo_unstable")
        app.open_detail("train/entropy")
        await wait_until(pilot, lambda: isinstance(app.screen, DetailScreen))
        detail = app.screen
        chart = detail.chart
        await wait_until(pilot, lambda: chart.data.series is not None)
        assert chart.data.others == []  # the run looked at, alone, until another is ticked
        # The crashed run logged no entropy: only grpo_healthy is offered.
        assert [label for _, label in detail.sources.candidates] == ["grpo_healthy"]
        app.chart_options.overlays[detail.run_name] = frozenset(run for run, _ in detail.sources.candidates)
        detail.refresh_view()
        await wait_until(pilot, lambda: len(chart.data.others) == 1)
        assert [other.label.split("/")[0] for other in chart.data.others] == ["grpo_healthy"]
        await refreshed(pilot)  # the chart is laid out again with its legend
        assert "grpo_healthy" in chart.render().plain  # the legend names the other run
        await pilot.press("x", "x")
        assert app.chart_options.x_mode == "wall" and ":" in chart.render().plain  # clock-time ticks


async def test_switching_from_a_card_of_a_ppo_run_to_a_grpo_run_keeps_the_keys_working():
    # The PPO card under the cursor does not exist in the GRPO run: focus must land on a live
    # widget, never on an alert being removed (keys would go nowhere, not even q).
    app = preloaded_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settled(pilot)
        assert app.dashboard.shown_run.startswith("ppo_unstable")
        await pilot.press(*["down"] * 7)
        await wait_until(pilot, lambda: isinstance(app.focused, MetricCard))
        await pilot.press("right_square_bracket")
        await wait_until(pilot, lambda: not app.dashboard.shown_run.startswith("ppo_unstable"))
        await wait_until(pilot, lambda: app.focused is not None and app.focused.is_attached)
        await settled(pilot)  # the switch's repaint and the focus calls it queued are done
        assert app.focused.is_attached
        assert app.focused in app.dashboard.alerts.items or app.focused in app.dashboard.board.cards
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: app.screen.id == "help")


async def test_card_colours_follow_the_theme_and_the_focus():
    # Cards style their components when they draw them (not Textual's eager COMPONENT_CLASSES):
    # a new theme, or the focus's background, must still reach every colour they draw.
    from textual.color import Color

    app = preloaded_app("ppo_unstable")
    async with app.run_test(size=(100, 30)) as pilot:
        await settled(pilot)
        card = app.dashboard.board.cards[0]

        def dim() -> str:
            return Color.from_rich_color(card.get_component_rich_style("metric-card--dim").color).hex

        for theme, muted in (("rltop-light", "#5C6B7A"), ("rltop-dark", "#7D8896")):
            app.theme = theme
            await wait_until(pilot, lambda muted=muted: dim() == muted)
        dark = card.rich_style.bgcolor
        app.theme = "textual-dark"  # its boost (the focus's background) is not transparent
        await wait_until(pilot, lambda: card.rich_style.bgcolor != dark)
        calm = card.get_component_rich_style("metric-card--dim").bgcolor
        assert calm == card.rich_style.bgcolor
        card.focus()
        await wait_until(pilot, lambda: card.has_focus and card.rich_style.bgcolor != calm)
        # The focused card's background (boost) is under its text too.
        assert card.get_component_rich_style("metric-card--dim").bgcolor == card.rich_style.bgcolor != calm
        assert card.get_component_rich_style("metric-card--value").bold


async def test_a_theme_that_changes_only_the_card_colours_repaints_the_cards():
    # The cards' own rules (border, background) stay the same in this theme, so only the dropped
    # component styles can tell a card to draw again: an OK sparkline must come out magenta.
    import dataclasses

    app = preloaded_app("ppo_unstable")
    async with app.run_test(size=(100, 30)) as pilot:
        await settled(pilot)
        base = app.get_theme("rltop-dark")
        variables = dict(base.variables, **{"rltop-spark-ok": "#FF00FF"})
        app.register_theme(dataclasses.replace(base, name="rltop-dark-magenta", variables=variables))
        assert "#ff00ff" not in app.export_screenshot().lower()
        app.theme = "rltop-dark-magenta"
        await wait_until(pilot, lambda: "#ff00ff" in app.export_screenshot().lower())
