"""The DSL's JSON Schema as one yes-or-no check, built once from the schema document.

Most charts a linter or a runner reads are valid, and for them jsonschema (its
import alone costs more than linting a small chart, and it builds an error
object for every branch of a `oneOf` that does not match) does work whose only
answer is "no errors". `conforms` answers that case directly: each sub-schema
is turned into one Python function once per process, and a valid chart is
checked without importing jsonschema at all. It is written here rather than
taken from a library because its point is to need no library on that path;
jsonschema stays the authority: `conforms` returning False only sends the
chart on to the full validation (`statekit.compiler.schema.validator`), which
finds and explains the errors.

The promise, checked by the tests on generated documents against jsonschema:
`conforms(x)` is True exactly when the Draft 7 validator (with the DSL's strict
integers and ECMA-262 `$`) reports no error for `x`; where a comparison would
need more of JSON's equality than the schema uses (a list of lists or a `NaN`
under `uniqueItems`), it answers False for the whole document (never for one
branch of a `oneOf`, where a wrong False could make another branch the only
match) and leaves the decision to jsonschema. Building it fails loudly on a
keyword this module does not know, so a schema that grows one cannot be
checked only in part.
"""

from __future__ import annotations

import functools
import math
import numbers
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from statekit.compiler.schema.document import Schema, schema

Check = Callable[[object], bool]
"""True when the value certainly conforms to one sub-schema."""

# Keywords that say nothing about validity (Draft 7 annotations and containers).
_ANNOTATIONS = frozenset(
    {"$schema", "$id", "$comment", "title", "description", "default", "examples", "definitions"}
    | {"markdownDescription"}
)
_OBJECT_KEYWORDS = frozenset(
    {"properties", "additionalProperties", "required", "propertyNames"}
    | {"minProperties", "maxProperties"}
)
_ARRAY_KEYWORDS = frozenset({"items", "minItems", "maxItems", "uniqueItems"})
_OTHER_KEYWORDS = frozenset(
    {"type", "enum", "const", "pattern", "minLength", "minimum", "maximum", "oneOf", "not"}
)
KNOWN_KEYWORDS = _ANNOTATIONS | _OBJECT_KEYWORDS | _ARRAY_KEYWORDS | _OTHER_KEYWORDS | {"$ref"}
"""Every keyword `conforms` understands; any other one in the schema is an error at build."""


def _is_number(value: object) -> bool:
    return isinstance(value, numbers.Number) and not isinstance(value, bool)


def is_strict_integer(value: object) -> bool:
    """The DSL's integers are Python ints: neither `true` nor `1.0` is an integer."""
    return isinstance(value, int) and not isinstance(value, bool)


_TYPES: dict[str, Check] = {
    "object": lambda value: isinstance(value, dict),
    "array": lambda value: isinstance(value, list),
    "string": lambda value: isinstance(value, str),
    "integer": is_strict_integer,
    "number": _is_number,
    "boolean": lambda value: isinstance(value, bool),
    "null": lambda value: value is None,
}


@functools.cache
def ecma_pattern(pattern: str) -> re.Pattern[str]:
    """A JSON Schema `pattern` compiled for Python with ECMA-262's meaning of `$`.

    In ECMA-262 (what JSON Schema patterns are) `$` ends the input; in Python it
    also matches before a final newline, which would let "idle\\n" be a name.
    """
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern)


class _Undecided(Exception):
    """Raised by a check that cannot tell; `conforms` then answers False."""


def conforms(instance: object) -> bool:
    """True when `instance` (plain YAML data) certainly conforms to the DSL's schema;
    False when it does not, or when only the full validator can tell."""
    return _dsl_check()(instance)


@functools.cache
def _dsl_check() -> Check:
    return compile_schema(schema())


def compile_schema(document: Schema) -> Check:
    """A `Check` for a whole Draft 7 `document` (local `#/definitions/` references only):
    True only when the value conforms; False when it does not or cannot be told here.
    Raises `ValueError` for a keyword outside `KNOWN_KEYWORDS`."""
    root = _Builder(document).build(document)

    def check(instance: object) -> bool:
        try:
            return root(instance)
        except _Undecided:
            return False

    return check


def _always(_value: object) -> bool:
    return True


def _never(_value: object) -> bool:
    return False


