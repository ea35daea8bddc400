"""Every run at a glance: the runs overview, the header's fleet, following the worst run, keys that are
never lost, alerts that show what matters now, finished runs, screenshots (pilot tests)."""

from __future__ import annotations

import dataclasses
import math
import re
import time

import pytest
from helpers.ui import (
    burst,
    cli_app,
    notifications,
    preloaded_app,
    refreshed,
    screen_lines,
    screen_text,
    seeded_and_resumed,
    settled,
    wait_until,
    write_run,
)

from rltop.health.findings import Finding, Level
from rltop.ingest.sources.tfevents.tfrecord.writer import EventWriter
from rltop.ui.widgets.alert_item import AlertItem


def _overview(app) -> list[str]:
    return [line.rstrip() for line in app.dashboard.overview.render().plain.splitlines()]


# -- the state of every run -----------------------------------------------------------------------------


@pytest.mark.parametrize("size", [(100, 30), (40, 20)])
async def test_two_runs_one_critical_with_the_healthy_one_selected_header_and_overview_show_it(size):
    app = preloaded_app("ppo_healthy", "ppo_unstable", follow="ppo_healthy")
    async with app.run_test(size=size) as pilot:
        await settled(pilot)
        assert app.session.current.startswith("ppo_healthy")
        header = " ".join(screen_lines(app)[:2])
        assert "ppo_healthy" in header
        assert re.search(r"2 runs(: 1 CRIT| ✖1)", header), header
        rows = _overview(app)
        assert len(rows) == 2
        critical = next(row for row in rows if "ppo_unstable" in row)
        assert "✖" in critical and "▶" not in critical
        healthy = next(row for row in rows if "ppo_healthy" in row)
        assert healthy.startswith("▶") and "●" in healthy
        # v hides the overview (one key), and brings it back.
        await pilot.press("v")
        assert not app.dashboard.overview.display
        await pilot.press("v")
        assert app.dashboard.overview.display


async def test_the_dashboard_opens_on_the_worst_run_and_w_goes_back_to_it():
    app = preloaded_app("ppo_healthy", "grpo_healthy", "ppo_unstable")
    async with app.run_test(size=(100, 30)) as pilot:
        await settled(pilot)
        assert app.session.current.startswith("ppo_unstable")
        await pilot.press("right_square_bracket")  # the user picks another run: no more following
        await wait_until(pilot, lambda: not app.dashboard.shown_run.startswith("ppo_unstable"))
        assert app.session.pinned
        await pilot.press("w")
        await wait_until(pilot, lambda: app.dashboard.shown_run.startswith("ppo_unstable"))
        assert not app.session.pinned and app.session.follow == "worst"


@pytest.mark.parametrize(
    ("follow", "expected"),
    [
        ("worst", "grpo_healthy"),
        ("newest", "ppo_healthy"),
        ("grpo_heal", "grpo_healthy"),
        ("ppo_healthy", "ppo_healthy"),
    ],
)
async def test_follow_picks_the_run(follow, expected):
    # grpo_healthy has a warning; ppo_healthy (all ok) was written last.
    app = preloaded_app("grpo_healthy", "ppo_healthy", follow=follow)
    async with app.run_test(size=(100, 30)) as pilot:
        await settled(pilot)
        assert app.session.current.startswith(expected)


async def test_a_run_that_becomes_critical_is_announced_and_highlighted(tmp_path):
    logs = tmp_path / "logs"
    healthy = EventWriter(logs / "calm")
    doomed = EventWriter(logs / "doomed")
    for step in range(1, 6):
        healthy.add_scalar("train/loss", 1.0 / step, step)
        doomed.add_scalar("train/loss", 1.0 / step, step)
    healthy.flush()
    doomed.flush()
    app = cli_app(str(logs), "--theme", "rltop-dark", "--poll", "0.2", "--follow", "calm")
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_until(
                pilot, lambda: app.session is not None and app.session.caught_up and len(_overview(app)) == 2
            )
            assert app.session.current == "calm"
            for step in range(6, 9):
                doomed.add_scalar("train/loss", math.nan, step)  # non-finite: critical at once
            doomed.flush()
            await wait_until(
                pilot, lambda: any("doomed is CRITICAL" in n for n in notifications(app)), timeout=20
            )
            assert app.session.current == "calm"  # picked by the user (--follow NAME): it stays
            assert "doomed" in app.session.attention
            assert "2 runs: 1 CRIT" in screen_lines(app)[0]
            # Showing the run clears its highlight.
            await app.switch_run("doomed")
            assert "doomed" not in app.session.attention
    finally:
        healthy.close()
        doomed.close()


