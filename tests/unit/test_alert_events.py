"""Alert events from successive verdicts of the real health engine: one per run and rule per episode."""

from __future__ import annotations

import numpy as np

from rltop.alerts.events import (
    ESCALATION,
    FINDING,
    FINISH,
    RECOVERY,
    STALL,
    AlertTracker,
    Gate,
)
from rltop.health.engine import HealthEngine
from rltop.health.findings import Level
from rltop.model.run import Run, Store

CLIPPED = "train/completions/clipped_ratio"  # the truncation rule: warn >= 0.25, critical >= 0.9
START = 1_800_000_000.0


class Live:
    """One run fed point by point, judged by a real engine, watched by a tracker."""

    def __init__(self, name: str = "grpo") -> None:
        self.store = Store()
        self.run: Run = self.store.run(name, f"/logs/{name}")
        self.engine = HealthEngine()
        self.tracker = AlertTracker()
        self.step = 0

    def log(self, count: int = 1, now: float | None = None, **values: float) -> list:
        """``count`` steps with these values (tag names with ``__`` for ``/``); return the events."""
        events = []
        for _ in range(count):
            self.step += 1
            for key, value in values.items():
                tag = key.replace("__", "/")
                self.run.add_points(
                    tag, np.array([self.step]), np.array([START + self.step]), np.array([value], dtype=float)
                )
            events += self.judge(now)
        return events

    def judge(self, now: float | None = None, caught_up: bool = True) -> list:
        health = self.engine.assess(self.run, START + self.step if now is None else now)
        return self.tracker.observe(self.run, health, caught_up)


def kinds(events) -> list[tuple[str, str]]:
    return [(event.kind, event.level.label) for event in events]


def test_nothing_is_news_during_the_first_read_then_live_problems_are_initial_findings():
    live = Live()
    for step in range(1, 7):
        live.step = step
        value = float("nan") if step == 6 else 1.0
        live.run.add_points("train/loss", np.array([step]), np.array([START + step]), np.array([value]))
        assert live.judge(caught_up=False) == []  # still reading what was on disk
    (event,) = live.judge(caught_up=True)
    assert (event.kind, event.level, event.initial) == (FINDING, Level.CRITICAL, True)
    assert event.rule == "non_finite"
    assert live.log(1, train__loss=float("nan")) == []


def test_a_finished_run_at_start_stays_quiet():
    live = Live()
    for step in range(1, 6):
        live.run.add_points("train/loss", np.array([step]), np.array([START + step]), np.array([np.nan]))
    live.run.add_points("train/train_runtime", np.array([5]), np.array([START + 5]), np.array([12.0]))
    live.step = 5
    assert live.judge() == []  # finished before we looked: history
    assert live.log(3, train__loss=float("nan")) == []  # and no finish event either


def test_an_idle_run_at_start_is_quiet_and_its_old_problems_never_reach_anyone():
    idle = Live("idle")
    for step in range(1, 31):
        idle.run.add_points("train/loss", np.array([step]), np.array([START + step]), np.array([np.nan]))
    idle.step = 30
    assert idle.judge(now=START + 86_400) == []  # a day old: stalled; what is wrong is not news
    events = idle.log(3, train__loss=1.0)  # it comes back: the NaN and the stall are over
    assert {(e.kind, e.rule) for e in events} == {(RECOVERY, "non_finite"), (RECOVERY, "stall")}
    gate = Gate(Level.WARN)
    assert [e for e in events if gate.admit(e) is not None] == []  # nobody was told they began
    assert kinds(idle.log(1, train__loss=float("nan"))) == [(FINDING, "critical")]  # new news


def test_one_finding_for_many_tags_going_nan_together_then_one_recovery():
    live = Live()
    live.log(5, train__loss=1.0, train__kl=0.1, train__entropy=2.0)
    assert kinds(live.log(5)) == []
    events = live.log(1, train__loss=float("nan"), train__kl=float("nan"), train__entropy=float("nan"))
    (event,) = events
    assert event.kind == FINDING and set(event.tags) == {"train/loss", "train/kl", "train/entropy"}
    assert live.log(3, train__loss=float("nan"), train__kl=float("nan"), train__entropy=float("nan")) == []
    recovered = live.log(3, train__loss=1.0, train__kl=0.1, train__entropy=2.0)
    assert kinds(recovered) == [(RECOVERY, "critical")]