class _Builder:
    """Turns sub-schemas into `Check` functions; a `$ref` is built once per definition."""

    def __init__(self, document: Schema) -> None:
        self.definitions: Mapping[str, Any] = document.get("definitions", {})
        self.built: dict[str, Check] = {}

    def build(self, node: object) -> Check:
        if node is True:
            return _always
        if node is False:
            return _never
        if not isinstance(node, Mapping):
            raise ValueError(f"not a schema: {node!r}")
        if "$ref" in node:  # Draft 7: the siblings of a `$ref` are ignored
            return self.reference(str(node["$ref"]))
        unknown = set(node) - KNOWN_KEYWORDS
        if unknown:
            raise ValueError(f"schema keywords not supported here: {sorted(unknown)}")
        checks = [
            *self.generic(node),
            *([self.mapping(node)] if _OBJECT_KEYWORDS & set(node) else []),
            *([self.sequence(node)] if _ARRAY_KEYWORDS & set(node) else []),
        ]
        return _all_of(checks)

    def reference(self, ref: str) -> Check:
        prefix = "#/definitions/"
        if not ref.startswith(prefix) or ref[len(prefix) :] not in self.definitions:
            raise ValueError(f"only local definitions can be referenced: {ref!r}")
        name = ref[len(prefix) :]
        if name not in self.built:
            # a placeholder first, so that a definition that refers to itself (a state's
            # `states`) finds its own check at call time
            self.built[name] = lambda value: self.built[name](value)
            self.built[name] = self.build(self.definitions[name])
        built = self.built[name]
        return built

    def generic(self, node: Schema) -> list[Check]:
        checks: list[Check] = []
        if "type" in node:
            names = [node["type"]] if isinstance(node["type"], str) else list(node["type"])
            checks.append(_type_check(names))
        if "enum" in node:
            checks.append(_one_of_values(node["enum"]))
        if "const" in node:
            checks.append(_one_of_values([node["const"]]))
        if "pattern" in node:
            search = ecma_pattern(str(node["pattern"])).search
            checks.append(lambda value: not isinstance(value, str) or search(value) is not None)
        if "minLength" in node:
            least = int(node["minLength"])
            checks.append(lambda value: not isinstance(value, str) or len(value) >= least)
        if "minimum" in node:
            low = node["minimum"]
            checks.append(lambda value: not _is_number(value) or _not_below(value, low))
        if "maximum" in node:
            high = node["maximum"]
            checks.append(lambda value: not _is_number(value) or _not_above(value, high))
        if "oneOf" in node:
            checks.append(self.one_of(node["oneOf"]))
        if "not" in node:
            # `conforms` may say False for a valid value; under `not` that would turn into
            # a wrong True, so a `not` is only decided here when its schema is plain
            # `required` keys (all the DSL uses), which this module decides exactly
            excluded = node["not"]
            if not (isinstance(excluded, Mapping) and set(excluded) == {"required"}):
                raise ValueError(f"`not` is supported only over `required`: {excluded!r}")
            keys = tuple(excluded["required"])
            # `required` holds for anything that is not a mapping, so its `not` fails there
            checks.append(
                lambda value: isinstance(value, dict) and not all(k in value for k in keys)
            )
        return checks

    def one_of(self, branches: Sequence[object]) -> Check:
        """Exactly one branch holds. Only the branches whose `type` admits the value's
        kind are tried (a branch of another type fails on it anyway), and trying stops
        at the second match. With `_type_check` and `_all_of`, this took the whole
        predicate on bench/lsp_latency.py's 500-state chart from 15.1 to 4.4 ms."""
        built = [self.build(branch) for branch in branches]
        kinds = [self.kinds(branch) for branch in branches]
        candidates = {
            kind: tuple(
                check
                for check, admitted in zip(built, kinds, strict=True)
                if admitted is None
                or kind in admitted
                or (kind == "integer" and "number" in admitted)
            )
            for kind in set(_KIND_OF.values())
        }
        every = tuple(built)

        def one_of(value: object) -> bool:
            found = 0
            for branch in candidates.get(_KIND_OF.get(value.__class__, ""), every):
                if branch(value):
                    found += 1
                    if found > 1:
                        return False
            return found == 1

        return one_of

    def kinds(self, node: object, seen: tuple[str, ...] = ()) -> frozenset[str] | None:
        """The JSON types a sub-schema admits at most (its `type`, through `$ref`s);
        None when it does not say."""
        if not isinstance(node, Mapping):
            return None
        if "$ref" in node:
            name = str(node["$ref"]).rsplit("/", 1)[-1]
            if name in seen or name not in self.definitions:
                return None
            return self.kinds(self.definitions[name], (*seen, name))
        if "type" not in node:
            return None
        names = node["type"]
        return frozenset([names] if isinstance(names, str) else names)

    def mapping(self, node: Schema) -> Check:
        properties = {key: self.build(sub) for key, sub in node.get("properties", {}).items()}
        additional = self.build(node.get("additionalProperties", True))
        names = self.build(node["propertyNames"]) if "propertyNames" in node else None
        required = tuple(node.get("required", ()))
        least = int(node.get("minProperties", 0))
        most = node.get("maxProperties")

        def mapping_check(value: object) -> bool:
            if not isinstance(value, dict):
                return True
            if len(value) < least or (most is not None and len(value) > most):
                return False
            if not all(key in value for key in required):
                return False
            for key, item in value.items():
                if names is not None and not names(key):
                    return False
                if not properties.get(key, additional)(item):
                    return False
            return True

        return mapping_check

    def sequence(self, node: Schema) -> Check:
        items = node.get("items", True)
        positional = [self.build(sub) for sub in items] if isinstance(items, Sequence) else None
        every = None if positional is not None else self.build(items)
        least = int(node.get("minItems", 0))
        most = node.get("maxItems")
        unique = bool(node.get("uniqueItems", False))

        def sequence_check(value: object) -> bool:
            if not isinstance(value, list):
                return True
            if len(value) < least or (most is not None and len(value) > most):
                return False
            if every is not None and not all(every(item) for item in value):
                return False
            if positional is not None and not all(
                check(item) for check, item in zip(positional, value, strict=False)
            ):
                return False
            return not unique or _all_distinct(value)

        return sequence_check


