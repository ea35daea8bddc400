"""Comparing runs: the config diff, each run's verdict beside it, group-by a setting, and the line that
says which difference goes with the failure.

``tests/fixtures/sweep_lr`` holds five real TRL 1.16 GRPO runs that differ only in learning rate
(1e-5 … 5e-2; 1e-2 and 5e-2 collapse), ``tests/fixtures/seeds_sweep`` three that differ only in
seed; see their READMEs. The synthetic cases below build run views by hand to pin the split rules.
"""

from __future__ import annotations

import pytest
from helpers.paths import FIXTURES

from rltop.health.engine import assess_store
from rltop.health.findings import Finding, Level
from rltop.ingest.follow.loader import load
from rltop.report.snapshot import build_snapshot
from rltop.view.compare.comparison import compare_runs
from rltop.view.compare.diff import MISSING, build_config_diff, is_ignored
from rltop.view.compare.groups import UnknownSetting, check_setting, group_by_setting, setting_group_row
from rltop.view.compare.split import find_split
from rltop.view.run_view import RunView

SWEEP = FIXTURES / "sweep_lr"
SEEDS = FIXTURES / "seeds_sweep"
NOW = 1_796_400_000.0


def _loaded(*paths):
    store = load([str(path) for path in paths]).store
    snapshot = build_snapshot(store, assess_store(store, now=NOW), NOW)
    configs = {name: run.config for name, run in store.runs.items()}
    return snapshot, configs


@pytest.fixture(scope="module")
def sweep():
    return _loaded(SWEEP)


def _compare(loaded):
    snapshot, configs = loaded
    return compare_runs(snapshot.runs, configs, [group.group for group in snapshot.groups])


def test_the_sweep_differs_in_the_learning_rate_only(sweep):
    comparison = _compare(sweep)
    diff = comparison.diff
    assert [row.key for row in diff.rows] == ["learning_rate"]
    assert diff.rows[0].values == (1e-5, 1e-4, 1e-3, 1e-2, 5e-2)  # runs ordered by the rate
    assert [comparison.views[name].display_name for name in diff.runs] == [
        "lr_1e-5",
        "lr_1e-4",
        "lr_1e-3",
        "lr_1e-2",
        "lr_5e-2",
    ]
    assert diff.ignored == ["output_dir"]
    assert diff.equal == 189 and diff.seed_group is None
    assert comparison.headline() == "5 runs · 1 setting differs: learning_rate"
    assert comparison.folded() == (
        "189 settings equal in every run (folded) · ignored (they name the run): output_dir"
    )


def test_each_run_of_the_sweep_has_its_verdict_beside_it(sweep):
    comparison = _compare(sweep)
    verdicts = {
        comparison.views[name].display_name: comparison.verdict(name) for name in comparison.diff.runs
    }
    # What rltop says of each run today: 1e-5 learns nothing and every completion hits the cap.
    assert verdicts["lr_1e-5"].startswith("✖ CRIT truncation")
    assert verdicts["lr_1e-4"] == "▲ WARN truncation"
    assert verdicts["lr_1e-3"] == "● ok"
    assert verdicts["lr_1e-2"].startswith("✖ CRIT entropy collapse +")
    assert verdicts["lr_5e-2"].startswith("✖ CRIT entropy collapse")
    assert comparison.cell(comparison.diff.runs[0], "learning_rate") == "1e-05"


def test_the_summary_names_the_learning_rate_and_the_collapse(sweep):
    # The levels do not split by rate (1e-5 is critical for truncation), entropy collapse does.
    comparison = _compare(sweep)
    assert comparison.summary == (
        "2 runs with learning_rate ≥ 0.01 went critical on entropy collapse; "
        "3 with learning_rate ≤ 0.001 did not"
    )
    assert comparison.as_json() == {
        "learning_rate": {
            name: value for name, value in zip(comparison.diff.runs, (1e-5, 1e-4, 1e-3, 1e-2, 5e-2))
        }
    }


def test_seeds_are_a_seed_group_not_a_diff():
    comparison = _compare(_loaded(SEEDS))
    assert comparison.diff.rows == [] and comparison.as_json() == {}
    assert comparison.diff.seed_group is not None
    assert comparison.headline() == (
        "3 runs differ only in their seed: seed group seeds_sweep/seed_* (seeds 1, 2, 3), worst level ok"
    )
    assert comparison.summary is None and comparison.no_split() == ""


