"""The schema stage: check a positioned YAML tree against the DSL's JSON Schema.

`statekit/schema/statechart.schema.json` defines the DSL vocabulary once (draft-07
keywords, so yaml-language-server can use it too). This module validates a
chart with one cached validator; `statekit.compiler.schema.explanation` turns
every JSON Schema error into one positioned `Diagnostic` in the DSL's terms.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import Any, cast

from jsonschema import Draft7Validator, validators
from jsonschema.exceptions import ValidationError

from statekit.compiler.diagnostics import Diagnostic
from statekit.compiler.schema.document import Schema, schema
from statekit.compiler.schema.explanation import explain_errors
from statekit.compiler.source.nodes import Node, to_plain


def _is_strict_integer(_checker: object, instance: object) -> bool:
    # The DSL's integers are Python ints: neither `true` nor `1.0` is an integer.
    return isinstance(instance, int) and not isinstance(instance, bool)


@functools.cache
def _ecma_pattern(pattern: str) -> re.Pattern[str]:
    # In ECMA-262 (what JSON Schema patterns are) `$` ends the input; in Python
    # it also matches before a final newline, which would let "idle\n" be a name.
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern)


def _pattern(
    validator: Draft7Validator, pattern: str, instance: object, _schema: Schema
) -> Iterator[ValidationError]:
    if isinstance(instance, str) and not _ecma_pattern(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


_StatechartValidator = validators.extend(  # type: ignore[no-untyped-call]  # untyped in the stubs
    Draft7Validator,
    validators={"pattern": _pattern},
    type_checker=Draft7Validator.TYPE_CHECKER.redefine("integer", _is_strict_integer),
)


@functools.cache
def schema_validator() -> Draft7Validator:
    """One validator for the process, over a copy of the schema with `$ref`s inlined.

    Resolving a `$ref` costs more than checking most keywords, so every
    reference is replaced by its definition except where a definition refers
    back to itself (a state's `states`). Errors keep the same keyword paths
    (jsonschema does not record `$ref` steps), so messages can read the
    original schema.
    """
    definitions = schema()["definitions"]
    inlined = {
        **_inline(schema(), definitions, ()),
        "definitions": {
            name: _inline(body, definitions, (name,)) for name, body in definitions.items()
        },
    }
    return cast(Draft7Validator, _StatechartValidator(inlined))


def _inline(node: Any, definitions: Schema, expanding: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline(item, definitions, expanding) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        name = str(node["$ref"]).rsplit("/", 1)[-1]
        if name in expanding:
            return {"$ref": node["$ref"]}
        return _inline(definitions[name], definitions, (*expanding, name))
    return {key: _inline(value, definitions, expanding) for key, value in node.items()}


def validate(root: Node, file: str) -> tuple[Diagnostic, ...]:
    """Every schema problem of the chart at `root`: one positioned error each, sorted."""
    return explain_errors(schema_validator().iter_errors(to_plain(root)), root, file)
