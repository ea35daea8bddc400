"""Points per second per run (`rltop.ui.logic.rates` and the session's header): what a run logs now,
never its history, and the rate of the run shown, not of all runs."""

from __future__ import annotations

import numpy as np
import pytest

from rltop.ingest.feed import APPEARED, RELOADED, ChangeBatch, PointsBatch, RunEvent
from rltop.model.series import Points
from rltop.ui.logic.rates import MIN_SPAN, RATE_WINDOW, RunRates
from rltop.ui.session import Session


def test_a_steady_run_reads_its_own_rate():
    rates = RunRates()
    rates.begin("a", 0.0)
    for second in range(1, 31):  # 50 points a second
        rates.add("a", 50, float(second))
    assert rates.rate("a", 30.0) == pytest.approx(50.0)


def test_the_rate_is_right_from_the_first_seconds_not_diluted_by_the_window():
    rates = RunRates()
    rates.begin("a", 100.0)
    rates.add("a", 50, 101.0)
    rates.add("a", 50, 102.0)
    assert rates.rate("a", 102.0) == pytest.approx(50.0)  # not 10 (100 points / the 10 s window)


def test_a_delivery_right_after_the_start_is_not_a_burst():
    rates = RunRates()
    rates.begin("a", 100.0)
    rates.add("a", 10, 100.05)
    assert rates.rate("a", 100.05) == pytest.approx(10 / MIN_SPAN)


def test_the_first_delivery_of_a_run_not_begun_is_its_history():
    rates = RunRates()
    rates.add("new", 120_000, 5.0)  # the whole history of a run found late
    assert rates.rate("new", 5.0) == 0.0
    rates.add("new", 60, 6.0)
    assert rates.rate("new", 6.0) == pytest.approx(60.0)


def test_a_run_that_stops_logging_drops_to_zero_after_the_window():
    rates = RunRates()
    rates.begin("a", 0.0)
    for second in range(1, 11):
        rates.add("a", 20, float(second))
    assert rates.rate("a", 10.0) == pytest.approx(20.0)
    assert rates.rate("a", 10.0 + RATE_WINDOW) == 0.0


def test_runs_are_counted_apart_and_forgotten():
    rates = RunRates()
    for run in ("a", "b"):
        rates.begin(run, 0.0)
    for second in range(1, 11):
        rates.add("a", 10, float(second))
        rates.add("b", 1000, float(second))
    assert rates.rate("a", 10.0) == pytest.approx(10.0)
    assert rates.rate("b", 10.0) == pytest.approx(1000.0)
    rates.forget("b")
    assert rates.rate("b", 10.0) == 0.0 and rates.rate(None, 10.0) == 0.0


def _batch(run: str, first: int, count: int, tags: int = 5, events: list | None = None) -> ChangeBatch:
    steps = np.arange(first, first + count, dtype=np.int64)
    return ChangeBatch(
        points=[PointsBatch(run, f"train/t{i}", Points(steps.copy(), steps * 1.0, np.ones(count)))
                for i in range(tags)],
        changed_runs={run: f"/logs/{run}"},
        events=events or [],
    )  # fmt: skip


def test_the_header_shows_the_shown_runs_rate_and_never_a_found_runs_history(monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr("rltop.ui.session.time.monotonic", lambda: clock[0])
    session = Session(clock=lambda: 2_000_000_000.0)
    session.apply(_batch("a", 1, 100))  # the first read (not live yet)
    session.apply(ChangeBatch(caught_up=True))
    session.choose_run()
    assert session.current == "a"
    for second in range(1, 6):  # a: 1 step of 5 tags a second
        clock[0] += 1.0
        session.apply(_batch("a", 100 + second, 1))
    assert session.rate() == pytest.approx(5.0)
    # A run appears while the dashboard is open, with 20,000 steps of history (100,000 points).
    session.apply(_batch("b", 1, 20_000, events=[RunEvent(APPEARED, "b", "new run b", "/logs/b")]))
    assert session.rate("b") == 0.0
    assert session.rate() == pytest.approx(5.0)  # the shown run's rate, not a + b
    assert session.header(None, "").rate_text == "5.0 pts/s"
    clock[0] += 1.0
    session.apply(_batch("a", 106, 1))
    session.apply(_batch("b", 20_001, 10, tags=5))  # then b logs 50 points in that second
    assert session.rate("b") == pytest.approx(50.0)
    assert session.header(None, "").rate_text == "5.0 pts/s"


def test_a_run_read_again_after_a_rewrite_starts_its_rate_over(monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr("rltop.ui.session.time.monotonic", lambda: clock[0])
    session = Session(clock=lambda: 2_000_000_000.0)
    session.apply(ChangeBatch(caught_up=True))
    session.apply(_batch("a", 1, 10))  # found live: history
    for second in range(1, 4):
        clock[0] += 1.0
        session.apply(_batch("a", 10 + second, 1))
    assert session.rate("a") == pytest.approx(5.0)
    clock[0] += 1.0
    session.apply(_batch("a", 1, 5_000, events=[RunEvent(RELOADED, "a", "a was rewritten", "/logs/a")]))
    assert session.rate("a") == 0.0
