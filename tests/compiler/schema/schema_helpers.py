"""Helpers shared by the schema tests: parsing, the schema document, walking it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from statekit.compiler.diagnostics import Diagnostic
from statekit.compiler.schema import validator
from statekit.compiler.source.loader import load_yaml
from statekit.compiler.source.nodes import Node

REPO = Path(__file__).resolve().parents[3]
SCHEMA_FILE = REPO / "statekit" / "schema" / "statechart.schema.json"
DSL_DOC = REPO / "docs" / "dsl.md"
FULL_CHART = Path(__file__).parents[1] / "fixtures" / "full_chart.yaml"

DRAFT7_KEYWORDS = {
    "$schema", "$id", "$ref", "$comment", "title", "description", "default", "examples",
    "type", "enum", "const", "properties", "patternProperties", "additionalProperties",
    "required", "propertyNames", "minProperties", "maxProperties", "items", "additionalItems",
    "minItems", "maxItems", "uniqueItems", "contains", "pattern", "minLength", "maxLength",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "oneOf",
    "anyOf", "allOf", "not", "if", "then", "else", "definitions", "dependencies",
    "markdownDescription",
}  # fmt: skip


def parse(text: str, file: str = "chart.yaml") -> Node:
    root, problems = load_yaml(text, file)
    assert root is not None, problems
    assert not problems, problems
    return root


def check(text: str) -> tuple[Diagnostic, ...]:
    return validator.validate(parse(text), "chart.yaml")


def loaded_schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return loaded


def walk(
    node: Any, path: tuple[str | int, ...] = ()
) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    """Every sub-schema (dicts only) with its path in the schema document."""
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            if key in ("enum", "const", "required", "default", "examples"):
                continue
            if key in ("properties", "definitions", "patternProperties"):
                for name, sub in value.items():
                    yield from walk(sub, (*path, key, name))
            else:
                yield from walk(value, (*path, key))
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from walk(item, (*path, index))