def test_a_flickering_nan_is_one_episode_until_it_settles():
    live = Live()
    live.log(5, train__loss=1.0)
    events = []
    for _ in range(4):  # NaN, number, NaN, number...: never SETTLE_POINTS finite points in a row
        events += live.log(1, train__loss=float("nan"))
        events += live.log(1, train__loss=1.0)
    assert kinds(events) == [(FINDING, "critical")]
    events = live.log(3, train__loss=1.0)
    assert kinds(events) == [(RECOVERY, "critical")]
    assert kinds(live.log(1, train__loss=float("inf"))) == [(FINDING, "critical")]  # a new episode


def test_escalation_and_what_each_gate_hears():
    live = Live()
    live.log(5, train__completions__clipped_ratio=0.1)
    events = live.log(4, train__completions__clipped_ratio=0.4)
    events += live.log(5, train__completions__clipped_ratio=0.95)
    events += live.log(8, train__completions__clipped_ratio=0.1)
    assert kinds(events) == [(FINDING, "warn"), (ESCALATION, "critical"), (RECOVERY, "critical")]

    warn_gate, critical_gate = Gate(Level.WARN), Gate(Level.CRITICAL)
    heard_warn = [e for e in map(warn_gate.admit, events) if e is not None]
    heard_critical = [e for e in map(critical_gate.admit, events) if e is not None]
    assert kinds(heard_warn) == [(FINDING, "warn"), (ESCALATION, "critical"), (RECOVERY, "critical")]
    # The critical gate never heard the warn: the escalation is its first news, a finding.
    assert kinds(heard_critical) == [(FINDING, "critical"), (RECOVERY, "critical")]
    assert heard_critical[0].previous_level == Level.WARN


def test_a_gate_passes_each_episode_once_even_when_events_repeat():
    live = Live()
    live.log(5, train__loss=1.0)
    (event,) = live.log(1, train__loss=float("nan"))
    gate = Gate(Level.CRITICAL)
    assert gate.admit(event) is not None
    assert gate.admit(event) is None  # the same episode told again: rate-limited
    assert gate.admit(event.but(kind=RECOVERY)) is not None
    assert gate.admit(event.but(kind=RECOVERY)) is None
    quiet = Gate(Level.CRITICAL, recoveries=False, finishes=False)
    assert quiet.admit(event) is not None and quiet.admit(event.but(kind=RECOVERY)) is None


def test_finish_reports_pending_recoveries_then_the_finish():
    live = Live()
    live.log(5, train__loss=1.0)
    assert kinds(live.log(1, train__loss=float("nan"))) == [(FINDING, "critical")]
    live.log(1, train__loss=1.0)  # finite again, not settled yet
    events = live.log(1, train__loss=1.0, train__train_runtime=42.0)
    assert kinds(events) == [(RECOVERY, "critical"), (FINISH, "critical")]
    assert events[1].findings == 1
    assert live.log(2, train__loss=1.0) == []  # finished once


def test_stall_of_a_run_written_while_watching_then_recovery():
    live = Live()
    live.log(30, train__loss=1.0)
    events = live.judge(now=START + live.step + 3600)
    assert kinds(events) == [(STALL, "critical")]
    assert Gate(Level.CRITICAL).admit(events[0]).kind == STALL
    back = live.log(1, train__loss=1.0)
    assert kinds(back) == [(RECOVERY, "critical")] and back[0].rule == "stall"


def test_forget_drops_the_run():
    live = Live()
    live.log(5, train__loss=1.0)
    live.log(1, train__loss=float("nan"))
    live.tracker.forget(live.run.name)
    # Seen anew (a run re-created under the same name): its live problem is news again.
    assert kinds(live.judge()) == [(FINDING, "critical")]
