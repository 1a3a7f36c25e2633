"""The fast value checks agree with the compiler's `ValueType.accepts` (plus finiteness)."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

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
    assert value_check(t)(value) == (t.accepts(value) and finite and small)  # type: ignore[arg-type]
