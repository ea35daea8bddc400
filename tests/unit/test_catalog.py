"""The metric catalogue: groups, order, meanings, prefixes, reward families, trainer kind."""

from __future__ import annotations

import dataclasses

import pytest
from helpers.health import TRL

from rltop.ingest.follow.loader import load
from rltop.model.catalog import GROUPS, UNKNOWN_ORDER, MetricInfo, describe, group_tags, trainer_kind

PPO_DOC_METRICS = (
    "eps",
    "objective/kl",
    "objective/entropy",
    "objective/non_score_reward",
    "objective/rlhf_reward",
    "objective/scores",
    "policy/approxkl_avg",
    "policy/clipfrac_avg",
    "loss/policy_avg",
    "loss/value_avg",
    "val/clipfrac_avg",
    "policy/entropy_avg",
    "val/ratio",
    "val/ratio_var",
    "val/num_eos_tokens",
    "lr",
    "episode",
)
GRPO_DOC_METRICS = (
    "num_tokens",
    "completions/mean_length",
    "completions/min_length",
    "completions/max_length",
    "completions/clipped_ratio",
    "completions/mean_terminated_length",
    "completions/min_terminated_length",
    "completions/max_terminated_length",
    "reward",
    "reward_std",
    "frac_reward_zero_std",
    "kl",
    "entropy",
    "clip_ratio/low_mean",
    "clip_ratio/low_min",
    "clip_ratio/high_mean",
    "clip_ratio/high_max",
    "clip_ratio/region_mean",
    "clip_ratio",
    "loss",
    "grad_norm",
    "learning_rate",
    "epoch",
    "step_time",
    "entropy_coef",
)


@pytest.fixture(scope="module")
def fixture_runs():
    return {name.split("/")[0]: run for name, run in load([str(TRL)]).store.runs.items()}


@pytest.mark.parametrize("key", PPO_DOC_METRICS + GRPO_DOC_METRICS)
def test_every_documented_metric_is_known(key: str) -> None:
    info = describe(key)
    assert info.order < UNKNOWN_ORDER and info.group in GROUPS
    assert info.meaning and info.title
    assert info.key == key and info.split == ""


@pytest.mark.parametrize("split", ["train", "eval", "test"])
def test_prefixes_are_recognised(split: str) -> None:
    bare = describe("val/ratio")
    prefixed = describe(f"{split}/val/ratio")
    assert prefixed.split == split
    assert dataclasses.replace(prefixed, split="") == bare


def test_reward_families_match_any_function_name() -> None:
    mean = describe("train/rewards/my_fancy.reward-v2/mean")
    std = describe("eval/rewards/accuracy/std")
    legacy = describe("rewards/format_reward")
    assert (mean.group, std.group, legacy.group) == ("Rewards", "Rewards", "Rewards")
    assert "my_fancy.reward-v2" in mean.title and "my_fancy.reward-v2" in mean.meaning
    assert mean.order == std.order == legacy.order


def test_unknown_tags_are_kept_under_other() -> None:
    info = describe("train/my/custom_metric")
    assert info == MetricInfo("my/custom_metric", "Other", UNKNOWN_ORDER, "my/custom_metric", "", "", "train")
    grouped = dict(group_tags(["train/reward", "train/my/custom_metric"]))
    assert grouped["Other"] == ["train/my/custom_metric"]


def test_advice_for_the_metrics_with_rules() -> None:
    for key in (
        "val/ratio",
        "policy/entropy_avg",
        "entropy",
        "loss/value_avg",
        "completions/clipped_ratio",
        "frac_reward_zero_std",
        "kl",
        "objective/kl",
        "grad_norm",
    ):
        assert describe(key).advice, key
    assert "max_completion_length" in describe("completions/clipped_ratio").advice


def test_trainer_kind_from_tags(fixture_runs) -> None:
    kinds = {name: trainer_kind(run.series) for name, run in fixture_runs.items()}
    assert kinds == {
        "grpo_healthy": "GRPO",
        "grpo_unstable": "GRPO",
        "grpo_truncated": "GRPO",
        "grpo_with_eval": "GRPO",
        "ppo_healthy": "PPO",
        "ppo_unstable": "PPO",
        "grpo_liger_cpu_crash": "unknown",
    }
    assert trainer_kind(["loss", "grad_norm", "learning_rate"]) == "unknown"
    assert trainer_kind(["objective/kl", "val/ratio"]) == "PPO"


def test_group_tags_display_order(fixture_runs) -> None:
    tags = list(fixture_runs["grpo_with_eval"].series)
    grouped = group_tags(tags)
    names = [group for group, _ in grouped]
    assert names == [group for group in GROUPS if group in names]  # display order, no empty group
    assert sorted(tag for _, found in grouped for tag in found) == sorted(tags)  # every tag, once
    by_group = dict(grouped)
    assert by_group["Key values"][:2] == ["train/reward", "eval/reward"]  # the docs' key value first
    rewards = by_group["Rewards"]
    # Each reward function's mean and std together, train before eval.
    mean = rewards.index("train/rewards/length_reward/mean")
    assert rewards[mean + 1 : mean + 3] == [
        "eval/rewards/length_reward/mean",
        "train/rewards/length_reward/std",
    ]
    ppo = dict(group_tags(fixture_runs["ppo_healthy"].series))
    assert ppo["Key values"] == [
        "train/objective/rlhf_reward",
        "train/objective/scores",
        "train/objective/non_score_reward",
    ]
    assert ppo["Stability"][0] == "train/val/ratio"
    assert ppo["Value"] == ["train/loss/value_avg", "train/val/clipfrac_avg"]
