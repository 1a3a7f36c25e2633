"""`canonical_json` is `json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)`
for every value, whichever encoder it takes (it reuses one C encoder for speed)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from statekit.compiler.serialize import canonical_json

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**80), 2**80)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(st.characters(codec="utf-8"))
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=5), inner, max_size=5)
    ),
    max_leaves=30,
)


def _reference(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@settings(max_examples=300, deadline=None)
@given(value=values)
def test_canonical_json_is_the_sorted_compact_dump(value: Any) -> None:
    assert canonical_json(value) == _reference(value)


def _circular() -> list[Any]:
    loop: list[Any] = []
    loop.append({"again": loop})
    return loop


REFUSED = [
    (_circular, ValueError),
    (lambda: {"x": object()}, TypeError),
    (lambda: {1: 0, "a": 1}, TypeError),
]


@pytest.mark.parametrize(("make", "error"), REFUSED)
def test_a_value_json_cannot_hold_is_refused_as_json_dumps_refuses_it(
    make: Any, error: type[Exception]
) -> None:
    value = make()
    with pytest.raises(error) as expected:
        _reference(value)
    with pytest.raises(error) as got:
        canonical_json(value)
    assert str(got.value) == str(expected.value)
    assert canonical_json(["after", "a refusal"]) == '["after","a refusal"]'  # nothing left behind
