"""The repaint policy (`rltop.ui.logic.repaint`), without a screen: new data is drawn within a
quarter of a second whatever drawing costs, and a repaint redraws only the parts that changed."""

from __future__ import annotations

import pytest

from rltop.ui.logic.repaint import COALESCE, MIN_GAP, RepaintSchedule, plan_repaint


def test_the_first_change_after_a_quiet_spell_is_drawn_at_once():
    schedule = RepaintSchedule()
    assert schedule.request(100.0) == pytest.approx(COALESCE)
    assert schedule.due == pytest.approx(100.0 + COALESCE)


def test_a_stream_of_changes_is_drawn_every_min_gap_and_never_later():
    schedule = RepaintSchedule()
    now, drawn = 0.0, []
    # A point every 20 ms for 3 s: a repaint starts when its timer says, and each change asks for one.
    while now < 3.0:
        if schedule.due is not None and schedule.due <= now:
            schedule.begin(now)
            drawn.append(now)
        schedule.request(now)
        now = round(now + 0.02, 6)
    gaps = [later - earlier for earlier, later in zip(drawn, drawn[1:])]
    assert len(drawn) >= 11
    assert all(gap <= MIN_GAP + 0.02 + 1e-9 for gap in gaps)  # never spaced out beyond the gap
    assert all(gap >= MIN_GAP - 1e-9 for gap in gaps)  # at most four a second


def test_a_repaint_already_scheduled_soon_enough_is_kept():
    schedule = RepaintSchedule()
    schedule.begin(10.0)
    delay = schedule.request(10.05)
    assert delay == pytest.approx(MIN_GAP - 0.05)
    assert schedule.request(10.1) is None  # one timer for both changes
    assert schedule.request(10.2) is None


def test_at_once_moves_a_later_repaint_forward():
    schedule = RepaintSchedule()
    schedule.begin(10.0)
    assert schedule.request(10.05) == pytest.approx(0.2)
    assert schedule.request(10.06, at_once=True) == pytest.approx(COALESCE)
    assert schedule.request(10.06, at_once=True) is None  # already that soon


def test_the_gap_does_not_depend_on_what_drawing_cost():
    """A repaint that took 80 ms of CPU does not push the next one out (the old policy did, to 5 s)."""
    schedule = RepaintSchedule()
    schedule.begin(0.0)  # began at 0, and drawing took until 0.08 (nothing is told about it)
    assert schedule.request(0.08) == pytest.approx(MIN_GAP - 0.08)


def test_cancel_forgets_the_scheduled_repaint():
    schedule = RepaintSchedule()
    schedule.request(1.0)
    schedule.cancel()
    assert schedule.due is None
    assert schedule.request(1.0) == pytest.approx(COALESCE)


def test_the_first_read_draws_the_whole_picture_every_few_seconds_and_always_once_caught_up():
    schedule = RepaintSchedule(first_read_every=5.0, last_whole=0.0)
    assert not schedule.draws_whole(1.0, caught_up=False)  # progress only
    assert schedule.draws_whole(5.0, caught_up=False)
    assert not schedule.draws_whole(6.0, caught_up=False)
    assert schedule.draws_whole(6.5, caught_up=True)
    assert schedule.draws_whole(6.6, caught_up=True)


def test_new_data_of_the_shown_run_redraws_it_and_nothing_else():
    plan = plan_repaint({"a"}, structure=False, switched=False, current="a")
    assert plan.run and not plan.top_screen and not plan.runs_list


def test_new_data_of_another_run_leaves_the_shown_run_alone():
    plan = plan_repaint({"b"}, structure=False, switched=False, current="a")
    assert not plan.run


@pytest.mark.parametrize(
    "structure, switched, current", [(True, False, "a"), (False, True, "a"), (False, False, None)]
)
def test_a_new_run_a_switch_or_no_run_redraws_the_dashboard(structure, switched, current):
    assert plan_repaint(set(), structure, switched, current).run


def test_the_detail_screen_is_redrawn_only_for_its_own_run():
    assert plan_repaint({"a"}, False, False, "a", "detail", "a").top_screen
    assert not plan_repaint({"b"}, False, False, "a", "detail", "a").top_screen
    assert plan_repaint(set(), True, False, "a", "completions", "a").top_screen
    assert not plan_repaint({"a"}, False, False, "a", "help", None).top_screen


def test_the_runs_list_follows_any_change():
    assert plan_repaint({"b"}, False, False, "a", "runs").runs_list
    assert not plan_repaint(set(), False, False, "a", "runs").runs_list


def test_the_runs_compared_follow_any_change_too():
    assert plan_repaint({"b"}, False, False, "a", "diff").runs_list
    assert not plan_repaint(set(), False, False, "a", "diff").runs_list
