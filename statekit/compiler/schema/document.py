"""The DSL's JSON Schema document, exactly as shipped in the package."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from importlib import resources
from typing import Any

SCHEMA_PACKAGE = "statekit"
SCHEMA_PATH = ("schema", "statechart.schema.json")

Schema = Mapping[str, Any]
"""A JSON Schema document or one of its sub-schemas."""


def schema_text() -> str:
    """The JSON Schema of the DSL, exactly as shipped in the package (for `statekit schema`)."""
    resource = resources.files(SCHEMA_PACKAGE).joinpath(*SCHEMA_PATH)
    return resource.read_text(encoding="utf-8")


@functools.cache
def schema() -> Schema:
    """The parsed schema (cached; do not mutate)."""
    loaded: dict[str, Any] = json.loads(schema_text())
    return loaded
