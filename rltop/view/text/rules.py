"""The thresholds of the rules that judge a metric, in the words of the rules table.

A chart's band is four numbers merged over every rule on the tag; read back as ``warn < 1e-06,
critical < 0`` it says the wrong thing (the dead-update rule is critical at exactly 0, the
spike rule warns at 10 × a trailing median, not at a fixed value). The rules table
(`rltop.health.table`) words each rule's thresholds with the settings in effect: the detail screen
quotes it (``dead update: warn < 1e-06, critical = 0``).
"""

from __future__ import annotations

from rltop.health.rules import TAG_RULES
from rltop.health.settings import Rules
from rltop.health.table import rule_rows
from rltop.model.catalog import describe

NO_LEVEL = "-"
"""How the rules table writes a level a rule never reaches."""


def rule_thresholds(tag: str, rules: Rules | None = None) -> list[tuple[str, str, str]]:
    """(rule title, warn text, critical text) of each enabled rule that judges ``tag`` by its
    catalogue concept, with ``rules``' settings (the defaults when None); a level it never reaches is
    ``""``. The non-finite rule, which judges every tag, is left out."""
    concept = describe(tag).concept
    names = {rule.name for rule in TAG_RULES if concept in rule.concepts}
    texts = []
    for row in rule_rows(rules):
        if row.rule in names and row.enabled:
            warn = "" if row.warn == NO_LEVEL else row.warn
            critical = "" if row.critical == NO_LEVEL else row.critical
            if warn or critical:
                texts.append((row.title, warn, critical))
    return texts


def thresholds_sentence(tag: str, rules: Rules | None = None) -> str:
    """``Dead update: warn < 1e-06, critical = 0 · Grad-norm spike: warn ≥ 10 × …`` ("" without)."""
    parts = []
    for title, warn, critical in rule_thresholds(tag, rules):
        levels = ", ".join(
            f"{level} {text}" for level, text in (("warn", warn), ("critical", critical)) if text
        )
        parts.append(f"{title}: {levels}")
    return " · ".join(parts)
