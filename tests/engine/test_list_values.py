"""List fields and `foreach` at run time: payload validation names the first wrong
element; `x[i]`, `len`, `in`, list displays; a `foreach` runs its body per element with
read-only locals, and nothing for an empty list."""

from __future__ import annotations

from typing import Any

import pytest
from chart_helpers import machine
from hypothesis import given, settings
from hypothesis import strategies as st

from statekit.engine.result import EVALUATION_ERROR, INVALID_PAYLOAD, Status

CHART = """
statechart: lines
context:
  lines: {type: list, items: integer, default: [3, 4, 5]}
  grid: {type: list, items: {type: list, items: string}, default: [[a], []]}
  total: {type: integer, default: 0}
  at: {type: integer, default: -1}
  seen: {type: list, items: integer}
  first: {type: string, default: ""}
events:
  SUM: {}
  ADD: {values: {type: list, items: integer}}
  PICK: {i: integer}
guards:
  nonempty: {if: len(event.values) > 0, else: EMPTY}
  no_seven: {if: 7 not in event.values, else: SEVEN}
initial: open
states:
  open:
    on:
      SUM:
        do:
          - foreach:
              array: ctx.lines
              item: line
              index: i
              do:
                - assign: {total: ctx.total + line, at: i}
      ADD:
        guard: [nonempty, no_seven]
        do:
          - foreach:
              array: event.values
              item: v
              do:
                - if: {cond: v > 1, then: [{assign: {seen: "[v, len(ctx.seen)]"}}]}
      PICK:
        do: [{assign: {first: "ctx.grid[event.i][0]", lines: "[ctx.lines[event.i]]"}}]
"""


def _send(event: str, payload: dict[str, Any]) -> Any:
    chart = machine(CHART)
    return chart.send(chart.start(), event, payload)


def test_foreach_runs_its_body_per_element_with_item_and_index() -> None:
    result = _send("SUM", {})
    assert result.status is Status.APPLIED
    assert (result.state.context["total"], result.state.context["at"]) == (12, 2)


def test_an_empty_list_runs_nothing_and_a_list_value_can_be_built() -> None:
    assert _send("ADD", {"values": []}).reason == "EMPTY"
    assert _send("ADD", {"values": [1, 7]}).reason == "SEVEN"
    result = _send("ADD", {"values": [1, 2, 3]})
    assert result.status is Status.APPLIED
    assert result.state.context["seen"] == [3, 2]  # the element, then the length before


def test_an_index_reads_an_element_and_out_of_range_fails_as_arithmetic_does() -> None:
    result = _send("PICK", {"i": 0})
    assert (result.state.context["first"], result.state.context["lines"]) == ("a", [3])
    for index in (2, -1):
        failed = _send("PICK", {"i": index})
        assert (failed.status, failed.reason) == (Status.REJECTED, EVALUATION_ERROR)


@pytest.mark.parametrize(
    ("values", "where"),
    [
        ("x", "field 'values': expected list of integer, got string"),
        ([1, "x"], "field 'values[1]': expected integer, got string"),
        ([1, True], "field 'values[1]': expected integer, got boolean"),
        ([2**70], "field 'values[0]': expected integer, got an integer beyond 64 bits"),
    ],
)
def test_a_payload_with_a_wrong_element_is_refused_naming_its_path(values: Any, where: str) -> None:
    result = _send("ADD", {"values": values})
    assert (result.status, result.reason) == (Status.REJECTED, INVALID_PAYLOAD)
    assert result.message is not None and where in result.message


_ELEMENTS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True),
    st.text(max_size=3),
    st.lists(st.integers(), max_size=2),
)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(_ELEMENTS, max_size=5))
def test_validation_accepts_exactly_the_lists_the_spec_admits(values: list[Any]) -> None:
    well_typed = all(type(v) is int and -(2**63) <= v < 2**63 for v in values)
    result = _send("ADD", {"values": values})
    assert (result.reason != INVALID_PAYLOAD) == well_typed
    if well_typed:
        admitted = bool(values) and 7 not in values
        assert (result.status is Status.APPLIED) == admitted