def test_sweep_and_seeds_together_show_the_seed_column_but_never_split_on_it():
    comparison = _compare(_loaded(SWEEP, SEEDS))
    assert [row.key for row in comparison.diff.rows] == ["learning_rate", "max_steps", "seed"]
    assert comparison.diff.seed_group is None
    # max_steps differs too (60 for the seeds) but does not split: only the rate is named.
    assert comparison.summary == (
        "2 runs with learning_rate ≥ 0.01 went critical on entropy collapse; "
        "6 with learning_rate ≤ 0.001 did not"
    )


def test_settings_that_name_the_run_are_ignored():
    for key in (
        "output_dir",
        "run_name",
        "logging_dir",
        "hub_model_id",
        "trainer.experiment_name",
        "trainer.default_local_dir",
        "_exit_code",
        "_run_title",
    ):
        assert is_ignored(key), key
    assert not is_ignored("learning_rate") and not is_ignored("actor_rollout_ref.actor.optim.lr")


def test_settings_only_some_runs_have_come_last_and_are_missing_there():
    diff = build_config_diff({"a": {"lr": 1, "beta": 0.1, "x": 1}, "b": {"lr": 2, "x": 1}, "c": None})
    assert [row.key for row in diff.rows] == ["lr", "beta"]
    assert diff.row("beta").values == (0.1, MISSING) and not diff.row("beta").everywhere
    assert diff.without_config == ["c"] and diff.equal == 1
    assert diff.values("beta") == {"a": 0.1}


# -- the split, on hand-made verdicts --------------------------------------------------------------


def _view(name: str, level: Level, rules: dict[str, Level] | None = None, empty: bool = False) -> RunView:
    findings = [
        Finding(lvl, rule, name, "train/x", 1, 0.0, "", "", title=rule.replace("_", " "))
        for rule, lvl in (rules or {}).items()
    ]
    return RunView(
        name=name,
        display_name=name,
        directory=name,
        kind="GRPO",
        level=level,
        empty=empty,
        finished=True,
        last_step=10,
        points=10,
        last_point_wall_time=None,
        last_change_time=None,
        as_of=0.0,
        config=None,
        findings=findings,
        groups=[],
        texts=[],
        tag_levels={},
    )


def _split(runs: list[tuple[RunView, dict]]):
    views = [view for view, _ in runs]
    return compare_runs(views, {view.name: config for view, config in runs}).summary


CRIT, WARN, OK = Level.CRITICAL, Level.WARN, Level.OK


def test_a_categorical_setting_splits_the_failing_runs():
    runs = [
        (_view("a", CRIT, {"kl_blowup": CRIT}), {"loss_type": "bnpo", "lr": 1}),
        (_view("b", CRIT, {"kl_blowup": CRIT}), {"loss_type": "bnpo", "lr": 3}),
        (_view("c", OK), {"loss_type": "dapo", "lr": 2}),
        (_view("d", OK), {"loss_type": "grpo", "lr": 2}),
    ]
    assert _split(runs) == (
        "2 runs with loss_type = bnpo went critical (kl blowup); 2 with loss_type = dapo or grpo did not"
    )


def test_a_number_must_split_in_order_not_as_a_set():
    # low and high fail, the middle does not: no threshold, no line.
    runs = [(_view(str(lr), CRIT if lr in (1, 9) else OK), {"lr": lr}) for lr in (1, 3, 5, 9)]
    assert _split(runs) is None


def test_a_run_in_between_or_equal_values_that_disagree_make_no_line():
    # A warning is neither critical nor healthy: "went critical" does not split; "warn or worse" does.
    warn_between = [(_view("a", CRIT), {"lr": 1}), (_view("b", WARN), {"lr": 2}), (_view("c", OK), {"lr": 3})]
    assert _split(warn_between) == "2 runs with lr ≤ 2 raised warnings; 1 with lr ≥ 3 did not"
    seeds_disagree = [
        (_view("a", CRIT), {"lr": 1, "seed": 1}),
        (_view("b", OK), {"lr": 1, "seed": 2}),
        (_view("c", OK), {"lr": 2, "seed": 1}),
    ]
    assert _split(seeds_disagree) is None  # nor is the seed ever the answer


def test_warnings_split_when_nothing_went_critical_and_empty_runs_are_left_out():
    runs = [
        (_view("a", WARN, {"truncation": WARN}), {"max_completion_length": 16}),
        (_view("b", WARN, {"truncation": WARN}), {"max_completion_length": 32}),
        (_view("c", OK), {"max_completion_length": 256}),
        (_view("d", OK, empty=True), {"max_completion_length": 8}),
    ]
    assert _split(runs) == (
        "2 runs with max_completion_length ≤ 32 raised warnings (truncation); "
        "1 with max_completion_length ≥ 256 did not"
    )


