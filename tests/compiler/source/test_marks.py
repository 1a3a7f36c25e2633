"""The loader's fast span constructor makes the same frozen `SourceSpan` as the class."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from statekit.compiler.diagnostics import SourceSpan
from statekit.compiler.source.marks import new_span

positions = st.integers(min_value=1, max_value=10**6)


@given(st.text(max_size=20), positions, positions, positions, positions)
def test_new_span_is_the_dataclass_value(
    file: str, line: int, column: int, end_line: int, end_column: int
) -> None:
    made = new_span(file, line, column, end_line, end_column)
    expected = SourceSpan(file, line, column, end_line, end_column)
    assert type(made) is SourceSpan
    assert made == expected
    assert hash(made) == hash(expected)
    assert repr(made) == repr(expected)
    assert dataclasses.astuple(made) == (file, line, column, end_line, end_column)


def test_new_span_stays_frozen() -> None:
    made = new_span("chart.yaml", 1, 2, 3, 4)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.line = 9  # type: ignore[misc]
