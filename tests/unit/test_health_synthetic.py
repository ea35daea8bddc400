"""Each rule on synthetic series written with a real tensorboardX SummaryWriter.

For every rule: the faulty series fires at the expected level where it should, its healthy twin
(same noise, plus one noisy point beyond the warn threshold) stays quiet, and a warn clears with
hysteresis once the metric is back to normal, while a critical stays latched as history."""

from __future__ import annotations

import re

import numpy as np
import pytest
from helpers.health import fresh_engine, judge, load_run, rule_findings, write_run
from helpers.synthetic import CASES, Case  # noqa: F401 (fixtures among them)

from rltop.health.findings import Level
from rltop.health.settings import load_rules


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
@pytest.mark.parametrize("prefix", ["train/", ""])
def test_rule_fires_stays_quiet_and_clears(tmp_path, case: Case, prefix: str) -> None:
    tag = prefix + case.key
    extra = {prefix + key: values for key, values in case.extra.items()}
    write_run(tmp_path, "bad", {tag: case.bad, **extra}, case.config or None)
    write_run(tmp_path, "good", {tag: case.good, **extra}, case.config or None)

    bad = judge(tmp_path, name="bad")
    findings = rule_findings(bad, case.rule, tag)
    assert findings, bad.findings
    first = min(findings, key=lambda f: f.first_step)
    assert max(f.level for f in findings) == case.level, findings
    assert first.first_step == case.first_step, findings
    assert tag in first.message and f"step {first.step}" in first.message and first.advice
    final = bad.tag_levels[tag]
    if case.clears:
        assert not any(f.active for f in findings), findings
        # A warn clears with hysteresis; a critical stays latched until acknowledged.
        assert final == (Level.CRITICAL if case.level == Level.CRITICAL else Level.OK)
    else:
        assert any(f.active for f in findings) and final == case.level

    good = judge(tmp_path, name="good")
    assert rule_findings(good, case.rule, tag) == [], good.findings
    assert good.tag_levels[tag] == Level.OK


def test_truncation_advice_uses_the_run_config(tmp_path) -> None:
    case = next(c for c in CASES if c.id == "truncation-critical")
    write_run(tmp_path, "run", {"train/" + case.key: case.bad}, {"max_completion_length": 64})
    (finding,) = rule_findings(judge(tmp_path), "truncation")
    assert "max_completion_length (now 64)" in finding.advice


def test_warn_needs_m_of_n_and_clears_only_after_k_good_points(tmp_path) -> None:
    """approx-KL: 2 of 5 high points never warn; 3 do; clearing needs 3 points back under 0.8 × 0.015."""
    values = np.full(40, 0.001)
    values[[10, 12]] = 0.03  # 2 of 5: noise
    values[20:23] = 0.03  # 3 in a row: warn from step 23
    values[23:26] = 0.013  # below the warn threshold but above 0.8 × 0.015 = 0.012: still warn
    values[26] = 0.001
    values[27] = 0.02  # one point up again resets the clear count
    # from step 29 on (index 28..30): three good points in a row -> cleared after step 30
    write_run(tmp_path, "run", {"train/policy/approxkl_avg": values})
    (episode,) = rule_findings(judge(tmp_path), "approx_kl")
    assert episode.level == Level.WARN and not episode.active
    assert (episode.first_step, episode.last_step) == (21, 30)


def test_one_point_beyond_critical_is_warn_not_critical(tmp_path) -> None:
    values = np.full(40, 0.001)
    values[20] = 0.5  # far beyond the critical 0.075, but a single point
    write_run(tmp_path, "run", {"train/policy/approxkl_avg": values})
    (episode,) = rule_findings(judge(tmp_path), "approx_kl")
    assert episode.level == Level.WARN and episode.value == 0.5 and episode.step == 21


def test_grpo_clip_ratio_calibration(tmp_path) -> None:
    """Clip ratios are judged on off-policy steps only, never with num_iterations = 1, never on eval."""
    steps = np.arange(1, 61)
    # num_iterations = 2: odd steps are generation (on-policy) steps with clip ratio exactly 0.
    clipped = np.where((steps % 2 == 0) & (steps > 20), 0.3, 0.0)
    series = {"train/clip_ratio/region_mean": clipped, "eval/clip_ratio/region_mean": clipped}
    write_run(tmp_path, "reuse", series, {"num_iterations": 2, "logging_steps": 1})
    write_run(tmp_path, "on_policy", series, {"num_iterations": 1, "logging_steps": 1})
    reuse = judge(tmp_path, name="reuse")
    (finding,) = rule_findings(reuse, "grpo_clip_ratio")
    assert finding.tag == "train/clip_ratio/region_mean" and finding.level == Level.CRITICAL
    assert finding.first_step == 22  # the first off-policy step with clipping
    assert "num_iterations (now 2)" in finding.advice
    assert judge(tmp_path, name="on_policy").findings == []


