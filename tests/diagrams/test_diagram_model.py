"""The diagram model extracted from the IR: tree, kinds, references, text of guards and effects."""

from __future__ import annotations

from diagram_charts import sink

from statekit.compiler.ir import StateKind, TransitionKind


def test_states_and_tree() -> None:
    d = sink()
    paths = [s.path for s in d.states]
    assert paths[:3] == ["", "idle", "work"]
    work = d.states[paths.index("work")]
    assert [d.states[c].name for c in work.children] == ["again", "step", "par", "end"]
    par = d.states[paths.index("work.par")]
    assert par.kind is StateKind.PARALLEL and not par.region
    assert all(d.states[c].region for c in par.children)
    assert d.states[paths.index("work.par.left.a")].ref == "a"
    again = d.states[paths.index("work.again")]
    assert again.initial == (paths.index("work.step"),)  # history default: the parent's initial
    assert d.ancestry(paths.index("work.par.left.a"))[-1] == 0
    left, right = paths.index("work.par.left.a"), paths.index("work.par.right.c")
    assert d.common_ancestor(left, right) == paths.index("work.par")
    assert d.crosses_regions(left, right)
    assert not d.crosses_regions(left, paths.index("work.par.left.b"))


def test_transition_text() -> None:
    d = sink()
    long = next(t for t in d.transitions if t.trigger == "LONG")
    assert long.guard_text() == "small and a_rather_long_guard_name_that_goes_on"
    assert long.effects_text() == (
        "assign n; emit SomethingRatherLongHappenedToTheCounterAndEveryoneShouldKnowIt"
    )
    assert long.effects_text(full=True).startswith("n := ctx.n + 1; emit ")
    always = next(t for t in d.transitions if t.kind is TransitionKind.ALWAYS)
    assert always.trigger == "always" and always.guards[0].inline
    assert always.guard_text() == "ctx.n > 5" and always.guards[0].reason == "GUARD_FAILED"
    done = next(t for t in d.transitions if t.kind is TransitionKind.DONE)
    assert done.trigger == "done"


def test_declarations_and_invariants() -> None:
    d = sink()
    assert [f.name for f in d.context] == ["n"] and d.context[0].default == "0"
    assert [e.name for e in d.events][:2] == ["GO", "BACK"]
    assert {g.name: g.reason for g in d.guards}["small"] == "TOO_BIG"
    texts = {i.name: (i.static, i.text) for i in d.invariants}
    assert texts["bounded"] == (False, "assert ctx.n <= 100")
    assert texts["par_has_both"] == (True, "when par: require left, right")
