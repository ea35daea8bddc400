"""Thresholds as data: defaults, TOML overrides (user file, --rules) and one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.health import TRL
from helpers.paths import REPO

from rltop.health.engine import assess_store
from rltop.health.findings import Level
from rltop.health.rules import DEFAULTS, DOCS
from rltop.health.settings import Rules, RulesError, load_rules, parse_rules_text, user_rules_path
from rltop.health.table import markdown_table, rule_rows
from rltop.ingest.follow.loader import load


@pytest.fixture(autouse=True)
def isolated_home(tmp_path, monkeypatch) -> Path:
    """Point the user config at an empty temporary directory (the developer's file must not leak in)."""
    config = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    return config


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_without_any_file() -> None:
    rules = load_rules()
    assert rules.sources == ()
    assert rules.settings == Rules.defaults().settings
    assert rules["ratio_drift"].warn == 1.05 and rules["ratio_drift"].persistence == (3, 5)
    assert rules["truncation"].critical_persistence == (4, 5)
    assert rules["approx_kl"].clear_fraction == 0.8 and rules["approx_kl"].clear_points((3, 5)) == 3
    assert set(DOCS) == set(DEFAULTS)


def test_user_file_then_rules_option(tmp_path, isolated_home) -> None:
    user = write(user_rules_path(), "[ratio_drift]\nwarn = 1.1\ncritical = 3.0\n")
    assert user.parent == isolated_home / "rltop"
    given = write(tmp_path / "mine.toml", '[ratio_drift]\nwarn = 1.2\npersistence = "2/4"\n')
    rules = load_rules(str(given))
    assert rules.sources == (str(user), str(given))
    assert rules["ratio_drift"].warn == 1.2  # --rules wins over the user file
    assert rules["ratio_drift"].critical == 3.0  # ... which still applies where --rules is silent
    assert rules["ratio_drift"].persistence == (2, 4)


@pytest.mark.parametrize(
    "text, expected",
    [
        ('persistence = "2/4"', (2, 4)),
        ("persistence = [2, 4]", (2, 4)),
        ('persistence = "2 of 4"', (2, 4)),
    ],
)
def test_persistence_forms(text: str, expected) -> None:
    assert parse_rules_text(f"[approx_kl]\n{text}\n")["approx_kl"]["persistence"] == expected


def test_false_switches_a_level_or_rule_off(tmp_path) -> None:
    rules_file = write(tmp_path / "r.toml", "[truncation]\ncritical = false\n\n[stall]\nenabled = false\n")
    rules = load_rules(str(rules_file))
    assert rules["truncation"].critical is None and not rules["stall"].enabled
    verdicts = assess_store(load([str(TRL / "grpo_truncated")]).store, rules)
    (health,) = verdicts.values()
    (truncation,) = [f for f in health.findings if f.rule == "truncation"]
    assert truncation.level == Level.WARN and "critical" not in truncation.message
    rows = {row.rule: row for row in rule_rows(rules)}
    assert rows["truncation"].critical == "-" and not rows["stall"].enabled
    assert "`stall` (off)" in markdown_table(rules)


def test_overrides_change_the_verdict(tmp_path) -> None:
    rules_file = write(tmp_path / "r.toml", "[truncation]\nwarn = 0.95\ncritical = false\n")
    verdicts = assess_store(load([str(TRL / "grpo_healthy")]).store, load_rules(str(rules_file)))
    (health,) = verdicts.values()
    assert health.findings == [] and health.level == Level.OK


@pytest.mark.parametrize(
    "text, fragments",
    [
        ("[ratio_drift]\nwarn = \n", [":2:", "key warn", "invalid TOML"]),
        ("[ratio_drfit]\nwarn = 1.1\n", [":1:", "unknown rule [ratio_drfit]"]),
        ("[ratio_drift]\n\nwran = 1.1\n", [":3:", "ratio_drift.wran", "unknown key"]),
        ('[approx_kl]\nwarn = "high"\n', [":2:", "approx_kl.warn", "expected a number"]),
        ('[approx_kl]\npersistence = "5/3"\n', [":2:", "approx_kl.persistence", "m/n"]),
        (
            "[approx_kl]\nwarn = 0.5\ncritical = 0.1\n",
            [":3:", "approx_kl.critical", "warn 0.5, critical 0.1"],
        ),
        ("[entropy_collapse]\nwarn = 0.01\n", [":2:", "entropy_collapse.warn", "critical below warn"]),
        ("[ratio_drift]\nwarn = 0.9\n", [":2:", "ratio_drift.warn", "greater than 1"]),
        ("[general]\nclear_fraction = 1.5\n", [":2:", "general.clear_fraction", "(0, 1]"]),
        ("[stall]\nenabled = 1\n", [":2:", "stall.enabled", "true or false"]),
        ("[value_loss_spike]\nwindow = 2.5\n", [":2:", "value_loss_spike.window", "whole number"]),
        ("ratio_drift = 3\n", [":1:", "must be a table"]),
        ("[truncation]\nwarn = 25\n", [":2:", "truncation.warn", "share between 0 and 1"]),
        ("[stall]\nwarn_min_s = -5\n", [":2:", "stall.warn_min_s", "negative"]),
        ("[value_loss_spike]\nwarn = 0\n", [":2:", "value_loss_spike.warn", "above 1"]),
        ("ratio_drift.warn = 0.5\n", [":1:", "ratio_drift.warn", "greater than 1"]),
    ],
)
def test_errors_are_one_line_with_file_line_and_key(tmp_path, text: str, fragments: list[str]) -> None:
    path = write(tmp_path / "bad.toml", text)
    with pytest.raises(RulesError) as caught:
        load_rules(str(path))
    message = str(caught.value)
    assert "\n" not in message and message.startswith(str(path))
    for fragment in fragments:
        assert fragment in message, message
    assert isinstance(caught.value, ValueError)


def test_missing_and_unreadable_files(tmp_path) -> None:
    with pytest.raises(RulesError, match="not found"):
        load_rules(str(tmp_path / "nope.toml"))
    broken_user = write(user_rules_path(), "[stall\n")
    with pytest.raises(RulesError, match=str(broken_user)):
        load_rules()


README_EXAMPLE = """
[general]
clear_fraction = 0.8
single_point_warn = true

[ratio_drift]
warn = 1.1
critical = 2.0
persistence = "3/5"

[truncation]
warn = 0.5
critical_persistence = [4, 5]

[grad_norm_spike]
critical = 100.0

[value_clip_fraction]
enabled = false

[stall]
critical = false
warn_min_s = 600
"""


def test_readme_example(tmp_path) -> None:
    """The example of the README section parses and does what its comments say."""
    rules = load_rules(str(write(tmp_path / "rules.toml", README_EXAMPLE)))
    assert rules["ratio_drift"].warn == 1.1 and rules["truncation"].critical_persistence == (4, 5)
    assert rules["grad_norm_spike"].critical == 100.0 and not rules["value_clip_fraction"].enabled
    assert rules["stall"].critical is None and rules["stall"]["warn_min_s"] == 600.0


def test_readme_rules_table_is_the_rules_own_table() -> None:
    from rltop.health.table import concept_table

    """The README's default-thresholds table is generated from the rules' own classes: never drifts."""

    from rltop.health.rules import DEFAULTS, DETECTORS, DOCS, EVERY, TAG_RULES

    readme = (REPO / "docs" / "guide" / "rules.md").read_text(encoding="utf-8")
    assert markdown_table() in readme
    assert concept_table() in readme  # the concepts each rule reads, with every framework's names
    judged = {rule.name for rule in TAG_RULES} | {"non_finite", "stall"}
    assert set(DEFAULTS) == set(DOCS) == judged | {detector.name for detector in DETECTORS}
    assert len({rule.name for rule in EVERY}) == len(EVERY)  # one class, one name
    assert all(DOCS[name].why for name in DOCS)  # every rule states its rule of thumb
