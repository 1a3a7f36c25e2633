"""The fast value checks agree with the compiler's `ValueType.accepts` (plus finiteness);
payloads are checked alike whatever mapping holds them."""

from __future__ import annotations

import functools
import math
from types import MappingProxyType

from hypothesis import given, settings
from hypothesis import strategies as st

import statekit
from statekit.compiler.pipeline import compile_source
from statekit.compiler.value_types import BaseType, ValueType
from statekit.engine.validation import value_check

TYPES = [
    ValueType(base, nullable, enum)
    for base in (BaseType.INTEGER, BaseType.NUMBER, BaseType.STRING, BaseType.BOOLEAN)
    for nullable in (False, True)
    for enum in (None,)
] + [
    ValueType(BaseType.STRING, False, ("a", "b")),
    ValueType(BaseType.INTEGER, True, (1, 2)),
]

VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=3),
    st.sampled_from([2**63 - 1, 2**63, -(2**63), -(2**63) - 1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["a", "b", "c", ""]),
    st.just([1]),
)


@given(st.sampled_from(TYPES), VALUES)
def test_value_check_is_accepts_plus_finite_numbers_and_64_bit_integers(
    t: ValueType, value: object
) -> None:
    finite = not (isinstance(value, float) and not math.isfinite(value))
    small = not (type(value) is int and not -(2**63) <= value < 2**63)
    assert value_check(t)(value) == (t.accepts(value) and finite and small)


CHECKED = """
statechart: checked
context:
  n: {type: integer, default: 0}
events:
  ALL: {a: integer, b: string, c: number, d: {type: string, nullable: true}, e: {enum: [x, y]}}
  SOME: {a: integer, b: {type: string, default: none}}
  ONE: {a: boolean}
initial: s
states:
  s:
    on:
      ALL: {to: t, do: [{assign: {n: event.a}}]}
      SOME: {to: t, do: [{assign: {n: event.a}}]}
      ONE: t
  t: {on: {ALL: s, SOME: s, ONE: s}}
"""
FIELDS = ("a", "b", "c", "d", "e", "f")
VALID: dict[str, dict[str, object]] = {
    "ALL": {"a": 1, "b": "s", "c": 1.5, "d": None, "e": "x"},
    "SOME": {"a": 2},
    "ONE": {"a": True},
}


@settings(max_examples=300, deadline=None)
@given(
    event=st.sampled_from(sorted(VALID)),
    dropped=st.sets(st.sampled_from(FIELDS), max_size=2),
    put=st.dictionaries(st.sampled_from(FIELDS), VALUES | st.sampled_from(["x", "y"]), max_size=2),
)
def test_a_dict_payload_is_classified_as_the_same_payload_in_any_mapping(
    event: str, dropped: set[str], put: dict[str, object]
) -> None:
    """Payloads that are dicts with as many keys as declared fields take a shorter check; valid
    payloads with fields drawn to be dropped, added (unknown ones too) or replaced by
    values of every type (out of range, non-finite, null) give the same result as the
    same fields in a read-only mapping, which takes the general check."""
    payload = {k: v for k, v in VALID[event].items() if k not in dropped} | put
    chart = _checked()
    s0 = chart.start()
    as_dict = chart.send(s0, event, payload, event_id="e")
    general = chart.send(s0, event, MappingProxyType(dict(payload)), event_id="e")
    assert as_dict == general
    assert (as_dict.status, as_dict.reason, as_dict.message) == (
        general.status,
        general.reason,
        general.message,
    )
    if as_dict.applied:
        assert dict(as_dict.evidence[0].payload) == dict(general.evidence[0].payload)
        assert list(as_dict.evidence[0].payload) == list(general.evidence[0].payload)


@functools.cache
def _checked() -> statekit.Chart:
    ir = compile_source(CHECKED, "checked.yaml").chart
    assert ir is not None
    return statekit.Chart(ir)