def test_settings_that_split_alike_are_named_together():
    # Two runs, two settings: each splits them; the sentence cannot pick one and does not.
    runs = [
        (_view("a", CRIT), {"learning_rate": 1e-2, "beta": 0.0}),
        (_view("b", OK), {"learning_rate": 1e-4, "beta": 0.04}),
    ]
    assert _split(runs) == (
        "1 run with learning_rate = 0.01 went critical; 1 with learning_rate = 0.0001 did "
        "not (beta splits them the same way)"
    )


def test_all_healthy_or_all_failing_says_nothing_and_why():
    assert _split([(_view("a", OK), {"lr": 1}), (_view("b", OK), {"lr": 2})]) is None
    assert _split([(_view("a", CRIT), {"lr": 1}), (_view("b", CRIT), {"lr": 2})]) is None
    views = [_view("a", CRIT), _view("b", CRIT)]
    assert compare_runs(views, {"a": {"lr": 1}, "b": {"lr": 2}}).no_split() == (
        "Every run is critical: no difference to explain."
    )
    views = [_view(n, level) for n, level in (("a", CRIT), ("b", OK), ("c", CRIT))]
    configs = {"a": {"lr": 1}, "b": {"lr": 2}, "c": {"lr": 3}}
    assert compare_runs(views, configs).no_split() == (
        "No setting splits the failing runs from the healthy ones cleanly."
    )


def test_find_split_needs_two_judged_runs():
    diff = build_config_diff({"a": {"lr": 1}})
    assert find_split(diff, [_view("a", CRIT)]) is None


# -- group by a setting ----------------------------------------------------------------------------


def test_group_by_learning_rate_gives_the_worst_level_per_group():
    snapshot, configs = _loaded(SWEEP, SEEDS)
    groups = group_by_setting(snapshot.runs, configs, "learning_rate")
    assert [group.label for group in groups] == [
        "learning_rate = 1e-05",
        "learning_rate = 0.0001",
        "learning_rate = 0.001",
        "learning_rate = 0.01",
        "learning_rate = 0.05",
    ]
    by_label = {group.label: group for group in groups}
    # The three seeds run at 1e-3 with lr_1e-3: one group of four, seeds together.
    assert len(by_label["learning_rate = 0.001"].members) == 4
    assert [g.level for g in groups] == [CRIT, WARN, OK, CRIT, CRIT]
    row = setting_group_row(by_label["learning_rate = 0.001"])
    assert (row.kind, row.size, row.badge) == ("setting", 4, "ok")
    assert row.values and row.values[0][1].count("±") == 1


def test_group_by_rejects_seeds_and_settings_that_do_not_differ(sweep):
    diff = _compare(sweep).diff
    check_setting(diff, "learning_rate")
    with pytest.raises(UnknownSetting, match="seed groups"):
        check_setting(diff, "seed")
    with pytest.raises(UnknownSetting, match=r"^beta: not a setting that differs .*learning_rate\)$"):
        check_setting(diff, "beta")


def test_runs_without_the_setting_are_a_group_of_their_own():
    views = [_view("a", CRIT), _view("b", OK)]
    groups = group_by_setting(views, {"a": {"beta": 0.1}, "b": None}, "beta")
    assert [group.label for group in groups] == ["beta = 0.1", "beta = not set"]


def test_one_run_alone_on_a_side_needs_an_ordered_sweep():
    # The only healthy run is also the only one with save_steps 75: chance, not a split...
    runs = [(_view(n, WARN), {"save_steps": 500, "beta": b}) for n, b in (("a", 0.0), ("b", 0.1), ("c", 0.2))]
    assert _split([*runs, (_view("d", OK), {"save_steps": 75, "beta": 0.1})]) is None
    # ...but the end of an ordered sweep is: the largest rate alone collapses.
    sweep = [(_view(str(lr), CRIT if lr == 1e-2 else OK), {"learning_rate": lr}) for lr in (1e-4, 1e-3, 1e-2)]
    assert (
        _split(sweep) == "1 run with learning_rate ≥ 0.01 went critical; 2 with learning_rate ≤ 0.001 did not"
    )


def test_runs_of_different_trainers_are_not_a_recipe_to_split():
    ppo = _view("p", CRIT)
    ppo.kind = "PPO"
    assert _split([(ppo, {"learning_rate": 1e-2}), (_view("g", OK), {"learning_rate": 1e-4})]) is None


def test_the_headline_counts_the_settings_only_some_runs_have():
    views = [_view("a", OK), _view("b", OK)]
    comparison = compare_runs(views, {"a": {"lr": 1, "beta": 0.1}, "b": {"lr": 2}})
    assert comparison.headline() == "2 runs · 2 settings differ (1 set in only some runs): lr, beta"
    assert comparison.cell("b", "beta") == "–"
