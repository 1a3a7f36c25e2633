"""The schema stage: check a positioned YAML tree against the DSL's JSON Schema.

`statekit/schema/statechart.schema.json` defines the DSL vocabulary once (draft-07
keywords, so yaml-language-server can use it too). A chart is first checked by
`statekit.compiler.schema.predicate`, the schema turned into one yes-or-no
function; only a chart it does not accept goes through jsonschema (imported
then, with one cached validator), and `statekit.compiler.schema.explanation`
turns every JSON Schema error into one positioned `Diagnostic` in the DSL's
terms. A valid chart is thus checked without importing jsonschema.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, cast

from statekit.compiler.diagnostics import Diagnostic
from statekit.compiler.schema.document import Schema, schema
from statekit.compiler.schema.predicate import conforms, ecma_pattern, is_strict_integer
from statekit.compiler.source.nodes import Node, to_plain

if TYPE_CHECKING:
    from jsonschema import Draft7Validator
    from jsonschema.exceptions import ValidationError


def _is_strict_integer(_checker: object, instance: object) -> bool:
    return is_strict_integer(instance)


def _pattern(
    validator: Draft7Validator, pattern: str, instance: object, _schema: Schema
) -> Iterator[ValidationError]:
    from jsonschema.exceptions import ValidationError

    if isinstance(instance, str) and not ecma_pattern(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


@functools.cache
def schema_validator() -> Draft7Validator:
    """One validator for the process, over a copy of the schema with `$ref`s inlined.

    Resolving a `$ref` costs more than checking most keywords, so every
    reference is replaced by its definition except where a definition refers
    back to itself (a state's `states`). Errors keep the same keyword paths
    (jsonschema does not record `$ref` steps), so messages can read the
    original schema.
    """
    from jsonschema import Draft7Validator, validators

    statechart_validator = validators.extend(  # type: ignore[no-untyped-call]  # untyped stubs
        Draft7Validator,
        validators={"pattern": _pattern},
        type_checker=Draft7Validator.TYPE_CHECKER.redefine("integer", _is_strict_integer),
    )
    definitions = schema()["definitions"]
    inlined = {
        **_inline(schema(), definitions, ()),
        "definitions": {
            name: _inline(body, definitions, (name,)) for name, body in definitions.items()
        },
    }
    return cast("Draft7Validator", statechart_validator(inlined))


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
    plain = to_plain(root)
    if conforms(plain):
        return ()
    from statekit.compiler.schema.explanation import explain_errors  # reads jsonschema errors

    return explain_errors(schema_validator().iter_errors(plain), root, file)
