"""The health findings quote what the policy wrote: identical completions, the cap, the top answer."""

from __future__ import annotations

from dataclasses import replace

from helpers.paths import FIXTURES

from rltop.health.engine import assess_store
from rltop.health.evidence.text import with_text_evidence
from rltop.health.findings import Finding, Level
from rltop.ingest.follow.loader import load
from rltop.model.completions import CompletionIndex

FIXTURES_TRL2 = FIXTURES / "trl2"


def _findings(name: str) -> tuple[dict[str, Finding], object]:
    store = load([str(FIXTURES_TRL2 / name)]).store
    (health,) = assess_store(store).values()
    (run,) = store.runs.values()
    return {f.rule: f for f in health.findings}, run


def test_entropy_collapse_quotes_the_identical_completions():
    findings, _ = _findings("grpo_collapse")
    collapse = findings["entropy_collapse"]
    assert collapse.level == Level.CRITICAL
    sentence = (
        "16 of 16 at step 60 are identical within their group; the most frequent (16×): 'xxxxxxxxxxxxxxxx'"
    )
    assert collapse.evidence == (sentence,)
    assert collapse.message.endswith(f"; completions: {sentence}.")


def test_truncation_is_cross_checked_with_clipped_ratio():
    findings, _ = _findings("grpo_collapse")
    assert findings["truncation"].evidence == (
        "16 of 16 at step 59 are 16 characters or longer, as clipped_ratio 1 says",
    )
    # Healthy run: clipped_ratio counts tokens the decoded text does not show (<pad>, <unk>):
    # the text cannot confirm it, and says so instead of pretending.
    findings, _ = _findings("grpo_completions")
    (sentence,) = findings["truncation"].evidence
    assert sentence.startswith("those at step 59 have 13 characters on average (at most 16)")
    assert "cannot confirm clipped_ratio 0.8125" in sentence


def test_evidence_uses_the_logged_step_at_or_before_the_finding():
    findings, run = _findings("grpo_collapse")
    early = replace(findings["entropy_collapse"], last_step=36, evidence=(), message="m.")
    (annotated,) = with_text_evidence([early], run)
    assert annotated.evidence == (
        "2 of 16 at step 36 are identical within their group; the most frequent (2×): 'xxxxxxxxxxxxxxxx'",
    )
    before_any = replace(early, last_step=0)  # nothing logged yet by then: the nearest step
    (annotated,) = with_text_evidence([before_any], run)
    assert annotated.evidence == ("all 16 at step 1 differ within their groups",)
    assert with_text_evidence([early], replace_index(run))[0].evidence == ()


def replace_index(run):
    run.completions = CompletionIndex()
    return run


def test_rules_without_text_evidence_are_left_alone():
    findings, _ = _findings("grpo_collapse")
    assert findings["grpo_clip_ratio"].evidence == ()
    assert "completions:" not in findings["grpo_clip_ratio"].message


def test_the_snapshot_json_carries_the_evidence(capsys):
    import json

    from helpers.snapshot import validate

    from rltop.cli import main
    from rltop.report.json_report import load_schema

    main(["snapshot", str(FIXTURES_TRL2 / "grpo_collapse"), "--format", "json"])
    document = json.loads(capsys.readouterr().out)
    assert validate(document, load_schema()) == []
    findings = {f["rule"]: f for f in document["runs"][0]["findings"]}
    assert findings["entropy_collapse"]["evidence"][0].startswith("16 of 16 at step 60 are identical")
    assert findings["grpo_clip_ratio"]["evidence"] == []


def test_reward_hacking_names_the_completion_it_pays_for():
    findings, run = _findings("grpo_collapse")
    hacking = replace(
        findings["entropy_collapse"],
        rule="reward_hacking",
        last_step=40,
        evidence=(),
        message="reward hacking: the reward rises while the KL runs away.",
    )
    (annotated,) = with_text_evidence([hacking], run)
    assert annotated.evidence == ("the most frequent at step 40 (10 of 16, 62.5%): 'xxxxxxxxxxxxxxxx'",)
    assert (
        annotated.message == f"reward hacking: the reward rises while the KL runs away; completions: "
        f"{annotated.evidence[0]}."
    )
