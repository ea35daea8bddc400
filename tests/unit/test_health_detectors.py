"""The detectors no other tool has, each on a synthetic run and its healthy twin; and the engine's
folding, ordering, marks and acknowledgements."""

from __future__ import annotations

import numpy as np
from helpers.health import fresh_engine, judge, load_run, rule_findings, write_run

from rltop.health.findings import Level, Stage

RNG = np.random.default_rng(11)


def noise(count: int, scale: float, seed: int) -> np.ndarray:
    return scale * np.random.default_rng(seed).standard_normal(count)


def rise_then(count: int, top: float, flat_from: int, seed: int = 0) -> np.ndarray:
    """A reward rising linearly to ``top`` by ``flat_from`` and flat there after, with noise."""
    steps = np.arange(count)
    level = np.where(steps < flat_from, top * steps / flat_from, top)
    return level + noise(count, 0.02, seed)


# -- reward plateau ------------------------------------------------------------------------------------


def test_plateau_at_the_best_level_is_a_note_that_says_since_when(tmp_path) -> None:
    write_run(tmp_path, "done", {"train/reward": rise_then(300, 2.0, 150)})
    write_run(tmp_path, "learning", {"train/reward": np.linspace(0, 2.0, 300) + noise(300, 0.02, 1)})
    (note,) = rule_findings(judge(tmp_path, name="done"), "reward_plateau")
    assert note.is_note and note.stage == Stage.NOTE and "finished learning" in note.message
    assert 130 <= note.first_step <= 200
    assert rule_findings(judge(tmp_path, name="learning"), "reward_plateau") == []


def test_plateau_after_an_entropy_collapse_says_so(tmp_path) -> None:
    entropy = np.concatenate((np.full(150, 2.0), np.full(150, 0.001)))
    write_run(tmp_path, "run", {"train/reward": rise_then(300, 1.0, 150), "train/entropy": entropy})
    (note,) = rule_findings(judge(tmp_path), "reward_plateau")
    assert "since the entropy collapsed" in note.message


# -- zero-std groups: saturated vs starved -------------------------------------------------------------


def test_zero_std_groups_saturated_is_a_note_starved_stays_critical(tmp_path) -> None:
    frac = np.concatenate((np.full(60, 0.1), np.full(40, 0.95)))
    solved_reward = rise_then(100, 2.0, 60)
    write_run(tmp_path, "solved", {"train/frac_reward_zero_std": frac, "train/reward": solved_reward})
    starved_reward = np.concatenate((np.linspace(0.5, 1, 30), np.linspace(1, -1, 30), np.full(40, -1.0)))
    starved_reward += noise(100, 0.01, 2)
    write_run(tmp_path, "starved", {"train/frac_reward_zero_std": frac, "train/reward": starved_reward})
    solved = judge(tmp_path, name="solved")
    (note,) = rule_findings(solved, "zero_std_groups")
    assert note.is_note and "saturated" in note.message
    assert solved.tag_levels["train/frac_reward_zero_std"] == Level.OK
    starved = judge(tmp_path, name="starved")
    (alarm,) = rule_findings(starved, "zero_std_groups")
    assert alarm.level == Level.CRITICAL and "starved" in alarm.message


# -- one reward function dominating -----------------------------------------------------------------


