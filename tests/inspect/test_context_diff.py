"""The context diff the instance page shows: one line per leaf that differs, by key path."""

from __future__ import annotations

from typing import Any

import pytest

from statekit.inspect.context_diff import ContextChange, context_diff

CASES: list[tuple[dict[str, Any], dict[str, Any], list[tuple[str, str, Any, Any]]]] = [
    ({"a": 1}, {"a": 1}, []),
    ({"a": 1}, {"a": 1.0}, []),  # the same JSON number
    ({"a": True}, {"a": 1}, [("a", "changed", True, 1)]),  # true is not 1
    ({"a": {"b": True}}, {"a": {"b": 1}}, [("a.b", "changed", True, 1)]),
    ({}, {"n": None}, [("n", "added", None, None)]),
    ({"n": None}, {}, [("n", "removed", None, None)]),
    (
        {"refund": {"amount": 1, "by": "user"}},
        {"refund": {"amount": 2, "by": "user"}},
        [("refund.amount", "changed", 1, 2)],
    ),
    (
        {"items": [1, 2, 3]},
        {"items": [1, 5]},
        [
            ("items[1]", "changed", 2, 5),
            ("items[2]", "removed", 3, None),
        ],
    ),
    ({"labels": {"a b": 1}}, {"labels": {"a b": 2}}, [('labels["a b"]', "changed", 1, 2)]),
    ({"x": [1]}, {"x": {"0": 1}}, [("x", "changed", [1], {"0": 1})]),
    ({"z": 1, "a": 1}, {"z": 2, "a": 2}, [("a", "changed", 1, 2), ("z", "changed", 1, 2)]),
]


@pytest.mark.parametrize(("before", "after", "expected"), CASES)
def test_the_diff_lists_each_differing_leaf_by_path(
    before: dict[str, Any], after: dict[str, Any], expected: list[tuple[str, str, Any, Any]]
) -> None:
    assert context_diff(before, after) == tuple(ContextChange(*e) for e in expected)
