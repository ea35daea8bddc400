"""Shared by the tests: what test_snapshot_helpers.py used to define for itself and others."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

from markdown_it import MarkdownIt

from rltop.cli import main

_ANNOTATIONS = {"$schema", "$id", "$defs", "title", "description"}


_KEYWORDS = {
    "$ref", "type", "enum", "const", "properties", "required", "additionalProperties", "items",
    "anyOf", "minimum", "pattern",
}  # fmt: skip


_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def validate(
    instance: Any, schema: dict[str, Any], root: dict[str, Any] | None = None, path: str = "$"
) -> list[str]:
    """Errors of ``instance`` against ``schema`` (empty list: valid)."""
    root = schema if root is None else root
    unknown = set(schema) - _KEYWORDS - _ANNOTATIONS
    if unknown:
        raise AssertionError(f"validator does not implement {sorted(unknown)} (at {path})")
    errors: list[str] = []
    if "$ref" in schema:
        ref = schema["$ref"]
        assert ref.startswith("#/"), ref
        target: Any = root
        for part in ref[2:].split("/"):
            target = target[part]
        errors += validate(instance, target, root, path)
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_TYPES[t](instance) for t in types):
            return errors + [f"{path}: {instance!r} is not of type {types}"]
    if "enum" in schema and instance not in schema["enum"]:
        errors.append(f"{path}: {instance!r} not in {schema['enum']}")
    if "const" in schema and (instance != schema["const"] or type(instance) is not type(schema["const"])):
        errors.append(f"{path}: {instance!r} != {schema['const']!r}")
    if "minimum" in schema and _TYPES["number"](instance) and instance < schema["minimum"]:
        errors.append(f"{path}: {instance!r} < {schema['minimum']}")
    if "pattern" in schema and isinstance(instance, str) and not re.search(schema["pattern"], instance):
        errors.append(f"{path}: {instance!r} does not match {schema['pattern']}")
    if "anyOf" in schema and all(validate(instance, option, root, path) for option in schema["anyOf"]):
        errors.append(f"{path}: {instance!r} matches none of anyOf")
    if isinstance(instance, dict):
        for key in schema.get("required", []):
            if key not in instance:
                errors.append(f"{path}: missing {key!r}")
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, value in instance.items():
            if key in properties:
                errors += validate(value, properties[key], root, f"{path}.{key}")
            elif extra is False:
                errors.append(f"{path}: unexpected property {key!r}")
            elif isinstance(extra, dict):
                errors += validate(value, extra, root, f"{path}[{key!r}]")
    if isinstance(instance, list) and "items" in schema:
        for index, item in enumerate(instance):
            errors += validate(item, schema["items"], root, f"{path}[{index}]")
    return errors


def freeze_clock(monkeypatch, now: float) -> None:
    """Make ``rltop snapshot`` take its snapshot at ``now`` (staleness and the stall rule)."""
    import rltop.commands.snapshot as command

    monkeypatch.setattr(command, "_clock", lambda: now)


def isolate_user_rules(monkeypatch, tmp_path) -> None:
    """No ~/.config/rltop/rules.toml of the machine running the tests may change a verdict."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def verdicts_at(path, now: float | None):
    """(store, the engine's verdicts at ``now``) for a log path, as ``rltop snapshot`` judges it."""
    from rltop.health.engine import assess_store
    from rltop.health.settings import load_rules
    from rltop.ingest.follow.loader import load

    store = load([str(path)]).store
    return store, assess_store(store, load_rules(), now=now)


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    """``rltop`` in this process: (exit code, stdout, stderr)."""
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def markdown_tables(text: str) -> list[list[list[str]]]:
    """Every table of a Markdown document as GitHub renders it: tables -> rows -> cell texts."""
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    tables: list[list[list[str]]] = []
    row: list[str] | None = None
    for token in tokens:
        if token.type == "table_open":
            tables.append([])
        elif token.type == "tr_open":
            row = []
        elif token.type == "tr_close":
            tables[-1].append(row or [])
            row = None
        elif token.type == "inline" and row is not None:
            row.append(_inline_text(token))
    return tables


def _inline_text(token) -> str:
    """The text a reader sees in an inline token (code spans and escapes resolved)."""
    parts = []
    for child in token.children or []:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("html_inline", "html_block"):
            parts.append("<RAW-HTML>")  # never expected: raw HTML would be interpreted
    return "".join(parts)


def markdown_html(text: str) -> str:
    """The HTML GitHub-like rendering of a Markdown document."""
    return MarkdownIt("commonmark").enable("table").render(text)


_SCHEMA = {
    "type": "object",
    "required": ["a", "b"],
    "additionalProperties": False,
    "properties": {
        "a": {"$ref": "#/$defs/n"},
        "b": {"type": "array", "items": {"enum": ["x", "y"]}},
        "c": {"type": ["string", "null"], "pattern": "^z"},
        "d": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}},
        "e": {"const": 1},
    },
    "$defs": {"n": {"anyOf": [{"type": "number"}, {"enum": ["nan"]}]}},
}


class TextCollector(HTMLParser):
    """The text of an HTML document, in order (to compare an HTML snapshot with the text one)."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)
