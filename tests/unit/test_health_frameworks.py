"""Rules bound to concepts, on every framework's names: veRL's console logs, the drift detectors
(length collapse, the score behind the shaped reward, the grad norm rising), twins judged once, and
OpenRLHF's names judged like the TRL run they mirror."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers.health import judge, rule_findings, write_run
from helpers.paths import FIXTURES
from helpers.snapshot import run_cli
from helpers.synthetic import noisy

from rltop.health.findings import Level
from rltop.ingest.follow.loader import load
from rltop.model.catalog import config_kind, describe, settings_of

VERL_REAL = FIXTURES / "verl" / "real"
STEPS = 59


def _verl_collapse(collapse: bool) -> dict[str, np.ndarray]:
    """veRL's names with the shape of a real veRL GRPO collapse (59 steps, logged to W&B): the mean
    response length 970 -> 9 tokens over steps 30-50, actor/grad_norm 10-20 × from step 38, the score
    -0.52 -> -0.95 while the KL-penalised reward rises -18.8 -> -1.7. The healthy twin keeps its
    length and grad norm, and its score and reward rise together."""
    steps = np.arange(1, STEPS + 1)
    if collapse:
        length = np.where(steps < 30, 970.0, np.maximum(970.0 * 0.8 ** (steps - 29), 9.0))
        grad = np.where(steps < 38, 0.3, 4.5) * (1 + 0.1 * noisy(1.0, 0.5, STEPS, 3))
        score = np.linspace(-0.52, -0.95, STEPS) + noisy(0.0, 1.0, STEPS, 4) * 0.01
        rewards = np.linspace(-18.8, -1.7, STEPS) + noisy(0.0, 1.0, STEPS, 5) * 0.1
    else:
        length = noisy(970.0, 0.02, STEPS, 6)
        grad = noisy(0.3, 0.1, STEPS, 7)
        score = np.linspace(-0.52, 0.1, STEPS) + noisy(0.0, 1.0, STEPS, 4) * 0.01
        rewards = np.linspace(-0.6, 0.05, STEPS) + noisy(0.0, 1.0, STEPS, 5) * 0.01
    return {
        "response_length/mean": length,
        "actor/grad_norm": grad,
        "critic/score/mean": score,
        "critic/rewards/mean": rewards,
        "actor/entropy": noisy(0.6, 0.01, STEPS, 8),
    }


VERL_CONFIG = {"algorithm.adv_estimator": "grpo", "actor_rollout_ref.actor.optim.lr": 1e-6}


@pytest.fixture(scope="module")
def verl_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("verl")
    write_run(root, "collapse", _verl_collapse(True), VERL_CONFIG)
    write_run(root, "healthy", _verl_collapse(False), VERL_CONFIG)
    return judge(root, name="collapse"), judge(root, name="healthy")


@pytest.mark.parametrize(
    ("rule", "tag"),
    [
        ("length_collapse", "response_length/mean"),
        ("score_behind_shaping", "critic/score/mean"),
        ("grad_norm_rise", "actor/grad_norm"),
    ],
)
def test_each_drift_detector_sees_the_veRL_collapse_and_not_its_healthy_twin(verl_runs, rule, tag) -> None:
    collapse, healthy = verl_runs
    (finding,) = rule_findings(collapse, rule)
    assert finding.level == Level.CRITICAL and finding.tag == tag, finding
    assert f"step {finding.step}" in finding.message and finding.advice
    assert rule_findings(healthy, rule) == []
    assert collapse.kind == healthy.kind == "GRPO"  # the config's adv_estimator, not the tags


def test_the_collapse_messages_say_what_happened(verl_runs) -> None:
    collapse, _ = verl_runs
    (length,) = rule_findings(collapse, "length_collapse")
    assert "response_length/mean fell to 9 tokens" in length.message
    assert "critic/score/mean fell" in length.message
    (shaping,) = rule_findings(collapse, "score_behind_shaping")
    assert "while critic/rewards/mean rose" in shaping.message
    (grad,) = rule_findings(collapse, "grad_norm_rise")
    assert "× its early level" in grad.message and "critic/score/mean fell meanwhile" in grad.message


def test_completions_that_shorten_while_the_score_rises_are_a_note(tmp_path) -> None:
    # A reward that pays for short answers (TRL's grpo_warm_short learns exactly that).
    series = _verl_collapse(True)
    series["critic/score/mean"] = np.linspace(0.1, 0.9, STEPS)
    series["critic/rewards/mean"] = np.linspace(0.1, 0.9, STEPS)
    series["actor/grad_norm"] = noisy(0.3, 0.1, STEPS, 7)
    write_run(tmp_path, "short", series, VERL_CONFIG)
    (length,) = rule_findings(judge(tmp_path), "length_collapse")
    assert length.level == Level.OK and "the reward pays for short completions" in length.message


def test_twins_are_judged_once(tmp_path) -> None:
    # veRL's old and new names of the mean token entropy, both logged and both collapsing.
    falling = np.concatenate((np.full(30, 0.6), np.full(30, 0.01)))
    write_run(tmp_path, "twins", {"actor/entropy": falling, "actor/entropy_loss": falling.copy()})
    found = rule_findings(judge(tmp_path), "entropy_collapse")
    assert [f.tag for f in found] == ["actor/entropy"]


def test_the_veRL_console_logs_are_judged_by_concept(capsys) -> None:
    code, out, err = run_cli(capsys, "snapshot", str(VERL_REAL), "--format", "json", "--fail-on", "never")
    assert code == 0, err
    runs = {run["name"]: run for run in json.loads(out)["runs"]}
    baseline = runs["verl-baseline-qwen0.5b-ppo/Qwen2.5-0.5B-bsz256_2-prompt512-resp256-0.538.log"]
    agent = runs["gui-agent-grpo/verl_demo.log"]
    assert baseline["kind"] == "PPO" and agent["kind"] == "GRPO"  # algorithm.adv_estimator: gae, grpo
    # veRL's published healthy PPO baseline: entropy -88 % while the validation score climbs, a value
    # loss of 5.75 at step 0, a KL in the reward rising from 0: no warning, and it finished.
    assert [f["level"] for f in baseline["findings"]] == ["ok", "ok"], baseline["findings"]
    assert {f["rule"] for f in baseline["findings"]} == {"entropy_collapse", "reward_plateau"}
    assert baseline["finished"] is True
    for run in (baseline, agent):
        other = {tag for tag, facts in run["tags"].items() if facts["group"] == "Other"}
        concepts = {describe(tag).concept for tag in other}
        assert concepts <= {
            "",
            "timing_statistic",
            "performance_statistic",
            "global_step",
            "epoch",
            "step_time",
        }
        # what no framework names: the GUI agent's own filtering counters
        assert {tag for tag in other if not describe(tag).concept} <= {
            "rollout/too_bad_sample_ratio", "rollout/too_good_sample_ratio", "rollout/total_num_samples"
        }  # fmt: skip


def test_the_config_names_the_kind_and_the_settings() -> None:
    assert config_kind({"algorithm.adv_estimator": "gae"}) == "PPO"
    assert config_kind({"advantage_estimator": "group_norm"}) == "GRPO"  # OpenRLHF
    assert config_kind({"algo.advantage.estimator": "reinforce_baseline"}) == "REINFORCE++"
    assert config_kind({"algorithm.adv_estimator": "my_estimator"}) == "MY_ESTIMATOR"
    assert config_kind({"learning_rate": 1e-6}) is None
    verl = {"actor_rollout_ref.actor.optim.lr": 1e-6, "train_dataloader_size": 29, "trainer.total_epochs": 15}
    assert settings_of(verl)["learning_rate"] == 1e-6 and settings_of(verl)["max_steps"] == 435
    assert settings_of({"learning_rate": 2e-5, "actor_learning_rate": 1e-6})["learning_rate"] == 2e-5


# TRL's GRPO names and OpenRLHF's for the same quantities (OpenRLHF/OpenRLHF v0.11.0, ppo_actor.py and
# experience_maker.py; W&B and TensorBoard prefix them with train/).
TRL_TO_OPENRLHF = {
    "train/entropy": "train/entropy_loss",
    "train/kl": "train/kl",
    "train/grad_norm": "train/actor_grad_norm",
    "train/reward": "train/reward",
    "train/reward_std": "train/group_reward_std",
    "train/completions/mean_length": "train/response_length",
    "train/completions/clipped_ratio": "train/truncated",
    "train/learning_rate": "train/actor_lr",
}


@pytest.mark.parametrize("name", ["grpo_early_blowup", "grpo_kl_runaway_warm"])
def test_openrlhf_names_are_judged_like_the_trl_run_they_mirror(tmp_path, name) -> None:
    (trl,) = load([str(FIXTURES / "trl3" / name)]).store.runs.values()

    def points(tag: str) -> dict[int, float]:
        series = trl.series[tag]
        return dict(zip(series.steps.tolist(), series.values.tolist()))

    write_run(tmp_path, "trl", {tag: points(tag) for tag in TRL_TO_OPENRLHF})
    write_run(tmp_path, "openrlhf", {ours: points(tag) for tag, ours in TRL_TO_OPENRLHF.items()})
    verdicts = {run: judge(tmp_path, name=run) for run in ("trl", "openrlhf")}
    back = {ours: tag for tag, ours in TRL_TO_OPENRLHF.items()}

    def shape(health, rename):
        return sorted(
            (f.rule, rename.get(f.tag, f.tag), int(f.level), f.step, f.first_step, f.value == f.value)
            for f in health.findings
        )

    trl_view = shape(verdicts["trl"], {})
    assert trl_view and any(level == Level.CRITICAL for _, _, level, *_ in trl_view)
    assert shape(verdicts["openrlhf"], back) == trl_view
