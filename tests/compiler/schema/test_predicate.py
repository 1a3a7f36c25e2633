"""The schema as one yes-or-no check agrees with jsonschema on every document tried.

`conforms` lets a valid chart skip jsonschema; it must say True exactly when
the Draft 7 validator (strict integers, ECMA `$`) finds nothing. The documents
tried: every chart in the repository, and those charts mutated at random
places (a value replaced by any YAML value, a key removed, a key added, a list
item repeated, a name given a trailing newline), plus free-form YAML data.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from schema_helpers import REPO, loaded_schema, walk

from statekit.compiler.schema import predicate, validator
from statekit.compiler.source.loader import load_yaml
from statekit.compiler.source.nodes import to_plain


def _charts() -> dict[str, Any]:
    found: dict[str, Any] = {}
    for folder in ("machines", "examples", "tests", "bench"):
        for path in sorted((REPO / folder).rglob("*.yaml")):
            root, problems = load_yaml(path.read_bytes(), str(path))
            if root is not None and not problems:
                found[str(path.relative_to(REPO))] = to_plain(root)
    return found


CHARTS = _charts()
VALID = [doc for doc in CHARTS.values() if validator.schema_validator().is_valid(doc)]
SCHEMA_KEYS = sorted(
    {key for _, node in walk(loaded_schema()) for key in node.get("properties", {})}
)


def jsonschema_accepts(document: object) -> bool:
    return bool(validator.schema_validator().is_valid(document))


def test_there_are_valid_and_invalid_charts_to_compare() -> None:
    assert len(VALID) >= 5
    assert len(CHARTS) > len(VALID)


@pytest.mark.parametrize("name", sorted(CHARTS))
def test_every_chart_in_the_repository(name: str) -> None:
    assert predicate.conforms(CHARTS[name]) == jsonschema_accepts(CHARTS[name])


NAMES = st.sampled_from(["idle", "a.b", "*", "GO", "x\n", "", " ", "on", "1", "é", "ctx.n > 1"])
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    NAMES,
    st.sampled_from(SCHEMA_KEYS),
    st.text(max_size=4),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.one_of(NAMES, st.sampled_from(SCHEMA_KEYS)), inner, max_size=3),
    ),
    max_leaves=8,
)


def _containers(document: Any) -> list[Any]:
    """Every mapping and list inside `document`, the document first."""
    found = [document]
    for item in document.values() if isinstance(document, dict) else document:
        if isinstance(item, dict | list):
            found.extend(_containers(item))
    return found


@st.composite
def mutated_charts(draw: st.DrawFn) -> Any:
    document = copy.deepcopy(draw(st.sampled_from(VALID)))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        containers = _containers(document)
        target = draw(st.sampled_from(containers))
        action = draw(st.sampled_from(["replace", "remove", "add", "repeat", "newline"]))
        if isinstance(target, dict):
            keys = sorted(target)
            if action == "add" or not keys:
                key = draw(st.one_of(st.sampled_from(SCHEMA_KEYS), NAMES))
                target[key] = draw(VALUES)
            elif action == "remove":
                del target[draw(st.sampled_from(keys))]
            elif action == "newline":
                key = draw(st.sampled_from(keys))
                value = target.pop(key)
                target[key + "\n"] = value
            else:
                target[draw(st.sampled_from(keys))] = draw(VALUES)
        elif target:
            index = draw(st.integers(min_value=0, max_value=len(target) - 1))
            if action == "remove":
                del target[index]
            elif action == "repeat":
                target.append(copy.deepcopy(target[index]))
            elif action == "newline" and isinstance(target[index], str):
                target[index] += "\n"
            else:
                target[index] = draw(VALUES)
        else:
            target.append(draw(VALUES))
    return document


@settings(max_examples=400, deadline=None)
@given(mutated_charts())
def test_mutated_charts(document: Any) -> None:
    assert predicate.conforms(document) == jsonschema_accepts(document)


@settings(max_examples=200, deadline=None)
@given(VALUES)
def test_free_form_data(document: Any) -> None:
    assert predicate.conforms(document) == jsonschema_accepts(document)


@pytest.mark.parametrize(
    "values",
    [
        ["a", "b", "a"],
        [1, 1.0],
        [1, True],
        [0, False, None],
        [math.nan, math.nan],
        [[1], [1]],
        [{"a": 1}, {"a": 1}],
    ],
    ids=repr,
)
def test_unique_lists_of_every_kind(values: list[Any]) -> None:
    document = {"statechart": "x", "events": {"E": {"f": {"type": "string", "enum": values}}}}
    assert predicate.conforms(document) == jsonschema_accepts(document)


GENERIC_SCHEMAS = [
    {"uniqueItems": True},
    {"type": "array", "items": [{"type": "integer"}, {"enum": ["a", 1, True]}], "maxItems": 3},
    {"oneOf": [{"uniqueItems": True}, {"minItems": 2}]},
    {"not": {"required": ["a", "b"]}, "minProperties": 1, "maxProperties": 2},
    {"type": ["number", "null"], "minimum": 0, "maximum": 1.5},
    {"const": False},
    {"propertyNames": {"pattern": "^[a-z]+$"}, "additionalProperties": {"minLength": 2}},
]


@pytest.mark.parametrize("document", GENERIC_SCHEMAS, ids=repr)
@settings(max_examples=150, deadline=None)
@given(VALUES)
def test_other_schemas_never_accept_what_jsonschema_refuses(
    document: dict[str, Any], instance: Any
) -> None:
    # outside the DSL's schema, a list whose items are not scalars (a list of lists
    # under `uniqueItems`) is left to jsonschema: `conforms` only ever errs towards False
    from jsonschema import Draft7Validator

    if predicate.compile_schema(document)(instance):
        assert Draft7Validator(document).is_valid(instance)


@pytest.mark.parametrize(
    "document",
    [
        {"patternProperties": {"^x": {}}},
        {"anyOf": [{}]},
        {"not": {"type": "string"}},
        {"enum": [[1]]},
        {"$ref": "#/definitions/missing"},
        {"$ref": "http://example.com/schema"},
    ],
    ids=repr,
)
def test_a_schema_it_cannot_decide_exactly_is_refused_when_built(document: Any) -> None:
    with pytest.raises(ValueError):
        predicate.compile_schema(document)


def test_a_valid_chart_is_checked_without_importing_jsonschema(tmp_path: Path) -> None:
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from statekit.compiler.pipeline import compile_file\n"
        f"assert compile_file({str(REPO / 'machines' / 'task.yaml')!r}).chart is not None\n"
        "assert 'jsonschema' not in sys.modules, 'jsonschema imported'\n"
        "bad = compile_file(sys.argv[1])\n"
        "assert bad.chart is None and bad.diagnostics[0].slug == 'schema', bad\n"
        "assert 'jsonschema' in sys.modules\n"
    )
    bad = tmp_path / "bad.yaml"
    bad.write_text("statechart: x\nstates: {a: {on: {GO: {to: a, tp: b}}}}\ninitial: a\n")
    subprocess.run([sys.executable, "-c", script, str(bad)], check=True, cwd=REPO)
