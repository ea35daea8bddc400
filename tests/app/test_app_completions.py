"""The completions screen: opened from an alert, the dashboard and the detail cursor; keys; live."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers.paths import FIXTURES
from helpers.ui import cli_app, focus_as_user, preloaded_app, wait_until
from helpers.ui import screen_text as raw_screen_text

from rltop.ui.screens.completions import CompletionsScreen
from rltop.ui.screens.detail import DetailScreen
from rltop.ui.widgets.alert_item import AlertItem

COLLAPSE = FIXTURES / "trl2" / "grpo_collapse"


def screen_text(app) -> str:
    """The screen's words, one space between them (the rows wrap at the width)."""
    return " ".join(raw_screen_text(app).split())


def collapse_app():
    return preloaded_app(paths=[str(COLLAPSE)])


async def settled(pilot) -> None:
    """The dashboard shows its run and placed its cursor (its own focus calls all ran)."""
    app = pilot.app
    await wait_until(pilot, lambda: app.dashboard.board.cards and app.focused is not None)
    await wait_until(pilot, lambda: app._flush_timer is None and not app.session.dirty)
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


def alert(app, rule: str) -> AlertItem:
    """The alert of ``rule``, focused as the user would (the dashboard no longer moves the cursor)."""
    item = next(item for item in app.dashboard.query(AlertItem) if item.finding.rule == rule)
    focus_as_user(app, item)
    return item


async def shown(pilot, step: int) -> CompletionsScreen:
    """Wait for the completions screen to show the rows of ``step``."""
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, CompletionsScreen))
    screen = pilot.app.screen
    await wait_until(pilot, lambda: screen.loaded is not None and screen.loaded.summary.step == step)
    await pilot.pause()
    return screen


async def test_enter_on_an_alert_opens_the_completions_at_its_step():
    app = collapse_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settled(pilot)
        item = alert(app, "truncation")
        assert item.finding.step == 9  # "reached 1 at step 9": not logged in the fixture
        await pilot.pause()
        footer = raw_screen_text(app).splitlines()[-1]
        assert "⏎ Completions" in footer and "Detail" not in footer  # what Enter does here
        await pilot.press("enter")
        await shown(pilot, 4)  # the nearest logged step (kept: 1-4 and 34-60)
        text = screen_text(app)
        assert "step 4 (nearest logged to 9)" in text and "from train/completions/clipped_ratio" in text
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.dashboard)
        alert(app, "entropy_collapse")
        await pilot.press("e")
        await shown(pilot, 60)
        text = screen_text(app)
        assert "16 of 16 identical within their group" in text and "×8 identical" in text
        assert "x" * 16 in text and "at cap" in text


async def test_keys_step_sort_and_filter():
    app = collapse_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settled(pilot)
        alert(app, "entropy_collapse")
        await pilot.press("e")  # from the dashboard: the focused alert's step
        screen = await shown(pilot, 60)
        await pilot.press("home")
        screen = await shown(pilot, 1)
        await pilot.press("right")
        screen = await shown(pilot, 2)
        assert "same rows as step 1" in screen_text(app)
        await pilot.press("end", "left")
        screen = await shown(pilot, 59)
        await pilot.press("s")
        assert screen.sort == "reward" and "sort: reward" in screen_text(app)
        await pilot.press("u")  # 16 rows, 16 identical: one entry per group
        assert "distinct completions only" in screen_text(app) and screen_text(app).count("#") == 2
        await pilot.press("u")
        await pilot.press("home")
        screen = await shown(pilot, 1)
        await pilot.press("slash")
        await pilot.press(*"xyz_no_such")
        await wait_until(pilot, lambda: "no completion contains" in screen_text(app))
        await pilot.press("enter")  # the bar closes, the filter stays
        assert screen.filter_text == "xyz_no_such"
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.dashboard)


async def test_from_the_detail_cursor_step():
    app = collapse_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settled(pilot)
        tag = next(t for t in app.store.runs[app.session.current].series if t.endswith("/entropy"))
        app.open_detail(tag)
        await wait_until(pilot, lambda: isinstance(app.screen, DetailScreen))
        detail = app.screen
        await wait_until(pilot, lambda: detail.chart.data.series is not None)
        await pilot.press("shift+left", "left", "left")  # step 60 - 12
        await pilot.press("e")
        screen = await shown(pilot, 48)
        assert "from train/entropy" in screen_text(app) and screen.asked == 48
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is detail)