async def test_following_the_worst_a_live_critical_takes_over_from_a_run_whose_criticals_are_over(tmp_path):
    """Both runs critical: the one whose NaN is happening now is worse than one finite again since."""
    logs = tmp_path / "logs"
    over = EventWriter(logs / "over")
    calm = EventWriter(logs / "calm")
    for step in range(1, 21):
        over.add_scalar("train/loss", math.nan if step in (5, 6) else 0.5, step)  # critical, latched
        calm.add_scalar("train/loss", 0.5, step)
    over.flush()
    calm.flush()
    app = cli_app(str(logs), "--theme", "rltop-dark", "--poll", "0.2")
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_until(
                pilot, lambda: app.session is not None and app.session.caught_up and len(_overview(app)) == 2
            )
            await wait_until(pilot, lambda: app.dashboard.shown_run == "over")
            shown = app.session.run_view("over")
            assert (shown.level, shown.live_level) == (Level.CRITICAL, Level.OK)
            for step in range(21, 24):
                calm.add_scalar("train/loss", math.nan, step)  # non-finite now: critical and active
            calm.flush()
            await wait_until(pilot, lambda: app.dashboard.shown_run == "calm", timeout=20)
            assert app.session.current == "calm" and not app.session.pinned
            calm_view = app.session.run_view("calm")
            assert (calm_view.level, calm_view.live_level) == (Level.CRITICAL, Level.CRITICAL)
    finally:
        over.close()
        calm.close()


# -- keys -------------------------------------------------------------------------------------------------


async def test_q_on_the_waiting_screen_exits_0_and_keys_never_land_in_a_hidden_filter(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    app = cli_app(str(logs), "--theme", "rltop-dark", "--poll", "0.2")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: "Waiting for training logs" in screen_text(app))
        assert app.focused is None
        await pilot.press("r", "a", "t", "i", "o")  # typed before any run exists
        write_run(logs / "run1", {"train/loss": [1.0, 0.5, 0.25]}, start=time.time() - 30)
        await wait_until(pilot, lambda: app.dashboard.board.cards)
        assert app.dashboard.filter_text == "" and all(card.display for card in app.dashboard.board.cards)
        assert "/ratio/" not in screen_lines(app)[0]
    (tmp_path / "empty").mkdir()
    app = cli_app(str(tmp_path / "empty"), "--theme", "rltop-dark")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: "Waiting for training logs" in screen_text(app))
        await pilot.press("q")
    assert app.return_code == 0


@pytest.mark.parametrize("quit_key", ["q", "ctrl+c"])
@pytest.mark.parametrize("key", ["r", "question_mark", "enter"])
async def test_q_and_ctrl_c_quit_from_every_screen(key, quit_key):
    app = preloaded_app("ppo_healthy", "ppo_unstable")
    async with app.run_test(size=(100, 30)) as pilot:
        await settled(pilot)
        await pilot.press(key)
        await wait_until(pilot, lambda: app.screen.id in ("runs", "help", "detail"))
        await pilot.press(quit_key)
    assert app.return_code == 0


async def test_a_burst_of_10_down_keys_moves_10_cards():
    app = preloaded_app("ppo_unstable")
    async with app.run_test(size=(40, 60)) as pilot:
        await settled(pilot)
        board = app.dashboard.board
        cards = [card for card in board.cards if card.display]
        board.focus_first()
        await wait_until(pilot, lambda: app.focused is cards[0])
        await burst(pilot, *["down"] * 10)
        assert app.focused is cards[10]
        await burst(pilot, *["up"] * 3, "j", "j", "k")
        assert app.focused is cards[8]


async def test_keys_typed_in_a_burst_after_slash_go_to_the_filter_and_after_enter_to_the_app():
    app = preloaded_app("ppo_unstable")
    async with app.run_test(size=(100, 30)) as pilot:
        await settled(pilot)
        await burst(pilot, "slash", *"ratio", "enter")
        await wait_until(pilot, lambda: app.dashboard.filter_text == "ratio")
        assert all("ratio" in card.tag for card in app.dashboard.board.cards if card.display)
        await burst(pilot, "slash", "backspace", "backspace", "enter", "q")  # q right after Enter
    assert app.return_code == 0


