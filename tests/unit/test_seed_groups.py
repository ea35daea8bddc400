"""Seed groups: found from the logged config or the run names, and reported with their spread.

The three runs of ``tests/fixtures/seeds`` are real TRL GRPO runs whose configs differ only in
``seed`` (and ``output_dir``); see its README.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers.paths import FIXTURES
from helpers.snapshot import markdown_tables, run_cli, validate

from rltop.health.engine import assess_store
from rltop.ingest.follow.loader import load
from rltop.report.json_report import load_schema
from rltop.report.snapshot import build_snapshot
from rltop.view.group_view import group_row
from rltop.view.names import run_display_names
from rltop.view.seed_groups import config_signature, find_seed_groups, name_pattern

SEEDS = FIXTURES / "seeds"
TRL = FIXTURES / "trl"


@pytest.fixture(scope="module")
def seeded():
    store = load([str(SEEDS), str(TRL / "grpo_healthy")]).store
    health = assess_store(store)
    return store, health


def test_runs_whose_config_differs_only_in_the_seed_form_a_group(seeded):
    store, _ = seeded
    names = run_display_names({name: run.directory for name, run in store.runs.items()})
    (group,) = find_seed_groups({name: run.config for name, run in store.runs.items()}, names)
    assert group.basis == "config" and group.seeds == ("1", "2", "3")
    assert [names[run] for run in group.runs] == [f"seeds/grpo_seed_{n}" for n in (1, 2, 3)]
    assert group.name == "seeds/grpo_seed_*"
    # grpo_healthy has seed 42 but another max_steps: not a member.
    assert not any("grpo_healthy" in run for run in group.runs)
    configs = [store.runs[run].config for run in group.runs]
    assert configs[0]["output_dir"] != configs[1]["output_dir"]
    assert len({config_signature(c) for c in configs}) == 1


@pytest.mark.parametrize(("name", "pattern"), [
    ("grpo_seed_1", ("grpo_seed_*", "1")), ("exp/s2", ("exp/s*", "2")), ("ppo-r3", ("ppo-r*", "3")),
    ("lr1e-4_seed=7", ("lr1e-4_seed=*", "7")), ("seeds/4", ("seeds/*", "4")), ("rep12_x", ("rep*_x", "12")),
    ("bs16", None), ("lr1e-4", None), ("exp_2", None), ("v2", None),
])  # fmt: skip
def test_seed_like_parts_of_names(name, pattern):
    assert name_pattern(name) == pattern


def test_names_group_runs_without_config_unless_their_configs_differ():
    names = {"a": "grpo/s1", "b": "grpo/s2", "c": "ppo-r1", "d": "ppo-r2", "e": "bs16", "f": "bs32"}
    groups = find_seed_groups({}, names)
    assert [(g.name, g.runs, g.basis) for g in groups] == [
        ("grpo/s*", ("a", "b"), "name"),
        ("ppo-r*", ("c", "d"), "name"),
    ]
    # Two runs named like seeds whose configs differ in the learning rate: the names lie.
    configs = {"c": {"seed": 1, "learning_rate": 1e-4}, "d": {"seed": 2, "learning_rate": 1e-3}}
    assert [g.runs for g in find_seed_groups(configs, names)] == [("a", "b")]
    # Same config, same seed: the same run twice, not seeds.
    same = {"a": {"seed": 1, "lr": 1}, "b": {"seed": 1, "lr": 1}}
    assert find_seed_groups(same, {"a": "x", "b": "y"}) == []


def test_group_statistics_are_the_last_values_of_the_members(seeded):
    store, health = seeded
    snapshot = build_snapshot(store, health)
    (group,) = snapshot.groups
    reward = next(metric for metric in group.metrics if metric.tag == "train/reward")
    last = [float(store.runs[run].series["train/reward"].values[-1]) for run in group.group.runs]
    assert list(reward.values) == last and reward.count == 3
    assert reward.mean == pytest.approx(np.mean(last)) and reward.std == pytest.approx(np.std(last, ddof=1))
    assert group.level == max(member.level for member in group.members)
    row = group_row(group)
    assert row.size == 3 and row.name in group.group.runs and row.values[0][0] == "reward"
    assert row.values[0][1] == f"{reward.spread_text}" and "±" in row.values[0][1]


def test_json_and_markdown_carry_per_group_statistics(capsys, tmp_path):
    out = tmp_path / "s.json"
    run_cli(capsys, "snapshot", str(SEEDS), "-f", "json", "-o", str(out))
    document = json.loads(out.read_text())
    assert validate(document, load_schema()) == []
    (group,) = document["groups"]
    assert group["basis"] == "config" and group["display_names"] == [f"grpo_seed_{n}" for n in (1, 2, 3)]
    reward = group["metrics"]["train/reward"]
    assert reward["count"] == 3 and reward["mean"] == pytest.approx(np.mean(reward["values"]))
    assert reward["std"] == pytest.approx(np.std(reward["values"], ddof=1))
    assert list(group["metrics"])[:2] == ["train/reward", "train/kl"]  # the Key values first
    md = tmp_path / "s.md"
    run_cli(capsys, "snapshot", str(SEEDS), "-f", "markdown", "-o", str(md))
    text = md.read_text()
    assert "## Seed groups" in text
    table = markdown_tables(text)[0]
    assert table[0] == ["group", "runs", "level", "metric", "last: mean ± std", "min … max"]
    assert table[1][0] == "grpo_seed_*" and table[1][3] == "reward" and "± " in table[1][4]


def test_a_snapshot_without_seed_groups_has_an_empty_list(capsys, tmp_path):
    out = tmp_path / "s.json"
    run_cli(capsys, "snapshot", str(TRL / "ppo_unstable"), "-f", "json", "-o", str(out))
    assert json.loads(out.read_text())["groups"] == []
