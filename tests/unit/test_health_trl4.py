"""Real TRL 1.16 runs for issue 31 (tests/fixtures/trl4, see its README): options that change what
healthy looks like, judged with their own normals, and completions that degenerate, named from the text.

Each run is replayed as a live dashboard sees it, one logged step at a time (`health_helpers.replay`).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.health import first_step_at, judge, replay, replay_fixture, rule_findings, write_run
from helpers.paths import FIXTURES

from rltop.health.findings import Level
from rltop.model.catalog import describe
from rltop.model.completions import filled_by_repeat

TRL4 = FIXTURES / "trl4"
OPTION_RUNS = ("grpo_gspo", "grpo_cispo", "grpo_sapo", "grpo_vespo", "grpo_adaptive_entropy")


@pytest.fixture(scope="module", params=OPTION_RUNS)
def option_run(request):
    return request.param, replay_fixture(TRL4 / request.param)


def test_no_option_run_gets_a_critical_at_any_step(option_run) -> None:
    name, (changes, health) = option_run
    criticals = {key: steps for key, steps in changes.items() if any(lv == Level.CRITICAL for _, lv in steps)}
    assert not criticals, (name, criticals)
    assert health.level <= Level.WARN


def test_each_option_run_is_told_what_its_options_change(option_run) -> None:
    name, (_, health) = option_run
    (note,) = rule_findings(health, "run_options")
    assert note.level == Level.OK and not note.tag
    expected = {
        "grpo_gspo": "importance_sampling_level=sequence (GSPO)",
        "grpo_cispo": "clip ratios are not logged with loss_type=cispo (cispo_clip_ratio is logged instead)",
        "grpo_sapo": "clip ratios are not logged with loss_type=sapo",
        "grpo_vespo": "not logged with loss_type=vespo (vespo/phi_seq_mean is logged instead)",
        "grpo_adaptive_entropy": "use_adaptive_entropy: an entropy held at entropy_target 4.5 is by design",
    }[name]
    assert expected in note.message
    assert note.message.count("clip ratios are not logged") <= 1  # said once


def test_gspo_clip_ratios_near_one_are_normal_at_sequence_level() -> None:
    # clip_ratio/region_mean is 0.69-1.0 on every second pass of this healthy run (reward -0.29 -> 0.56):
    # it was critical from step 2 with the token-level thresholds, and every all-clipped pass (a gradient
    # of exactly 0 by design) was a dead update.
    changes, health = replay_fixture(TRL4 / "grpo_gspo")
    assert not rule_findings(health, "grpo_clip_ratio") and not rule_findings(health, "dead_update")
    assert not [key for key in changes if key[0] in ("grpo_clip_ratio", "dead_update")]


def test_gspo_with_every_completion_clipped_on_every_second_pass_warns_only(tmp_path) -> None:
    config = {"num_iterations": 2, "importance_sampling_level": "sequence", "logging_steps": 1}
    region = {step: (1.0 if step % 2 == 0 else 0.0) for step in range(1, 61)}
    grad = {step: (0.0 if step % 2 == 0 else 0.6) for step in range(1, 61)}
    write_run(tmp_path, "gspo", {"train/clip_ratio/region_mean": region, "train/grad_norm": grad}, config)
    health = judge(tmp_path)
    (clip,) = rule_findings(health, "grpo_clip_ratio")
    assert clip.level == Level.WARN and "shares of whole completions" in clip.message
    assert "GSPO uses 3e-4" in clip.advice
    assert not rule_findings(health, "dead_update")  # the generation steps have a gradient


def test_the_same_clip_ratios_at_token_level_are_still_critical(tmp_path) -> None:
    region = {step: (0.8 if step % 2 == 0 else 0.0) for step in range(1, 41)}
    write_run(tmp_path, "grpo", {"train/clip_ratio/region_mean": region}, {"num_iterations": 2})
    (clip,) = rule_findings(judge(tmp_path), "grpo_clip_ratio")
    assert clip.level == Level.CRITICAL


def test_loss_variant_tags_have_their_concepts() -> None:
    assert describe("train/cispo_clip_ratio").concept == "cispo_clip_ratio"
    assert describe("train/vespo/phi_seq_mean").concept == "vespo_phi"
    assert describe("train/policy_loss").concept == "policy_loss"
    assert describe("train/entropy_coef").concept == "entropy_coef"
    for tag in ("train/cispo_clip_ratio", "train/vespo/phi_seq_mean"):
        assert describe(tag).group == "Stability"
    assert "negative is normal with loss_type cispo, sapo or vespo" in describe("train/loss").meaning


@pytest.fixture(scope="module")
def entropy_held():
    return replay_fixture(TRL4 / "grpo_adaptive_entropy_x")


def test_the_entropy_controller_is_judged_by_its_coefficient(entropy_held) -> None:
    # x_fraction_reward at lr 1e-3 collapses the entropy without the controller (to ~0.1); with
    # use_adaptive_entropy and entropy_target 3 it oscillates 2.52-3.72 while entropy_coef climbs to 0.6.
    changes, health = entropy_held
    assert first_step_at(changes, "entropy_coef_pinned", "train/entropy_coef", Level.WARN) == 93
    assert first_step_at(changes, "entropy_coef_pinned", "train/entropy_coef", Level.CRITICAL) is None
    (pinned,) = rule_findings(health, "entropy_coef_pinned")
    assert "of entropy_coef_max 1" in pinned.message and "entropy_target 3" in pinned.message
    assert not [f for f in health.findings if f.rule == "entropy_collapse" and f.level > Level.OK]
    # Its one critical is real: every completion runs to the 16-token cap from step 1 to 120.
    assert {f.rule for f in health.findings if f.level == Level.CRITICAL} == {"truncation"}


def test_entropy_coef_at_its_cap_is_critical(tmp_path) -> None:
    config = {"use_adaptive_entropy": True, "entropy_target": 3.0, "entropy_coef_max": 0.5}
    coef = [min(0.5, 0.05 * step) for step in range(1, 41)]
    write_run(tmp_path, "ae", {"train/entropy_coef": coef, "train/entropy": [2.0] * 40}, config)
    changes, health = replay(tmp_path)
    assert first_step_at(changes, "entropy_coef_pinned", "train/entropy_coef", Level.CRITICAL) == 14
    (pinned,) = rule_findings(health, "entropy_coef_pinned")
    assert pinned.level == Level.CRITICAL and "lower the learning rate" in pinned.advice


def test_entropy_coef_without_the_controller_is_not_judged(tmp_path) -> None:
    write_run(tmp_path, "fixed", {"train/entropy_coef": [1.0] * 30}, {"entropy_coef": 1.0})
    health = judge(tmp_path)
    assert not rule_findings(health, "entropy_coef_pinned")
    (note,) = rule_findings(health, "run_options")
    assert "entropy_coef 1: loss includes the entropy bonus" in note.message


# -- completions ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "rule", "warn", "critical", "quoted"),
    [
        # 'hello' for every prompt: 17 of 32 at 80, 28 at 85, all 32 at 87 and from 90 on.
        ("grpo_template_collapse", "template_collapse", 82, 90, "'hello'"),
        # '' (only <eos>): 8 of 16 at 45-46, 16 of 16 at 70, 72, 74.
        ("grpo_empty_collapse", "empty_completions", 48, 74, "16 of 16 completions at step 70 are empty"),
        ("grpo_repeat_char_collapse", "repetitive_completions", 56, 59, "'llllllllllllllll'"),
        ("grpo_repeat_char_collapse_lowercase", "repetitive_completions", 12, 13, "'dddddddddddddddd'"),
    ],
)
def test_a_collapse_gets_its_completion_finding(name, rule, warn, critical, quoted) -> None:
    changes, health = replay_fixture(TRL4 / name)
    assert first_step_at(changes, rule, "", Level.WARN) == warn
    assert first_step_at(changes, rule, "", Level.CRITICAL) == critical
    (finding,) = rule_findings(health, rule)
    assert finding.level == Level.CRITICAL and quoted in finding.message
    # The alert's step is a logged completions step: the completions screen (e) opens on it.
    run = next(iter(_load(TRL4 / name).runs.values()))
    assert run.completions.at(finding.step) is not None
    others = {"template_collapse", "repetitive_completions", "empty_completions"} - {rule}
    assert not [f for f in health.findings if f.rule in others]  # one name for one thing


def test_the_template_finding_quotes_how_many_prompts() -> None:
    (finding,) = rule_findings(judge(TRL4 / "grpo_template_collapse"), "template_collapse")
    assert "32 of 32 completions at step 87 (4 of 4 prompts) are 'hello'" in finding.message


def test_healthy_completions_stay_quiet() -> None:
    # The one healthy run with completions among the fixtures (trl2: 59 steps, random 16-character
    # completions while contains_x_reward rises); judged at every step, no completion rule speaks.
    rules = {"template_collapse", "repetitive_completions", "empty_completions", "wrong_answer_length"}
    path = FIXTURES / "trl2" / "grpo_completions"
    assert len(next(iter(_load(path).runs.values())).completions) >= 8
    changes, _ = replay(path)
    assert not [key for key in changes if key[0] in rules]


def test_repetition_is_a_unit_filling_the_completion() -> None:
    assert filled_by_repeat("llllllllllllllll") and filled_by_repeat("the the the the the the the the")
    assert filled_by_repeat("Answer: " + "!" * 60)
    assert not filled_by_repeat("lllllll\\llll1lll")  # the run 50 steps before it collapses
    assert not filled_by_repeat("hello") and not filled_by_repeat("Let me think step by step. " * 2 + "42")


def _write_steps(folder: Path, steps: dict[int, list[tuple[str, float]]]) -> None:
    """TRL-shaped completions files: 4 prompts, each row (completion, accuracy_reward)."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    folder.mkdir(parents=True, exist_ok=True)
    for step, rows in steps.items():
        table = pa.table({
            "step": pa.array([step] * len(rows), pa.int64()),
            "prompt": [f"question {i % 4}" for i in range(len(rows))],
            "completion": [text for text, _ in rows],
            "accuracy_reward": pa.array([score for _, score in rows], pa.float64()),
            "advantage": pa.array([0.0] * len(rows), pa.float64()),
        })  # fmt: skip
        pq.write_table(table, folder / f"completions_{step:05d}.parquet")


