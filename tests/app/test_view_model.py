"""One view model for the dashboard and every snapshot format: same names, levels, numbers, sentences."""

from __future__ import annotations

import json
import re

import pytest
from helpers.paths import TRL
from helpers.ui import fixed_store, preloaded_app, wait_until

from rltop.health.engine import assess_store
from rltop.health.findings import Finding, Level
from rltop.report.render import render
from rltop.report.snapshot import build_snapshot
from rltop.view.alerts import build_alerts, is_live
from rltop.view.fleet import key_metrics, state_counts, worst_run
from rltop.view.run_view import build_run_view
from rltop.view.text.marks import LEVEL_NAMES
from rltop.view.text.numbers import format_short
from rltop.view.text.sentences import (
    calm_sentence,
    compact_fleet_parts,
    empty_sentence,
    fleet_sentence,
    freshness,
)


@pytest.mark.parametrize("fixture", ["ppo_unstable", "grpo_with_eval"])
async def test_a_card_and_a_snapshot_row_of_the_same_tag_agree(fixture):
    app = preloaded_app(fixture)
    now = app.clock()
    async with app.run_test(size=(160, 50)) as pilot:
        # Every card laid out (its styles applied): a card mounted a moment ago cannot render yet.
        await wait_until(
            pilot,
            lambda: (
                app.dashboard.board.cards
                and app.focused is not None
                and all(card.size.width for card in app.dashboard.board.cards)
            ),
        )
        cards = {card.tag: card for card in app.dashboard.board.cards}
        snapshot = build_snapshot(app.store, assess_store(app.store, now=now), now)
        (run,) = snapshot.runs
        rows = {row.tag: row for row in run.rows}
        assert set(cards) == set(rows)
        text = render(snapshot, "text", width=200)
        document = json.loads(render(snapshot, "json"))["runs"][0]
        for tag, card in cards.items():
            row = rows[tag]
            assert card.model.name == row.name and card.model.level == row.level, tag
            assert card.model.stats == row.stats, tag
            # What each draws: the card's last value and badge are the row's.
            line = next(line for line in text.splitlines() if line.startswith(row.name + " "))
            assert format_short(row.stats.last) in line.split() and line.endswith(LEVEL_NAMES[row.level])
            assert format_short(card.model.stats.last) in card.render().plain
            assert document["tags"][tag]["level"] == card.model.level.label
        # The header and the snapshot's title call the run the same.
        assert app.session.run_view(app.session.current).display_name == run.display_name == fixture
        assert document["display_name"] == fixture and document["directory"].endswith("_vm")


def _finding(level, tag, active=True, rule="r", message=None):
    return Finding(
        level,
        rule,
        "run",
        tag,
        3,
        1.0,
        message or f"{tag} did something at step 3",
        "try",
        active=active,
        title=rule,
    )


def test_alerts_fold_a_metrics_episodes_and_put_what_is_live_first():
    findings = [
        _finding(Level.CRITICAL, "train/a", active=False),  # over, still latched below
        _finding(Level.CRITICAL, "train/b", active=False),  # over and acknowledged
        _finding(Level.WARN, "train/c"),
        _finding(Level.WARN, "train/a"),
        _finding(Level.WARN, "train/c", active=False),
        _finding(Level.WARN, "", rule="stall", message="run has logged no new point for 12 min"),
    ]
    levels = {"train/a": Level.CRITICAL, "train/b": Level.OK, "train/c": Level.WARN}
    alerts = build_alerts(findings, levels, {"train/a": "a", "train/b": "b", "train/c": "c"})
    assert [(alert.metric, alert.live, alert.level) for alert in alerts] == [
        ("a", True, Level.CRITICAL),
        ("c", True, Level.WARN),
        ("", True, Level.WARN),
        ("b", False, Level.CRITICAL),
    ]
    assert alerts[0].fold_note == "(2 episodes)"  # one rule, two episodes
    assert alerts[1].fold_note == "(2 episodes)" and alerts[1].finding.active
    assert alerts[0].message == "a did something at step 3"  # the tag becomes the display name
    assert is_live(findings[0], levels) and not is_live(findings[1], levels)


def test_fleet_counts_the_worst_run_and_key_values():
    store, newest = fixed_store([str(TRL)])
    health = assess_store(store, now=newest + 4)
    views = [build_run_view(store.runs[name], health[name], newest + 4) for name in store.sorted_names()]
    assert state_counts(views) == [("critical", 3), ("warn", 2), ("ok", 1), ("empty", 1)]
    assert fleet_sentence(state_counts(views)) == "7 runs: 3 CRIT 2 WARN 1 empty"
    assert [text for _, text in compact_fleet_parts(state_counts(views))] == ["7 runs", "✖3", "▲2", "○1"]
    assert fleet_sentence([("ok", 2)]) == "2 runs: all ok"
    worst = worst_run(views)
    assert worst is not None and worst.level == Level.CRITICAL
    ppo = next(view for view in views if view.name.startswith("ppo_unstable"))
    shown = [metric.name for metric in key_metrics(ppo)]
    assert shown[0] == "policy/entropy_avg" and "objective/rlhf_reward" in shown and len(shown) == 3


def test_finished_runs_and_the_shared_sentences():
    store, newest = fixed_store([str(TRL / "grpo_healthy")])
    (run,) = store.runs.values()
    health = assess_store(store, now=newest + 7200)
    view = build_run_view(run, health[run.name], newest + 7200)
    assert view.finished  # it logged the end-of-training summary
    assert freshness(view, newest + 7200) == ("2 h ago", False)  # never "no new point", never stale
    text = render(build_snapshot(store, health, newest + 7200), "text", width=100)
    assert "finished at step 200" in text
    assert calm_sentence(18) == "No findings: all 18 metrics are within their rules."
    assert empty_sentence("") == "Empty run: no scalar logged yet (text summaries: none)."
    assert re.search(r"crashed before its first logging step", empty_sentence("args/text_summary"))
