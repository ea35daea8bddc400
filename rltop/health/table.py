"""The effective thresholds as a table (docs/guide/rules.md, ``--rules`` checks, reports), one row a rule."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rltop.health.rules import DOCS, EVERY
from rltop.health.settings import Rules
from rltop.model.catalog import TABLES
from rltop.model.catalog.concepts import CONCEPTS, ORDER


@dataclass(frozen=True)
class RuleRow:
    """One rule as a reader sees it, thresholds filled in from the effective settings."""

    rule: str
    title: str
    metrics: str
    warn: str
    critical: str
    persistence: str
    enabled: bool
    why: str = ""  # the rule of thumb behind its critical level


def _text(value: Any) -> str:
    """A setting as it reads in a table: 3/5 for persistence pairs, "-" for switched-off levels."""
    if value is None:
        return "-"
    if isinstance(value, tuple):
        return f"{value[0]} of {value[1]}"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _metrics(text: str, values: dict[str, str]) -> str:
    """The metrics column with settings filled in where it names one (``{min_prompts}``); braces
    that name a set of tags (``rollout_corr/{kl, …}``) are kept as they are."""
    try:
        return text.format(**values)
    except (KeyError, IndexError, ValueError):
        return text


def _fill(template: str, values: dict[str, str], threshold: Any) -> str:
    """The template with settings filled in; "-" when its level is switched off (None)."""
    return "-" if threshold is None else template.format(**values)


def rule_rows(rules: Rules | None = None) -> list[RuleRow]:
    """Every rule with its effective thresholds (defaults when ``rules`` is None)."""
    rules = rules or Rules.defaults()
    rows = []
    for rule in EVERY:
        name, params, doc = rule.name, rules[rule.name], DOCS[rule.name]
        values = {key: _text(value) for key, value in params.values.items()}
        if "persistence" in params.values:
            values["critical_persistence"] = _text(params.critical_persistence)
        rows.append(
            RuleRow(
                name,
                doc.title,
                _metrics(doc.metrics, values),
                _fill(doc.warn, values, params.values.get("warn", "")),
                _fill(doc.critical, values, params.values.get("critical", "")),
                _fill(doc.persistence, values, ""),
                params.enabled,
                doc.why.format(**values),
            )
        )
    return rows


def markdown_table(rules: Rules | None = None) -> str:
    """The rule table in Markdown (what docs/guide/rules.md shows for the defaults)."""
    lines = [
        "| rule | metric | warn | critical | persistence | rule of thumb |",
        "|---|---|---|---|---|---|",
    ]
    for row in rule_rows(rules):
        off = " (off)" if not row.enabled else ""
        lines.append(
            f"| `{row.rule}`{off}: {row.title} | {row.metrics} | {row.warn} | {row.critical} | "
            f"{row.persistence} | {row.why} |"
        )
    return "\n".join(lines)


def concept_table() -> str:
    """Each concept a rule or detector judges, with the rules and every framework's spellings (a
    tag may carry a ``train/``, ``eval/`` or ``test/`` prefix): the guide's names table."""
    judged: dict[str, list[str]] = {}
    for rule in EVERY:
        for concept in sorted(rule.concepts):
            judged.setdefault(concept, []).append(rule.name)
    frameworks = [table.framework for table in TABLES]
    lines = [
        "| concept | judged by | " + " | ".join(frameworks) + " |",
        "|---|---|" + "---|" * len(frameworks),
    ]
    for concept in sorted(judged, key=lambda name: ORDER[name]):
        names = [
            ", ".join(f"`{name.key}`" for name in table.names if name.concept == concept) or "-"
            for table in TABLES
        ]
        rules = ", ".join(f"`{name}`" for name in judged[concept])
        lines.append(f"| {CONCEPTS[concept].title} (`{concept}`) | {rules} | " + " | ".join(names) + " |")
    return "\n".join(lines)
