"""The DSL's JSON Schema document, exactly as shipped in the package."""

from __future__ import annotations

import functools
import json
import pkgutil
from collections.abc import Mapping
from typing import Any

SCHEMA_PACKAGE = "statekit"
SCHEMA_PATH = ("schema", "statechart.schema.json")

Schema = Mapping[str, Any]
"""A JSON Schema document or one of its sub-schemas."""


def schema_text() -> str:
    """The JSON Schema of the DSL, exactly as shipped in the package (for `statekit schema`)."""
    # through the package's loader (a folder or a zip alike); `importlib.resources`
    # would do the same but its import costs more than reading the file
    data = pkgutil.get_data(SCHEMA_PACKAGE, "/".join(SCHEMA_PATH))
    if data is None:  # a loader that cannot read package data: not one Python ships
        raise FileNotFoundError(f"{SCHEMA_PACKAGE}: {'/'.join(SCHEMA_PATH)} cannot be read")
    return data.decode("utf-8")


@functools.cache
def schema() -> Schema:
    """The parsed schema (cached; do not mutate)."""
    loaded: dict[str, Any] = json.loads(schema_text())
    return loaded