async def test_hostile_completions_are_drawn_inert(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    run = tmp_path / "out" / "hostile"
    shutil.copytree(COLLAPSE / "runs", run / "runs")
    (run / "completions").mkdir()
    texts = ["\x1b]0;pwned\x07[bold red]markup[/] \u202eevil", "y" * 3000, "two\nlines"]
    pq.write_table(
        pa.table(
            {
                "step": pa.array([60] * 3, pa.int64()),
                "prompt": ["[b]p[/b]"] * 3,
                "completion": texts,
                "r": [1.0, 0.0, 0.5],
                "advantage": [0.1, -0.2, 0.1],
            }
        ),
        run / "completions" / "completions_00060.parquet",
    )
    app = preloaded_app(paths=[str(run)])
    async with app.run_test(size=(60, 30)) as pilot:
        await settled(pilot)
        await pilot.press("e")
        screen = await shown(pilot, 60)
        lines = [strip.text for strip in app.screen._compositor.render_strips()]
        text = "\n".join(lines)
        assert "\\x1b]0;pwned\\x07[bold red]markup[/] \\u202eevil" in text and "[b]p[/b]" in text
        assert "\x1b" not in text and "\u202e" not in text
        assert all(len(line) <= 60 for line in lines)  # folded to the width, not cut off
        body = screen.query_one("#completions-body").render()
        assert str(body).count("y") >= 3000


@pytest.mark.parametrize("poll", [None, 0.2], ids=["native", "polling"])
async def test_parquet_files_appearing_while_the_app_runs(tmp_path, poll):
    """TRL writes one file per logging step: the index grows live and an open screen follows it."""
    out = tmp_path / "out" / "grpo"
    shutil.copytree(COLLAPSE / "runs", out / "runs")
    (out / "completions").mkdir()
    files = sorted((COLLAPSE / "completions").iterdir())

    def write(path: Path) -> None:
        data = path.read_bytes()
        target = out / "completions" / path.name
        with open(target, "wb") as handle:  # in place, as pandas does: a reader may see it torn
            handle.write(data[: len(data) // 2])
            handle.flush()
            handle.write(data[len(data) // 2 :])

    for path in files[:2]:
        write(path)
    app = cli_app(str(out), "--theme", "rltop-dark", *(["--poll", str(poll)] if poll else []))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: app.session is not None and app.session.current is not None)
        run = app.store.runs[app.session.current]
        await wait_until(pilot, lambda: run.completions.steps == [1, 2])
        await wait_until(pilot, lambda: app.dashboard.board.cards and app.focused is not None)
        app.open_completions(None)
        await shown(pilot, 2)
        for path in files[2:5]:
            write(path)
        await wait_until(pilot, lambda: run.completions.steps == [1, 2, 3, 4, 34], timeout=30)
        screen = await shown(pilot, 34)  # following the newest step

        def evidence() -> tuple[str, ...]:
            findings = app.session.health[app.session.current].findings
            return next(f.evidence for f in findings if f.rule == "entropy_collapse")

        # The findings quote the newest logged step as soon as it arrives (no new scalar needed).
        await wait_until(pilot, lambda: evidence() and " at step 34 " in evidence()[0], timeout=30)
        assert "step 34 5/5" in screen_text(app)
        await pilot.press("home")  # a step picked by hand stays put while files arrive
        await shown(pilot, 1)
        write(files[5])
        await wait_until(pilot, lambda: len(run.completions) == 6, timeout=30)
        # The screen hears of the new file with the next repaint (live repaints are spaced by their cost).
        await wait_until(pilot, lambda: "1/6" in screen_text(app), timeout=30)
        assert screen.loaded.summary.step == 1
        (out / "completions" / files[0].name).unlink()  # deleted: the index forgets the step
        await wait_until(pilot, lambda: run.completions.at(1) is None, timeout=30)


async def test_a_large_step_draws_the_first_rows_and_says_so(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rltop.ui.screens.completions import MAX_SHOWN

    run = tmp_path / "out" / "large"
    shutil.copytree(COLLAPSE / "runs", run / "runs")
    (run / "completions").mkdir()
    rows = MAX_SHOWN + 56
    table = pa.table(
        {
            "step": pa.array([60] * rows, pa.int64()),
            "prompt": [f"p{i // 8}" for i in range(rows)],
            "completion": [f"answer {i}" for i in range(rows)],
            "r": [float(i) for i in range(rows)],
            "advantage": [0.0] * rows,
        }
    )
    pq.write_table(table, run / "completions" / "completions_00060.parquet")
    app = preloaded_app(paths=[str(run)])
    async with app.run_test(size=(100, 30)) as pilot:
        await settled(pilot)
        app.open_completions(None)
        screen = await shown(pilot, 60)
        body = str(screen.query_one("#completions-body").render())
        assert f"{MAX_SHOWN} of {rows} shown" in body and "answer 199" in body and "answer 200" not in body
        await pilot.press("s")  # best reward first: the last rows come first
        body = str(screen.query_one("#completions-body").render())
        assert "answer 255" in body and "answer 0\n" not in body


async def test_e_on_a_completion_finding_opens_the_completions_it_quotes():
    # The run writes 'xxxxxxxxxxxxxxxx' for every completion from step ~36: the repetitive-completions
    # finding quotes them and its step is the logged step that shows them, where `e` opens.
    app = collapse_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settled(pilot)
        item = alert(app, "repetitive_completions")
        step = item.finding.step
        assert "'xxxxxxxxxxxxxxxx'" in item.finding.message
        await pilot.press("e")
        await shown(pilot, step)
        text = screen_text(app)
        assert f"step {step}" in text and "nearest" not in text and "x" * 16 in text