async def test_acknowledge_updates_the_header_the_alert_and_the_card_alike(tmp_path):
    # val/ratio goes critical (3.0, outside [0.5, 2]) and recovers: the episode is over, latched.
    ratio = [1.0] * 10 + [3.0] * 6 + [1.0] * 20
    write_run(
        tmp_path / "exp" / "runs" / "Nov29_21-53-12_vm",
        {"train/val/ratio": ratio, "train/objective/scores": [0.5] * 36},
    )
    app = preloaded_app(paths=[str(tmp_path)])
    async with app.run_test(size=(100, 30)) as pilot:
        await settled(pilot)
        card = app.dashboard.board.card("train/val/ratio")
        (item,) = [item for item in app.dashboard.alerts.items if item.finding.tag == "train/val/ratio"]
        assert "CRIT" in screen_lines(app)[0] and card.has_class("-crit") and item.alert.live
        assert not item.finding.active  # the episode is over: latched, red until seen
        item.focus()
        await wait_until(pilot, lambda: app.focused is item)
        await pilot.press("a")
        await wait_until(pilot, lambda: "CRIT" not in screen_lines(app)[0])
        card = app.dashboard.board.card("train/val/ratio")
        await wait_until(pilot, lambda: not card.has_class("-crit"))
        (item,) = [item for item in app.dashboard.alerts.items if item.finding.tag == "train/val/ratio"]
        assert not item.alert.live and item.has_class("-past")


async def test_a_filter_that_matches_nothing_says_so():
    app = preloaded_app("ppo_unstable")
    async with app.run_test(size=(100, 30)) as pilot:
        await settled(pilot)
        await pilot.press("slash", *"zzzz")
        await wait_until(pilot, lambda: "no tag matches /zzzz/ — Esc clears" in screen_text(app))
        await pilot.press("escape")
        await wait_until(pilot, lambda: "no tag matches" not in screen_text(app))
        assert all(card.display for card in app.dashboard.board.cards)


