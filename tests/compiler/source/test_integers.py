"""Every integer the loader builds is bounded, whatever its notation; `version` has a range.

The family: each YAML 1.1 integer notation (decimal, signed, with underscores,
hexadecimal, octal, binary, sexagesimal) at lengths just within the bound,
just past it and far past it, in each place a chart holds an integer or a
value (the version, a context default, an enum value, a payload default, the
chart's name where a string is expected). Within the bound the chart compiles
and its digest and IR encode; past it the loader reports where the literal is,
and `statekit.load` raises `CompileError`, never `ValueError`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import statekit
from statekit import CompileError
from statekit.compiler.serialize import chart_to_json
from statekit.compiler.source.limits import MAX_INTEGER_DIGITS

N = MAX_INTEGER_DIGITS

# (name, literal, accepted)
LITERALS: list[tuple[str, str, bool]] = [
    ("decimal-at-bound", "9" * N, True),
    ("decimal-past", "9" * (N + 1), False),
    ("decimal-far-past", "1" * 200_000, False),
    ("signed-decimal-at-bound", "-" + "9" * N, True),
    ("underscored-decimal", "1_000_" + "0" * (N - 10), True),
    ("underscored-past", "_".join(["999"] * (N // 3 + 1)), False),
    ("hex-at-bound", "0x" + "f" * 3571, True),  # 16**3571 < 10**4300
    ("hex-value-past", "0x" + "f" * 3572, False),  # 3572 digits but over 4300 decimal ones
    ("hex-far-past", "0x" + "f" * 200_000, False),
    ("negative-hex-past", "-0x" + "F" * 4000, False),
    ("octal-at-bound", "0" + "7" * (N - 1), True),
    ("octal-past", "0" + "7" * N, False),
    ("binary-at-bound", "0b" + "1" * N, True),
    ("binary-past", "0b" + "1" * (N + 1), False),
    ("binary-far-past", "0b" + "1" * 500_000, False),
    ("sexagesimal-within", "1" + ":59" * 1433, True),
    ("sexagesimal-past", "1" + ":59" * 1434, False),
    ("sexagesimal-far-past", "1" + ":59" * 100_000, False),
]

PLACES = {
    "context-default": "context:\n  n: {{type: integer, default: {lit}}}\n",
    "enum-value": "context:\n  n: {{enum: [{lit}], default: {lit}}}\n",
    "payload-default": "events:\n  E: {{payload: {{n: {{type: integer, default: {lit}}}}}}}\n",
    "description": "description: {lit}\n",
}
TAIL = "initial: a\nstates:\n  a: {}\n"


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "chart.yaml"
    path.write_text(body, encoding="utf-8")
    return path


@pytest.mark.parametrize("place", sorted(PLACES))
@pytest.mark.parametrize(("name", "literal", "accepted"), LITERALS, ids=[c[0] for c in LITERALS])
def test_integer_literals_are_bounded_in_every_notation(
    tmp_path: Path, place: str, name: str, literal: str, accepted: bool
) -> None:
    body = "statechart: x\n" + PLACES[place].format(lit=literal) + TAIL
    path = _write(tmp_path, body)
    try:
        chart = statekit.load(path)
    except CompileError as error:
        diagnostics = error.diagnostics
        digits = [d for d in diagnostics if f"more than {N} digits" in d.message]
        if accepted:
            assert not digits, diagnostics  # refused for another reason (a schema rule)
            json.dumps([d.message for d in diagnostics])
        else:
            assert digits, diagnostics
            line = next(i for i, text in enumerate(body.split("\n"), 1) if literal in text)
            column = body.split("\n")[line - 1].index(literal) + 1
            assert (digits[0].span.line, digits[0].span.column) == (line, column)
            assert len(digits[0].message) < 200
        return
    assert accepted, f"{name} was accepted"
    assert chart.digest
    json.dumps(chart_to_json(chart.ir))


@pytest.mark.parametrize(("name", "literal", "accepted"), LITERALS, ids=[c[0] for c in LITERALS])
def test_a_huge_integer_where_a_name_is_expected_is_a_diagnostic(
    tmp_path: Path, name: str, literal: str, accepted: bool
) -> None:
    path = _write(tmp_path, f"statechart: {literal}\n{TAIL}")
    with pytest.raises(CompileError) as raised:
        statekit.load(path)
    (first, *_) = raised.value.diagnostics
    assert first.span.line == 1
    assert all(len(d.message) < 300 for d in raised.value.diagnostics)


VERSIONS = [
    ("one", "1", None),
    ("int64-max", str(2**63 - 1), None),
    ("int64-max-hex", "0x7fffffffffffffff", None),
    ("zero", "0", "at least 1"),
    ("negative", "-1", "at least 1"),
    ("int64-max-plus-one", str(2**63), f"at most {2**63 - 1}"),
    ("uint64-max", str(2**64 - 1), f"at most {2**63 - 1}"),
    ("hex-past-int64", "0x8000000000000000", f"at most {2**63 - 1}"),
    ("huge", "9" * N, f"at most {2**63 - 1}"),
    ("huge-negative", "-0x" + "f" * 3000, "at least 1"),
]


@pytest.mark.parametrize(("name", "literal", "problem"), VERSIONS, ids=[v[0] for v in VERSIONS])
def test_version_is_a_signed_64_bit_integer_at_least_one(
    tmp_path: Path, name: str, literal: str, problem: str | None
) -> None:
    path = _write(tmp_path, f"statechart: x\nversion: {literal}\n{TAIL}")
    if problem is None:
        assert statekit.load(path).version == int(literal, 0)
        return
    with pytest.raises(CompileError) as raised:
        statekit.load(path)
    (diagnostic,) = raised.value.diagnostics
    assert problem in diagnostic.message
    assert (diagnostic.span.line, diagnostic.span.column) == (2, 10)
    assert len(diagnostic.message) < 200


VALUES = [
    ("int64-min", str(-(2**63)), "integer", None),
    ("int64-max", str(2**63 - 1), "integer", None),
    ("int64-min-minus-one", str(-(2**63) - 1), "integer", "outside the integer range"),
    ("int64-max-plus-one", str(2**63), "integer", "outside the integer range"),
    ("uint64-max-hex", "0xffffffffffffffff", "integer", "outside the integer range"),
    ("huge-as-number", "9" * 30, "number", "outside the integer range"),
    ("largest-float", "1.7976931348623157e+308", "number", None),
    ("float-overflow", "1.0e+400", "number", "not a finite number"),
    ("inf", ".inf", "number", "not a finite number"),
    ("minus-inf", "-.inf", "number", "not a finite number"),
    ("nan", ".nan", "number", "not a finite number"),
]
VALUE_PLACES = {
    "context-default": ("context:\n  n: {{type: {type}, default: {lit}}}\n", 3),
    "payload-default": ("events:\n  E: {{n: {{type: {type}, default: {lit}}}}}\n", 3),
    "enum-value": ("context:\n  n: {{enum: [{lit}, 1], default: 1}}\n", 3),
}


# enum values are strings or integers: the number rows do not apply to them
VALUE_CASES = [
    (place, *value)
    for place in sorted(VALUE_PLACES)
    for value in VALUES
    if place != "enum-value" or value[2] == "integer"
]


@pytest.mark.parametrize(
    ("place", "name", "literal", "kind", "problem"),
    VALUE_CASES,
    ids=[f"{case[0]}-{case[1]}" for case in VALUE_CASES],
)
def test_declared_values_fit_a_64_bit_integer_or_a_finite_number(
    tmp_path: Path, place: str, name: str, literal: str, kind: str, problem: str | None
) -> None:
    template, line = VALUE_PLACES[place]
    path = _write(tmp_path, "statechart: x\n" + template.format(type=kind, lit=literal) + TAIL)
    if problem is None:
        chart = statekit.load(path)
        text = chart.start().to_json()
        assert "NaN" not in text and "Infinity" not in text  # strict JSON
        json.loads(text)
        return
    with pytest.raises(CompileError) as raised:
        statekit.load(path)
    (diagnostic,) = raised.value.diagnostics
    assert problem in diagnostic.message
    assert diagnostic.span.line == line
