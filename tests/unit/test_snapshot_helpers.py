"""Helpers shared by the snapshot tests: run the CLI in-process, a small JSON Schema validator, tables.

jsonschema is not a dependency, so `validate` implements the subset of JSON Schema 2020-12 that
``rltop/report/schema.json`` uses, and refuses any other keyword (a constraint it does not know
would otherwise be skipped silently and the test would pass vacuously)."""

from __future__ import annotations

import pytest
from helpers.snapshot import _SCHEMA, markdown_tables, validate  # noqa: F401 (fixtures among them)


def test_validator_accepts_valid_documents() -> None:
    assert validate({"a": 1.5, "b": ["x"], "c": "zz", "d": {"k": 3}, "e": 1}, _SCHEMA) == []
    assert validate({"a": "nan", "b": [], "c": None}, _SCHEMA) == []


def test_validator_rejects_each_kind_of_error() -> None:
    bad = [
        {"b": []},  # required
        {"a": 1, "b": [], "zz": 0},  # additionalProperties false
        {"a": "inf", "b": []},  # anyOf / enum
        {"a": 1, "b": ["q"]},  # items enum
        {"a": 1, "b": [], "c": "a"},  # pattern
        {"a": 1, "b": [], "c": 3},  # type list
        {"a": 1, "b": [], "d": {"k": -1}},  # minimum in additionalProperties schema
        {"a": 1, "b": [], "d": {"k": True}},  # bool is not an integer
        {"a": 1, "b": [], "e": True},  # const is type-strict
        {"a": True, "b": []},  # bool is not a number
    ]
    for document in bad:
        assert validate(document, _SCHEMA), document


def test_validator_refuses_keywords_it_does_not_implement() -> None:
    with pytest.raises(AssertionError, match="maxLength"):
        validate("x", {"type": "string", "maxLength": 3})


def test_markdown_tables_are_parsed_like_github() -> None:
    doc = "| a | b |\n|---|--:|\n| `x\\|y` | 1 \\<b\\> |\n\nnot | a table\n"
    assert markdown_tables(doc) == [[["a", "b"], ["x|y", "1 <b>"]]]
