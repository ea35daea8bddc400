"""``rltop tail`` says a stall with the health engine's own rule, from what it keeps of each run.

tail holds no points (`rltop.live.activity.ActivityLog` keeps a few dozen wall times a tag), so the
rule reads an `Activity`; the engine builds one from the held run. Both must be the same activity,
or tail and the dashboard would disagree about one run (issue 29: "the stall verdict is the health
engine's alone").
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from helpers.paths import FIXTURES
from helpers.watcher import EventLog

from rltop.commands.tail import _Tail
from rltop.health.calibration import Calibration
from rltop.health.findings import Level
from rltop.health.rules.stall import Activity, judge_stall
from rltop.health.settings import Rules
from rltop.ingest.feed import ChangeBatch, apply_batch
from rltop.ingest.follow.run_tracker import RunTracker
from rltop.live.activity import ActivityLog
from rltop.model.run import Store

PARAMS = Rules.defaults()["stall"]
WALL = 1.7e9  # helpers.watcher dates the point of step s at WALL + s


def first_read(root, clock=None) -> tuple[RunTracker, ChangeBatch]:
    """A tracker on ``root`` and the batch of everything already on disk."""
    tracker = RunTracker([str(root)], **({"clock": clock} if clock else {}))
    tracker.rescan()
    tracker.read_dirty(lambda: False, lambda: None)
    batch = tracker.take_batch()
    batch.initial = True
    return tracker, batch


def read_more(tracker: RunTracker, arrived: float) -> ChangeBatch:
    """The batch of what the runs gained since, as delivered at ``arrived`` (the watcher's clock)."""
    tracker.mark_due(everything=True)
    tracker.read_dirty(lambda: False, lambda: None)
    batch = tracker.take_batch()
    batch.time, batch.live = arrived, True
    return batch


def same_activity(kept: Activity, held: Activity) -> None:
    assert kept.busiest_walls.tolist() == held.busiest_walls.tolist(), kept.name
    assert {**vars(kept), "busiest_walls": None} == {**vars(held), "busiest_walls": None}


@pytest.mark.parametrize("tree", ["trl", "trl2", "verl", "wandb", "seeds"])
def test_the_activity_tail_keeps_is_the_one_the_engine_reads_of_the_held_run(tree):
    _, batch = first_read(FIXTURES / tree)
    store, log = Store(), ActivityLog(PARAMS)
    log.apply(batch)
    apply_batch(store, batch)
    assert store.runs
    for name, run in store.runs.items():
        kept, held = log.activity(name), Activity.of_run(run)
        same_activity(kept, held)
        calibration = Calibration.from_config(run.config)
        assert log.calibration(name) == calibration
        newest = run.last_point_wall_time or WALL
        for age in (60.0, 3600.0, 86400.0 * 30):
            ours = judge_stall(kept, newest + age, PARAMS, calibration)
            theirs = judge_stall(held, newest + age, PARAMS, calibration)
            assert (ours and (ours.level, ours.message, ours.advice)) == (
                theirs and (theirs.level, theirs.message, theirs.advice)
            )


def test_a_restart_from_an_earlier_step_is_dropped_as_the_store_drops_it(tmp_path):
    log_file = EventLog(tmp_path / "run")
    log_file.add("a", range(1, 200))
    log_file.add("b", range(1, 150))
    tracker, batch = first_read(tmp_path)
    store, log = Store(), ActivityLog(PARAMS)
    log.apply(batch)
    apply_batch(store, batch)
    log_file.add("a", range(120, 130))  # resumed at step 120: a's points from 120 on are replaced
    batch = read_more(tracker, WALL + 500)
    log.apply(batch)
    apply_batch(store, batch)
    (run,) = store.runs.values()
    assert len(run.series["a"]) == 129 and len(run.series["b"]) == 149  # b is the busiest now
    same_activity(log.activity("run"), Activity.of_run(run))


def tail_with(log: ActivityLog) -> _Tail:
    return _Tail("jsonl", activity=log)


def test_a_followed_run_stalls_once_per_level_and_pause_and_an_old_run_never(tmp_path, capsys):
    clock = [WALL + 100]
    old = EventLog(tmp_path / "old")
    old.add("x", [1])
    os.utime(old.path, (WALL - 3600, WALL - 3600))  # finished an hour before: not news
    live = EventLog(tmp_path / "seed_1" / "runs" / "Nov29_21-47-47_vm")  # named as on screen: seed_1
    live.add("x", range(1, 50))  # a point a second (steps 1-49)
    tracker, batch = first_read(tmp_path, clock=lambda: clock[0])
    tail = tail_with(ActivityLog(PARAMS))
    tail.show(batch)
    live.add("x", range(50, 100))  # the run grows while tail follows it: newest point at WALL + 99
    tail.show(read_more(tracker, WALL + 99))
    capsys.readouterr()
    tail.say_stalls(WALL + 99 + 170)  # under the 3 min floor
    assert capsys.readouterr().err == ""
    tail.say_stalls(WALL + 99 + 181)
    tail.say_stalls(WALL + 99 + 300)
    warned = capsys.readouterr().err.splitlines()
    assert len(warned) == 1 and "warning" in warned[0]
    assert (
        "run seed_1 stopped at step 99: no new point for 3 min (last at step 99; usual gap 1 s)" in warned[0]
    )
    assert "runs/Nov29" not in warned[0]  # the display name, not the path
    tail.say_stalls(WALL + 99 + 601)
    (critical,) = capsys.readouterr().err.splitlines()
    assert "critical after 10 min" in critical
    tail.say_stalls(WALL + 99 + 9000)
    assert capsys.readouterr().err == ""  # said once; "old" never
    live.add("x", [100])  # new points: a later pause is said again
    tail.show(read_more(tracker, WALL + 100))
    capsys.readouterr()
    tail.say_stalls(WALL + 100 + 200)
    assert "no new point for 3 min" in capsys.readouterr().err


def test_the_usual_gap_under_a_second_keeps_its_decimals(tmp_path):
    log_file = EventLog(tmp_path / "fast")
    with open(log_file.path, "ab") as handle:  # a point every 0.2 s
        from helpers.watcher import frame_record

        from rltop.ingest.sources.tfevents.tfrecord.writer import encode_event, scalar_value

        for step in range(1, 40):
            handle.write(frame_record(encode_event(WALL + step * 0.2, step, scalar_value("x", 1.0))))
    _, batch = first_read(tmp_path)
    log = ActivityLog(PARAMS)
    log.apply(batch)
    (finding,) = log.stalls(WALL + 8 + 400)
    assert finding.level == Level.WARN and "usual gap 0.2 s" in finding.message
    assert np.isclose(log.activity("fast").busiest_walls[-1], WALL + 39 * 0.2)


def test_points_that_keep_arriving_are_news_whatever_the_trainer_dates_them(tmp_path):
    # The trainer's clock runs 3 years behind ours (a node without NTP, or replayed logs): its points
    # are dated long ago, yet new ones keep arriving. Quiet time counts from their arrival.
    live = EventLog(tmp_path / "run")
    live.add("x", range(1, 50))
    tracker, batch = first_read(tmp_path)
    log = ActivityLog(PARAMS)
    log.apply(batch)
    live.add("x", range(50, 60))
    now = WALL + 3 * 365 * 86400.0
    log.apply(read_more(tracker, now))
    assert log.stalls(now + 60) == []
    (finding,) = log.stalls(now + 200)
    assert "no new point for 3 min" in finding.message