async def test_the_screenshot_command_saves_in_the_chosen_directory_and_says_where(tmp_path):
    app = preloaded_app("ppo_unstable", screenshot_dir=str(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await settled(pilot)
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert titles.count("Screenshot") == 1  # Textual's own (to the downloads folder) is replaced
        path = app.save_screenshot_here()
        assert path is not None and path.startswith(str(tmp_path)) and path.endswith(".svg")
        with open(path, encoding="utf-8") as saved:
            assert "<svg" in saved.read()
        await wait_until(pilot, lambda: f"screenshot saved: {path}" in notifications(app))


# -- alerts and finished runs --------------------------------------------------------------------------


async def test_the_alert_strip_takes_a_third_at_most_and_expands_what_matters_now():
    app = preloaded_app("ppo_unstable")
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot)
        strip = app.dashboard.alerts
        assert strip.region.height <= 24 // 3
        expanded = [item for item in strip.items if item.expanded or item.has_focus]
        assert [item.finding.tag for item in expanded] == ["train/policy/entropy_avg"]  # live, critical
        assert expanded[0].finding.active
        # One line per metric: a metric's episodes are one alert, which says how many it stands for.
        tags = [item.finding.tag for item in strip.items]
        assert len(tags) == len(set(tags))
        for item in strip.items:
            if item.alert.others:  # several rules on one metric, or one rule's several episodes: counted
                assert item.alert.fold_note in item.render().plain
        # A new, more severe live alert arrives while rltop placed the cursor: it follows.
        view = app.session.run_view(app.session.current)
        newcomer = Finding(
            Level.CRITICAL,
            "non_finite",
            view.name,
            "train/val/ratio",
            150,
            math.nan,
            "train/val/ratio is NaN at step 150",
            "Look at the loss",
            first_step=150,
            last_step=150,
            title="non-finite values",
        )
        await app.dashboard.show_run(dataclasses.replace(view, findings=[newcomer, *view.findings]), "")
        await wait_until(
            pilot, lambda: isinstance(app.focused, AlertItem) and app.focused.finding.tag == "train/val/ratio"
        )
        # The user moves: the focus stays where they put it, and the focused alert is the open one.
        await pilot.press("down")
        moved = app.focused.finding.tag
        await app.dashboard.show_run(view, "")
        await refreshed(pilot)  # a focus call show_run queued would have run by now
        assert app.focused.finding.tag == moved
        assert [item for item in strip.items if item.expanded] == []


async def test_a_finished_run_says_so_in_the_muted_colour():
    app = preloaded_app("grpo_healthy", seconds_after=2 * 3600 + 5)
    async with app.run_test(size=(100, 30)) as pilot:
        await settled(pilot)
        header = screen_lines(app)[0]
        assert "finished at step 200" in header and "2 h ago" in header and "no new point" not in header
        bar = app.dashboard.query_one("#header")
        rendered = bar.render()
        start = rendered.plain.index("finished at step 200")
        styles = {str(span.style) for span in rendered.spans if span.start <= start < span.end}
        assert styles == {str(bar.get_component_rich_style("header-bar--dim"))}


# -- names ------------------------------------------------------------------------------------------------


async def test_two_reward_functions_at_40_columns_show_distinct_whole_names():
    app = preloaded_app("grpo_healthy")
    async with app.run_test(size=(40, 60)) as pilot:
        await settled(pilot)
        rewards = [card for card in app.dashboard.board.cards if "/rewards/" in card.tag]
        assert len(rewards) == 4
        names = [card.render().plain.splitlines()[0].split()[0] for card in rewards]
        assert sorted(names) == [
            "contains_x_reward/mean",
            "contains_x_reward/std",
            "length_reward/mean",
            "length_reward/std",
        ]
        for card in rewards:  # the values line up with every other row's, on the line below
            lines = card.render().plain.splitlines()
            assert len(lines) == 2 and re.search(r"\s(ok[▲✖]?|WARN|CRIT)\s*$", lines[1])


async def test_a_seeded_and_resumed_folder_gets_distinct_short_names(tmp_path):
    seeded_and_resumed(tmp_path)
    app = preloaded_app(paths=[str(tmp_path)])
    async with app.run_test(size=(100, 30)) as pilot:
        await settled(pilot)
        rows = "\n".join(_overview(app))
        for name in (
            "grpo_seeds/seed_1",
            "grpo_seeds/seed_2",
            "grpo_resumed/Dec01_07-56-02",
            "grpo_resumed/Dec01_07-56-27",
        ):
            assert name in rows
        assert "runs/" not in rows and "_vm" not in rows
        shown = set(app.session.display_names().values())
        assert len(shown) == 4 and max(len(name) for name in shown) <= 28


async def test_a_240_character_run_name_keeps_the_overview_and_the_runs_list_on_screen(tmp_path):
    long = "experiment_" + "very_long_name_" * 15 + "seed_3"
    write_run(tmp_path / long, {"train/loss": [1.0, 0.5]})
    write_run(tmp_path / "日本語の実験", {"train/loss": [1.0, 0.6]})
    app = preloaded_app(paths=[str(tmp_path)])
    async with app.run_test(size=(80, 24)) as pilot:
        await settled(pilot)
        lines = _overview(app)
        assert len(lines) == 2 and all(line.rstrip().endswith(("loss 0.5", "loss 0.6")) for line in lines)
        assert _cells_to(lines, "step")  # wide characters do not shift the columns
        await pilot.press("r")
        await wait_until(pilot, lambda: app.screen.id == "runs")
        await wait_until(pilot, lambda: "日本語の実験" in screen_text(app))  # the table's rows are drawn
        text = screen_text(app)
        assert "seed_3" in text and "…" in text
        assert all(word in text for word in ("kind", "step", "health", "updated", "points"))


def _cells_to(lines: list[str], word: str) -> bool:
    """The word starts at the same terminal column on every line (measured in cells)."""
    from rich.cells import cell_len

    return len({cell_len(line[: line.index(word)]) for line in lines}) == 1


async def test_wide_characters_in_narrow_rows_keep_the_columns_aligned(tmp_path):
    from rich.cells import cell_len

    write_run(
        tmp_path / "実験",
        {"train/損失": [1.0, 0.5, 0.25], "train/😀reward": [0.1, 0.2, 0.3], "train/loss": [2.0, 1.0, 0.5]},
    )
    app = preloaded_app(paths=[str(tmp_path)])
    async with app.run_test(size=(40, 20)) as pilot:
        await settled(pilot)
        ends = set()
        for card in app.dashboard.board.cards:
            line = card.render().plain.splitlines()[-1]
            ends.add(cell_len(line.rstrip()))  # the level badge ends at the same terminal column
            assert cell_len(line) <= card.content_size.width
        assert len(ends) == 1, ends
