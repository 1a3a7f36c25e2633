"""Freezing: the immutable IR, its precomputed engine tables, its JSON form and digest."""

from __future__ import annotations

from dataclasses import FrozenInstanceError

import pytest
from chart_helpers import chart_of
from model_charts import NESTED

from statekit.compiler.serialize import chart_to_json


def test_default_entry_follows_initials_and_enters_every_region() -> None:
    chart = chart_of(NESTED)
    ids = chart.path_index
    assert chart.state("a").default_entry == (ids["a"], ids["a.b"], ids["a.b.c"])
    assert chart.state("p").default_entry == (
        ids["p"],
        ids["p.left"],
        ids["p.left.x"],
        ids["p.right"],
        ids["p.right.x"],
    )
    assert chart.root.default_entry[1:] == (ids["a"], ids["a.b"], ids["a.b.c"])


def test_transition_domain_and_static_entry_set() -> None:
    chart = chart_of(NESTED)
    ids = chart.path_index
    fix = chart.transitions[chart.state("a").transitions[0]]
    assert fix.domain == 0
    assert fix.entry_set == chart.state("p").default_entry
    inner = chart.transitions[chart.state("a.b.c").transitions[0]]
    assert inner.domain == ids["a.b"]
    assert inner.entry_set == (ids["a.b.d"],)
    to_history = chart.transitions[chart.state("p").transitions[0]]
    assert to_history.targets_history
    assert to_history.domain is None and to_history.entry_set is None


def test_candidates_list_own_then_ancestor_transitions_in_order() -> None:
    chart = chart_of(NESTED)
    ids = chart.path_index
    table = chart.candidates[ids["a.b.c"]]
    assert [chart.transitions[t].source for t in table["GO"]] == [ids["a.b.c"]]
    assert [chart.transitions[t].source for t in table["FIX"]] == [ids["a"]]
    x = chart.candidates[ids["p.left.x"]]
    assert [chart.transitions[t].source for t in x["BACK"]] == [ids["p"]]
    assert "GO" not in chart.candidates[ids["p.right.x"]]


def test_ir_is_frozen() -> None:
    chart = chart_of(NESTED)
    with pytest.raises(FrozenInstanceError):
        chart.name = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        chart.candidates[1]["NEW"] = ()  # type: ignore[index]


def test_digest_ignores_layout_comments_and_descriptions_but_not_behaviour() -> None:
    base = chart_of(NESTED)
    relaid = chart_of(
        "# a comment\n"
        + NESTED.replace(
            "  out: {final: true}", "  out:\n    final: true\n    description: the end"
        )
    )
    assert relaid.digest == base.digest
    changed = chart_of(NESTED.replace("done: out", "done: a"))
    assert changed.digest != base.digest
    assert base.digest.startswith("sha256:") and len(base.digest) == 71


def test_ir_json_is_stable_and_complete() -> None:
    chart = chart_of(NESTED)
    data = chart_to_json(chart)
    assert data["statechart"] == "nested"
    assert len(data["states"]) == len(chart.states)
    assert data["states"][1]["span"][:2] == [8, 3]
    assert chart_to_json(chart_of(NESTED)) == data
