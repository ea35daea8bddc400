"""The dashboard's alerts: the hook runs from the live app (also while paused), the bell, the title."""

from __future__ import annotations

from helpers.live import records, write_hook
from helpers.ui import cli_app, wait_until

from rltop.health.engine import RunHealth
from rltop.health.findings import Level
from rltop.ingest.sources.tfevents.tfrecord.writer import EventWriter
from rltop.ui.alerting import title_text


def verdict(level: Level, empty: bool = False) -> RunHealth:
    return RunHealth("r", "grpo", [], {"train/loss": level}, empty)


def test_title_text():
    assert title_text([]) == "rltop"
    assert title_text([verdict(Level.OK, empty=True)]) == "rltop"
    assert title_text([verdict(Level.OK)]) == "● rltop: ok"
    assert title_text([verdict(Level.WARN), verdict(Level.WARN), verdict(Level.OK)]) == "▲ rltop: 2 WARN"
    assert title_text([verdict(Level.CRITICAL), verdict(Level.WARN)]) == "✖ rltop: 1 CRIT, 1 WARN"


async def test_hook_bell_and_title_from_the_live_dashboard_even_when_paused(tmp_path):
    hook, calls, _env = write_hook(tmp_path)
    logs = tmp_path / "logs"
    with EventWriter(logs / "grpo") as writer:
        for step in range(1, 6):
            writer.add_scalar("train/loss", 1.0 + step / 10, step)
        writer.flush()
        app = cli_app(str(logs), "--theme", "rltop-dark", "--poll", "0.2", "--on-alert", str(hook))
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_until(pilot, lambda: app.dashboard.board.card("train/loss") is not None)
            await wait_until(pilot, lambda: app._alerts.shown_title == "● rltop: ok")
            writer.add_scalar("train/loss", float("nan"), 6)
            writer.flush()
            await wait_until(pilot, lambda: len(records(calls)) == 1, timeout=30)
            assert records(calls)[0]["event"] == "finding" and records(calls)[0]["rule"] == "non_finite"
            assert app._alerts.rang == 1
            assert app._alerts.shown_title == "✖ rltop: 1 CRIT"
            await pilot.press("p")  # the screen freezes; the alerts do not
            for step in range(7, 10):
                writer.add_scalar("train/loss", 1.0, step)
            writer.flush()
            await wait_until(pilot, lambda: len(records(calls)) == 2, timeout=30)
            assert records(calls)[1]["event"] == "recovery"
            assert app._alerts.rang == 1  # a recovery does not ring


async def test_a_failing_hook_is_a_toast(tmp_path):
    hook, _calls, _env = write_hook(tmp_path, "#!/bin/sh\necho 'disk full' >&2\nexit 3\n")
    logs = tmp_path / "logs"
    with EventWriter(logs / "grpo") as writer:
        for step in range(1, 6):
            writer.add_scalar("train/loss", 1.0, step)
        writer.add_scalar("train/loss", float("nan"), 6)
        writer.flush()
        app = cli_app(str(logs), "--theme", "rltop-dark", "--on-alert", str(hook))
        async with app.run_test(size=(120, 30)) as pilot:

            def toasts() -> list[str]:
                return [n.message for n in app._notifications]  # what the toast rack shows

            await wait_until(pilot, lambda: toasts(), timeout=30)
            assert toasts() == [
                "--on-alert command exited with status 3: disk full (said once; later "
                "failures of this kind are only counted)"
            ]
