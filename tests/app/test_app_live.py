"""The dashboard on live files: waiting for the first run, points from a real writer, hostile names."""

from __future__ import annotations

import json

from helpers.ui import cli_app, refreshed, screen_lines, screen_text, settled, wait_until

from rltop.ingest.sources.tfevents.tfrecord.writer import EventWriter
from rltop.ui.screens.detail import DetailScreen
from rltop.ui.widgets.metric_card import MetricCard


async def test_waits_for_the_first_run_then_shows_points_from_a_real_writer(tmp_path):
    from tensorboardX import SummaryWriter  # the test extra: an independent, real writer

    logs = tmp_path / "logs"
    logs.mkdir()
    app = cli_app(str(logs), "--theme", "rltop-dark")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: "Waiting for training logs" in screen_text(app))
        assert str(logs) in screen_text(app).replace("\n", "")
        # tensorboardX writes from its own thread and flushes what it has every flush_secs
        # (SummaryWriter.flush() alone may run before that thread dequeued the events).
        writer = SummaryWriter(logdir=str(logs / "run1"), flush_secs=1)
        for step in range(1, 6):
            writer.add_scalar("train/val/ratio", 1.0 + step / 1000, step)
            writer.add_scalar("train/loss", 0.5 / step, step)
        writer.flush()
        await wait_until(pilot, lambda: app.dashboard.board.card("train/loss") is not None)
        await wait_until(pilot, lambda: "step 5" in screen_lines(app)[0])
        assert "run1" in screen_lines(app)[0]
        # More points while the dashboard is open: the card and the header follow.
        writer.add_scalar("train/loss", 42.5, 6)
        writer.flush()
        await wait_until(pilot, lambda: app.dashboard.board.card("train/loss").model.stats.last == 42.5)
        await wait_until(pilot, lambda: "42.5" in screen_text(app) and "step 6" in screen_lines(app)[0])
        # A second run appearing later is listed without stealing the screen.
        other = SummaryWriter(logdir=str(logs / "run2"), flush_secs=1)
        other.add_scalar("train/loss", 1.0, 1)
        other.flush()
        await wait_until(pilot, lambda: "run2" in app.store.runs)
        await wait_until(pilot, lambda: "2 runs: all ok" in screen_lines(app)[0])
        assert app.session.current == "run1"  # as healthy as run1: the screen does not flip
        writer.close()
        other.close()


async def test_pause_freezes_the_screen_while_points_keep_arriving_in_polling_mode(tmp_path):
    logs = tmp_path / "logs"
    with EventWriter(logs / "run") as writer:
        writer.add_scalar("train/loss", 1.0, 1)
        writer.flush()
        app = cli_app(str(logs), "--theme", "rltop-dark", "--poll", "0.2")
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_until(pilot, lambda: app.dashboard.board.card("train/loss") is not None)
            # The header is painted on the next refresh after the first card: wait for it.
            await wait_until(pilot, lambda: "polling 0.2 s" in screen_lines(app)[0])
            await pilot.press("p")
            writer.add_scalar("train/loss", 7.25, 2)
            writer.flush()
            await wait_until(pilot, lambda: app.store.runs["run"].last_step == 2)
            await wait_until(pilot, lambda: "PAUSED +1" in screen_lines(app)[0])
            # A repaint asked for before the pause has fired (and drawn nothing), and the screen was
            # refreshed after it: new points would be on screen by now.
            await wait_until(pilot, lambda: app._flush_timer is None)
            await refreshed(pilot)
            assert "7.25" not in screen_text(app)
            await pilot.press("p")
            await wait_until(pilot, lambda: "7.25" in screen_text(app))


EVIL_RUN = "[bold red]run\x1b]0;pwned\x07"
EVIL_TAG = "train/[blink]tag\x1b[2J"
EVIL_CONFIG = {"learning_rate": "[reverse]\x1b]0;title\x07", "beta": 0.04}


async def test_escape_sequences_and_markup_in_names_and_config_are_shown_literally(tmp_path):
    with EventWriter(tmp_path / EVIL_RUN) as writer:
        writer.add_text("args/text_summary", json.dumps(EVIL_CONFIG), 0)
        for step in range(1, 4):
            writer.add_scalar(EVIL_TAG, float(step), step)
        writer.add_scalar(EVIL_TAG, float("nan"), 4)  # also a finding whose message names the tag
    app = cli_app(str(tmp_path), "--theme", "rltop-dark")
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until(pilot, lambda: app.dashboard.board.card(EVIL_TAG) is not None)
        await settled(pilot)  # the header, the alerts and the cards are drawn
        text = screen_text(app)
        assert "\x1b" not in text and "\x07" not in text
        assert "[bold red]run\\x1b]0;pwned\\x07" in text  # the run name, literally
        assert "[blink]tag\\x1b[2J" in text  # the tag, literally (card title and alert)
        card = app.dashboard.board.card(EVIL_TAG)
        assert isinstance(card, MetricCard)
        app.open_detail(EVIL_TAG)
        await wait_until(pilot, lambda: isinstance(app.screen, DetailScreen))
        # The info pane (with the config) is filled after the screen's first refresh: wait for
        # that state, not for a duration (on a busy machine 0.2 s was not always enough).
        await wait_until(pilot, lambda: "learning_rate" in screen_text(app))
        detail = screen_text(app)
        assert "\x1b" not in detail
        assert "learning_rate [reverse]\\x1b]0;title\\x07" in detail


async def test_the_first_read_shows_the_progress_the_watcher_tells(tmp_path, monkeypatch):
    """The watcher holds a first read's points for one delivery and tells how far it got: the
    dashboard shows that count while it waits for the points."""
    import threading

    from rltop.ingest.follow import watcher as watcher_module

    started: list = []
    monkeypatch.setattr(watcher_module.Watcher, "start", lambda self: started.append(self))
    logs = tmp_path / "logs"
    logs.mkdir()
    app = cli_app(str(logs), "--theme", "rltop-dark")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: started)
        teller = threading.Thread(target=started[0].on_progress, args=(1_234_567, 4))  # as the watcher does
        teller.start()
        teller.join()
        await wait_until(pilot, lambda: "1,234,567 points in 4 run(s) so far" in screen_text(app))
        assert not app.session.caught_up and not app.store.runs