def _functions(a: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
    return {
        "train/rewards/length_reward/mean": a,
        "train/rewards/contains_x_reward/mean": b,
        "train/reward": a + b,
    }


def test_one_function_rising_while_another_falls_a_little_is_a_warning(tmp_path) -> None:
    up, down, flat = np.linspace(0, 1, 80), np.linspace(0.6, 0.45, 80), np.full(80, 0.3)
    write_run(tmp_path, "trade", _functions(up + noise(80, 0.01, 3), down + noise(80, 0.01, 4)))
    write_run(tmp_path, "alone", _functions(up + noise(80, 0.01, 3), flat + noise(80, 0.01, 5)))
    write_run(tmp_path, "shared", _functions(up + noise(80, 0.01, 3), up / 2 + noise(80, 0.01, 6)))
    (trade,) = rule_findings(judge(tmp_path, name="trade"), "reward_dominance")
    assert trade.level == Level.WARN and trade.tag == "train/rewards/length_reward/mean"
    assert "contains_x_reward" in trade.message and "fell" in trade.message
    assert rule_findings(judge(tmp_path, name="trade"), "reward_sacrificed") == []  # a quarter, not half
    (alone,) = rule_findings(judge(tmp_path, name="alone"), "reward_dominance")
    assert alone.is_note and "has not moved" in alone.message
    assert rule_findings(judge(tmp_path, name="shared"), "reward_dominance") == []


def test_a_function_losing_more_than_half_while_the_total_rises_is_critical(tmp_path) -> None:
    up, down = np.linspace(0, 1, 80), np.linspace(0.6, 0.1, 80)
    write_run(tmp_path, "trade", _functions(up + noise(80, 0.01, 3), down + noise(80, 0.01, 4)))
    health = judge(tmp_path, name="trade")
    (sacrificed,) = rule_findings(health, "reward_sacrificed")
    assert sacrificed.level == Level.CRITICAL and sacrificed.tag == "train/rewards/contains_x_reward/mean"
    assert "sacrifices contains_x_reward" in sacrificed.message and "train/reward rose" in sacrificed.message
    assert rule_findings(health, "reward_dominance") == []  # the critical finding says it, once


# -- early warning of reward hacking ------------------------------------------------------------------


def test_grpo_reward_rising_with_lengths_running_to_the_cap(tmp_path) -> None:
    reward = np.linspace(0, 1, 100) + noise(100, 0.02, 7)
    longer = np.linspace(80, 250, 100) + noise(100, 2, 8)
    shorter = np.linspace(200, 120, 100) + noise(100, 2, 8)
    config = {"max_completion_length": 256, "num_generations": 8}
    write_run(tmp_path, "hack", {"train/reward": reward, "train/completions/mean_length": longer}, config)
    write_run(tmp_path, "fine", {"train/reward": reward, "train/completions/mean_length": shorter}, config)
    (warning,) = rule_findings(judge(tmp_path, name="hack"), "reward_hacking")
    assert warning.level == Level.WARN and "near the cap 256" in warning.message
    assert rule_findings(judge(tmp_path, name="fine"), "reward_hacking") == []


def test_ppo_scores_rising_while_rlhf_reward_falls(tmp_path) -> None:
    scores = np.linspace(0, 2, 100) + noise(100, 0.02, 9)
    falling = np.linspace(0.5, -1.0, 100) + noise(100, 0.02, 10)
    rising = np.linspace(0, 1.5, 100) + noise(100, 0.02, 10)
    write_run(tmp_path, "hack", {"train/objective/scores": scores, "train/objective/rlhf_reward": falling})
    write_run(tmp_path, "fine", {"train/objective/scores": scores, "train/objective/rlhf_reward": rising})
    hack = judge(tmp_path, name="hack")
    assert any("bought with KL" in f.message for f in rule_findings(hack, "reward_hacking"))
    assert rule_findings(judge(tmp_path, name="fine"), "reward_hacking") == []


def test_train_reward_rising_while_eval_reward_falls(tmp_path) -> None:
    train = np.linspace(0, 1, 100) + noise(100, 0.02, 11)
    write_run(tmp_path, "hack", {"train/reward": train, "eval/reward": {25: 0.5, 50: 0.4, 75: 0.3, 100: 0.2}})
    write_run(tmp_path, "fine", {"train/reward": train, "eval/reward": {25: 0.2, 50: 0.4, 75: 0.5, 100: 0.6}})
    (warning,) = rule_findings(judge(tmp_path, name="hack"), "reward_hacking")
    assert "eval/reward fell at the last three evaluations" in warning.message
    assert rule_findings(judge(tmp_path, name="fine"), "reward_hacking") == []


# -- projected collapse ------------------------------------------------------------------------------


def test_entropy_heading_for_collapse_is_forecast_before_the_rule_fires(tmp_path) -> None:
    falling = np.linspace(2.0, 1.2, 300) + noise(300, 0.005, 12)
    steady = np.full(300, 2.0) + noise(300, 0.005, 12)
    config = {"max_steps": 1000}
    write_run(tmp_path, "falling", {"train/entropy": falling}, config)
    write_run(tmp_path, "steady", {"train/entropy": steady}, config)
    health = judge(tmp_path, name="falling")
    assert rule_findings(health, "entropy_collapse") == []  # nothing fired yet
    (forecast,) = rule_findings(health, "collapse_forecast")
    assert forecast.is_note and "reaches 50% of its early level" in forecast.message
    # 1.2 now, falling 0.00267 per step: 1.0 (50 % of 2.0) in ~75 steps.
    steps = int(forecast.message.split("in ~")[1].split(" steps")[0])
    assert 55 <= steps <= 95
    assert rule_findings(judge(tmp_path, name="steady"), "collapse_forecast") == []


def test_no_forecast_beyond_the_planned_end(tmp_path) -> None:
    write_run(
        tmp_path,
        "run",
        {"train/entropy": np.linspace(2.0, 1.9, 300) + noise(300, 0.001, 13)},
        {"max_steps": 400},
    )
    assert rule_findings(judge(tmp_path), "collapse_forecast") == []


def test_kl_heading_for_its_warning_level_is_forecast(tmp_path) -> None:
    kl = np.linspace(0.0, 0.3, 200) + noise(200, 0.005, 14)
    write_run(tmp_path, "run", {"train/kl": kl}, {"beta": 0.04, "max_steps": 1000})
    (forecast,) = rule_findings(judge(tmp_path), "collapse_forecast")
    assert forecast.tag == "train/kl" and "reaches its warning level 0.5" in forecast.message


# -- RLOO's k1 KL --------------------------------------------------------------------------------------


RLOO_CONFIG = {"normalize_advantages": False, "beta": 0.05, "num_generations": 4}


def test_rloo_small_negative_kl_is_normal_large_is_critical(tmp_path) -> None:
    small = 0.002 + noise(60, 0.004, 15)
    large = small.copy()
    large[30:33] = -0.5
    write_run(tmp_path, "small", {"train/kl": small, "train/reward": np.linspace(0, 1, 60)}, RLOO_CONFIG)
    write_run(tmp_path, "large", {"train/kl": large, "train/reward": np.linspace(0, 1, 60)}, RLOO_CONFIG)
    small_health = judge(tmp_path, name="small")
    assert small_health.kind == "RLOO" and rule_findings(small_health, "negative_kl") == []
    (finding,) = rule_findings(judge(tmp_path, name="large"), "negative_kl")
    assert finding.level == Level.CRITICAL and "RLOO, per token" in finding.message
    # The same small dips under GRPO (k3, never negative) are a bug.
    write_run(tmp_path, "grpo", {"train/kl": small}, {"loss_type": "dapo", "num_generations": 4})
    assert rule_findings(judge(tmp_path, name="grpo"), "negative_kl")[0].level == Level.CRITICAL


# -- spikes against a robust baseline ------------------------------------------------------------------


def test_value_loss_spike_after_a_high_warm_up_is_critical(tmp_path) -> None:
    values = np.concatenate((np.full(15, 2.0), np.full(65, 0.05))) * (1 + noise(80, 0.1, 16))
    values[[40, 47, 48]] = 1.5  # 30x the usual level after the warm-up
    write_run(tmp_path, "run", {"train/loss/value_avg": values})
    (spike,) = rule_findings(judge(tmp_path), "value_loss_spike")
    assert spike.level == Level.CRITICAL and spike.first_step == 41


# -- folding, ordering, marks, acknowledgement ---------------------------------------------------------


def test_episodes_fold_into_one_finding_with_the_peak(tmp_path) -> None:
    values = np.full(60, 0.001)
    values[10:14], values[25:29], values[40:44] = 0.03, 0.5, 0.04
    write_run(tmp_path, "run", {"train/policy/approxkl_avg": values})
    (finding,) = rule_findings(judge(tmp_path), "approx_kl")
    assert finding.episodes == 3 and finding.value == 0.5 and finding.step == 26
    assert finding.first_step == 26 and "3 episodes since step 11" in finding.message
    assert [span[0] for span in finding.spans] == [11, 26, 41]


def test_a_card_keeps_a_mark_until_acknowledged(tmp_path) -> None:
    values = np.full(60, 0.001)
    values[10:14] = 0.03  # a warn episode that is over by step 17
    write_run(tmp_path, "run", {"train/policy/approxkl_avg": values})
    engine, run = fresh_engine(), load_run(tmp_path, "run")
    health = engine.assess(run)
    assert health.tag_levels["train/policy/approxkl_avg"] == Level.OK
    assert health.marks == {"train/policy/approxkl_avg": Level.WARN}
    engine.acknowledge(run.name, "train/policy/approxkl_avg")
    health = engine.assess(run)
    assert health.marks == {} and health.findings[0].acknowledged


def test_active_before_over_and_cause_before_consequence(tmp_path) -> None:
    grad = np.full(40, 0.5)
    grad[20:25] = 0.0  # dead update (a consequence), over by the end
    grad[39] = np.nan  # the cause, the last point: active
    entropy = np.concatenate((np.full(30, 2.0), np.full(10, 0.001)))
    write_run(tmp_path, "run", {"train/grad_norm": grad, "train/entropy": entropy, "train/loss": grad})
    health = judge(tmp_path)
    rules = [(f.rule, f.active) for f in health.findings if f.level == Level.CRITICAL]
    assert rules[0] == ("non_finite", True)
    active = [rule for rule, on in rules if on]
    over = [rule for rule, on in rules if not on]
    assert rules == [(r, True) for r in active] + [(r, False) for r in over]
    assert active.index("non_finite") < active.index("entropy_collapse")