_KIND_OF: dict[type, str] = {
    dict: "object",
    list: "array",
    str: "string",
    bool: "boolean",
    type(None): "null",
    int: "integer",
    float: "number",
}
"""The JSON type of a value of plain YAML data by its exact class (an `int` is also a
`number`); a value of another class is tried against every branch of a `oneOf`."""

_CLASSES: dict[str, type] = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "null": type(None),
}


def _type_check(names: Sequence[str]) -> Check:
    """The `type` keyword: one `isinstance` when no name is `integer` or `number`
    (whose checks exclude booleans), else any of the names' checks."""
    if all(name in _CLASSES for name in names):
        classes = tuple(_CLASSES[name] for name in names)
        return lambda value: isinstance(value, classes)
    kinds = [_TYPES[name] for name in names]
    return lambda value: any(kind(value) for kind in kinds)


def _all_of(checks: list[Check]) -> Check:
    """Every check holds, unrolled for the usual two or three (no generator per value;
    see `_Builder.one_of` for the figure)."""
    if not checks:
        return _always
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda value: first(value) and second(value)
    if len(checks) == 3:
        one, two, three = checks
        return lambda value: one(value) and two(value) and three(value)
    every = tuple(checks)

    def all_of(value: object) -> bool:
        return all(check(value) for check in every)

    return all_of


def _not_below(value: Any, low: Any) -> bool:
    return bool(not value < low)


def _not_above(value: Any, high: Any) -> bool:
    return bool(not value > high)


def _scalar_key(value: object) -> tuple[str, object] | None:
    """A key under which two scalars are equal exactly when JSON Schema calls them equal
    (`true` is not 1, 1 is 1.0); None for anything this module leaves to jsonschema."""
    if isinstance(value, bool):
        return ("boolean", value)
    if value is None:
        return ("null", None)
    if isinstance(value, str):
        return ("string", value)
    if isinstance(value, int | float) and not (isinstance(value, float) and math.isnan(value)):
        return ("number", value)
    return None


def _one_of_values(allowed: Sequence[object]) -> Check:
    keys = {_scalar_key(value) for value in allowed}
    if None in keys:
        raise ValueError(f"`enum`/`const` is supported only over scalars: {allowed!r}")

    def is_allowed(value: object) -> bool:
        key = _scalar_key(value)
        return key is not None and key in keys

    return is_allowed


def _all_distinct(values: list[object]) -> bool:
    keys = [_scalar_key(value) for value in values]
    if None in keys:
        raise _Undecided
    return len(set(keys)) == len(keys)