def test_missing_kl_with_beta_zero_is_expected(tmp_path) -> None:
    """GRPO with beta = 0 logs no kl: nothing is reported about it."""
    write_run(
        tmp_path,
        "run",
        {"train/reward": np.linspace(0, 1, 40), "train/entropy": np.full(40, 2.0)},
        {"beta": 0.0, "num_iterations": 1},
    )
    health = judge(tmp_path)
    assert health.findings == [] and health.kind == "GRPO"


def test_non_finite_latches_until_acknowledged(tmp_path) -> None:
    values = np.ones(40)
    values[10] = np.inf
    write_run(tmp_path, "run", {"train/loss": values})
    engine = fresh_engine()
    run = load_run(tmp_path, "run")
    health = engine.assess(run)
    (finding,) = health.findings
    assert finding.level == Level.CRITICAL and not finding.active and "+Inf from step 11" in finding.message
    assert health.level == Level.CRITICAL
    engine.acknowledge(run.name)
    assert engine.assess(run).level == Level.OK


def test_entropy_collapse_inside_the_first_ten_points_is_still_critical(tmp_path):
    # With a large logging_steps the collapse can fill most of the first ten logged points; the
    # early level must still be the run's starting entropy, not the collapsed one.
    from rltop.health.engine import HealthEngine
    from rltop.ingest.follow.loader import load
    from rltop.ingest.sources.tfevents.tfrecord.writer import EventWriter

    with EventWriter(tmp_path / "run", start=1.7e9) as writer:
        for step in range(1, 120):
            writer.add_scalar("train/entropy", 4.5 if step <= 3 else 0.05, step, wall_time=1.7e9 + step)
    (run,) = load([str(tmp_path)]).store.runs.values()
    findings = [f for f in HealthEngine().assess(run).findings if f.rule == "entropy_collapse"]
    assert findings and findings[0].level.name == "CRITICAL"
    assert "early level 4.5" in findings[0].message


def _reward_run(tmp_path, name: str, fallen_to: float) -> None:
    """A reward that climbs from 1.071 to 1.09 (a small gain), then falls to ``fallen_to``."""
    noise = 0.001 * np.random.default_rng(1).standard_normal(100)
    values = np.concatenate((np.full(40, 1.071), np.full(30, 1.09), np.full(30, fallen_to))) + noise
    write_run(tmp_path, name, {"train/reward": values})


def test_reward_collapse_below_its_start_says_so_not_a_share_of_its_gain(tmp_path) -> None:
    _reward_run(tmp_path, "below", 1.05)  # gave back 210 % of its gain: below where it started
    _reward_run(tmp_path, "back", 1.08)  # gave back about half of it
    (below,) = rule_findings(judge(tmp_path, name="below"), "reward_collapse")
    assert below.level == Level.CRITICAL
    assert "now below its start: 1.05 vs start 1.071, best 1.09; critical at 100%" in below.message
    assert "of its gain" not in below.message
    (back,) = rule_findings(judge(tmp_path, name="back"), "reward_collapse")
    assert back.level == Level.WARN
    assert re.search(
        r"giving back 5\d\.?\d*% of its gain \(start 1\.071, best 1\.09\); warn at 50%", back.message
    )


def test_reward_collapse_with_its_thresholds_off_still_explains_a_fall_below_its_start(tmp_path) -> None:
    """With warn and critical off (a rules file) only falling below the start warns: said, no crash."""
    _reward_run(tmp_path, "below", 1.05)
    path = tmp_path / "rules.toml"
    path.write_text("[reward_collapse]\nwarn = false\ncritical = false\n")
    (below,) = rule_findings(judge(tmp_path, rules=load_rules(str(path)), name="below"), "reward_collapse")
    assert below.level == Level.WARN
    assert "now below its start: 1.05 vs start 1.071" in below.message
    assert "warn below its start by more than the noise margin" in below.message