def _answers(step: int, wrong_words: int, right_words: int) -> list[tuple[str, float]]:
    wrong = " ".join(f"w{step}x{i}" for i in range(wrong_words))
    right = " ".join(f"r{step}y{i}" for i in range(right_words))
    return [(f"{wrong} {k}", 0.0) for k in range(8)] + [(f"{right} {k} = 4", 1.0) for k in range(8)]


def test_wrong_answers_growing_longer_warn_with_a_correctness_reward(tmp_path) -> None:
    run = tmp_path / "run"
    _write_steps(run / "completions", {step: _answers(step, 10 + 2 * step, 10) for step in range(1, 31)})
    write_run(run / "runs", "Dec04_vm", {"train/reward": [0.5] * 30})
    changes, health = replay(run)
    warned = first_step_at(changes, "wrong_answer_length", "", Level.WARN)
    assert warned is not None and 5 < warned < 20
    (finding,) = rule_findings(health, "wrong_answer_length")
    assert finding.level == Level.WARN  # never critical
    assert "by accuracy_reward, the 8 wrong completions at step" in finding.message
    assert "the longest: 'w" in finding.message


def test_answers_growing_longer_right_and_wrong_alike_are_quiet(tmp_path) -> None:
    run = tmp_path / "run"
    _write_steps(
        run / "completions", {step: _answers(step, 10 + 2 * step, 12 + 2 * step) for step in range(1, 31)}
    )
    write_run(run / "runs", "Dec04_vm", {"train/reward": [0.5] * 30})
    assert not rule_findings(judge(run), "wrong_answer_length")


def _load(path: Path):
    from rltop.ingest.follow.loader import load

    return load([str(path)]).store
