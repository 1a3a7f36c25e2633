"""The language server's navigation, through `statekit.lsp.navigation` on the reference
machines and on broken variants: exact completion items, hovers, locations and edits."""

from __future__ import annotations

import string
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from statekit.compiler.diagnostics import Diagnostic
from statekit.compiler.ir import CompiledChart
from statekit.compiler.pipeline import compile_source
from statekit.lint.config import LintConfig
from statekit.lint.lint_files import lint_file
from statekit.lsp.navigation import (
    ChartDocument,
    chart_document,
    code_actions,
    completions,
    definition,
    document_symbols,
    hover,
    prepare_rename,
    references,
    rename,
)
from statekit.lsp.records import Position, Range, TextEdit

ROOT = Path(__file__).resolve().parents[2]
MACHINES = [*sorted((ROOT / "machines").glob("*.yaml")), ROOT / "tests" / "charts" / "order.yaml"]
TASK = (ROOT / "tests" / "charts" / "task_v1.yaml").read_text(encoding="utf-8")
"""The task chart as it was before its lease timer (the navigation tests pin its text)."""
EVERYWHERE = Range(Position(0, 0), Position(10**6, 0))


def at(text: str, marker: str, nth: int = 0, offset: int | None = None) -> Position:
    """The position just after the `nth` occurrence of `marker` (or `offset` into it)."""
    index = -1
    for _ in range(nth + 1):
        index = text.index(marker, index + 1)
        assert index >= 0, marker
    index += len(marker) if offset is None else offset
    line = text.count("\n", 0, index)
    return Position(line, index - (text.rfind("\n", 0, index) + 1))


def apply(text: str, edits: Sequence[TextEdit]) -> str:
    """The text with non-overlapping edits applied."""
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)

    def offset(p: Position) -> int:
        return starts[p.line] + p.character

    out = text
    for edit in sorted(edits, key=lambda e: e.range.start, reverse=True):
        out = out[: offset(edit.range.start)] + edit.new_text + out[offset(edit.range.end) :]
    return out


def text_of(text: str, rng: Range) -> str:
    return apply(
        text,
        [
            TextEdit(Range(Position(0, 0), rng.start), ""),
            TextEdit(
                Range(rng.end, Position(len(text.split("\n")) - 1, len(text.split("\n")[-1]))), ""
            ),
        ],
    )


def labels(doc: ChartDocument, position: Position) -> list[str]:
    return [item.label for item in completions(doc, position)]


@pytest.fixture(scope="module")
def task() -> ChartDocument:
    return chart_document(TASK, compile_source(TASK, "task.yaml"))


TASK_STATES_SHORT = [
    "lifecycle",
    "queued",
    "running",
    "cancelling",
    "completed",
    "failed",
    "cancelled",
    "cancellation",
    "none",
    "requested",
    "reconciled",
    "not_needed",
    "artifact",
    "absent",
    "uploaded",
    "verified",
    "discarded",
]
TASK_EVENTS = [
    "TaskStarted",
    "TaskCompleted",
    "TaskFailed",
    "TaskCancelled",
    "EffectsReconciled",
    "ArtifactUploaded",
    "ArtifactVerified",
    "LeaseExpired",
]


# ---- completion ---------------------------------------------------------------------------
def test_completion_of_targets_offers_the_shortest_unique_reference(task: ChartDocument) -> None:
    items = completions(task, at(TASK, "to: lifecycle.cancelling", offset=4))
    assert [i.label for i in items] == TASK_STATES_SHORT
    first = items[1]
    assert first.detail == "lifecycle.queued"
    assert first.documentation is not None and "Waiting for a worker" in first.documentation
    # the edit replaces the whole reference under the cursor
    assert first.edit.range == Range(
        at(TASK, "to: lifecycle.cancelling", offset=4), at(TASK, "to: lifecycle.cancelling")
    )


def test_completion_of_a_dotted_prefix_keeps_the_prefix(task: ChartDocument) -> None:
    got = labels(task, at(TASK, "to: lifecycle.run"))
    assert "lifecycle.running" in got and "running" not in got
    got = labels(task, at(TASK, "if: active('artifact."))
    assert [g for g in got if g.startswith("artifact.")] == [
        "artifact.absent",
        "artifact.uploaded",
        "artifact.verified",
        "artifact.discarded",
    ]


def test_completion_in_each_kind_of_place(task: ChartDocument) -> None:
    assert labels(task, at(TASK, "initial: q")) == [
        "queued",
        "running",
        "cancelling",
        "completed",
        "failed",
        "cancelled",
    ]
    assert labels(task, at(TASK, "guard: [retry_budget_left, next_")) == [
        "next_attempt",
        "current_attempt",
        "artifact_verified_same_attempt",
        "retry_budget_left",
        "effects_reconciled",
        "task_running",
        "checksum_matches",
    ]
    assert labels(task, at(TASK, "already: [TaskCan")) == TASK_EVENTS
    # the first reject map (queued's) has TaskCompleted, TaskFailed, LeaseExpired and
    # ArtifactUploaded; the one being typed (TaskCompleted) stays offered
    assert labels(task, at(TASK, "        reject:\n          Task")) == [
        "TaskStarted",
        "TaskCompleted",
        "TaskCancelled",
        "EffectsReconciled",
        "ArtifactVerified",
        "*",
    ]
    assert labels(task, at(TASK, "    when: lifecycle.comp")) == [
        "lifecycle.completed" if s == "completed" else s for s in TASK_STATES_SHORT
    ]
    assert labels(task, at(TASK, "require: artifact.")) == [
        "lifecycle",
        "queued",
        "running",
        "cancelling",
        "completed",
        "failed",
        "cancelled",
        "cancellation",
        "none",
        "requested",
        "reconciled",
        "not_needed",
        "artifact",
        "artifact.absent",
        "artifact.uploaded",
        "artifact.verified",
        "artifact.discarded",
    ]
    reasons = labels(task, at(TASK, "TaskCompleted: TASK_NOT_"))
    assert reasons[:3] == ["TASK_NOT_RUNNING", "NOT_RETRYABLE", "TASK_ALREADY_RUNNING"]
    assert "CHECKSUM_MISMATCH" in reasons and len(reasons) == len(set(reasons)) == 17


def test_completion_of_fields_inside_expressions(task: ChartDocument) -> None:
    ctx = completions(task, at(TASK, "if: event.attempt == ctx."))
    assert [(i.label, i.detail) for i in ctx] == [
        ("attempt", "integer"),
        ("max_attempts", "integer"),
        ("worker_id", "string or null"),
        ("lease_until_ms", "integer"),
        ("artifact_attempt", "integer"),
        ("artifact_sha256", "string or null"),
        ("last_error", "string or null"),
        ("cancelled_by", "string or null"),
    ]
    # a guard sees the payload of every event whose transitions use it
    event = completions(task, at(TASK, "if: event.sha256"[:10]))
    assert [(i.label, i.detail) for i in event] == [
        ("attempt", "integer (payload of TaskStarted)"),
        ("worker_id", "string (payload of TaskStarted)"),
        ("lease_until_ms", "integer (payload of TaskStarted)"),
    ]
    inline = completions(task, at(TASK, "if: event.retry"))
    assert [i.label for i in inline] == ["attempt", "error", "retryable"]
    # the edit replaces the field name only, after the dot
    assert inline[2].edit == TextEdit(
        Range(at(TASK, "if: event.retry", offset=10), at(TASK, "if: event.retryable")), "retryable"
    )
    assert ctx[0].edit.range.start == at(TASK, "if: event.attempt == ctx.")
    # a bare word in an expression: every field with its prefix
    bare = TASK.replace("if: event.retryable", "if: re", 1)
    got = completions(chart_document(bare), at(bare, "if: re"))
    assert [i.label for i in got][-3:] == ["event.attempt", "event.error", "event.retryable"]
    assert [i.label for i in got][:2] == ["ctx.attempt", "ctx.max_attempts"]
    assert got[-1].edit == TextEdit(
        Range(at(bare, "if: re", offset=4), at(bare, "if: re")), "event.retryable"
    )
    assign = completions(task, at(TASK, "worker_id: event.w"))
    assert [i.label for i in assign] == ["attempt", "worker_id", "lease_until_ms"]


def test_completion_while_the_line_being_typed_breaks_the_yaml() -> None:
    broken = TASK.replace("to: lifecycle.cancelling", "to: [lifecycle.cancelli", 1)
    doc = chart_document(broken)
    assert doc.result.chart is None and doc.blanked  # the index leaves the line out
    assert labels(doc, at(broken, "to: [lifecycle.cancelli")) == [
        s if s != "cancelling" else "lifecycle.cancelling" for s in TASK_STATES_SHORT
    ]
    # under `on:` in key position: the declared events
    typing = TASK.replace(
        "        on:\n          TaskStarted:",
        "        on:\n          Ta\n          TaskStarted:",
        1,
    )
    assert labels(chart_document(typing), at(typing, "        on:\n          Ta")) == [
        e
        for e in TASK_EVENTS
        if e not in ("TaskStarted", "TaskCancelled")  # queued has them
    ]


RAISING = """\
statechart: raising
events: {GO: {}, STOP: {}}
initial: a
states:
  a:
    on:
      GO:
        to: b
        do:
          - raise: S
          - raise: {event: S}
    already:
      - G
  b:
    states:
      x: {}
      h: {history: deep, default: x}
    initial: x
"""


@pytest.mark.parametrize(
    ("marker", "expected"),
    [
        ("- raise: S", ["GO", "STOP"]),
        ("- raise: {event: S", ["GO", "STOP"]),
        ("      - G", ["GO", "STOP"]),
        ("default: x", ["a", "b", "x"]),
        ("        to: b", ["a", "b", "b.x", "b.h"]),  # the typed prefix kept
        ("    initial: x", ["x"]),
    ],
)
def test_completion_in_block_items_raise_and_history_defaults(
    marker: str, expected: list[str]
) -> None:
    doc = chart_document(RAISING)  # names half typed: it does not compile, and completes
    assert doc.result.chart is None and doc.index.root is not None
    assert labels(doc, at(RAISING, marker)) == expected


def test_no_completion_in_text_or_comments(task: ChartDocument) -> None:
    assert completions(task, at(TASK, "# How this chart")) == ()
    assert completions(task, at(TASK, "description: A worker claims")) == ()
    assert completions(chart_document("statechart: [unclosed\n"), Position(0, 15)) == ()


# ---- hover ---------------------------------------------------------------------------------
def test_hover_on_a_state_reference(task: ChartDocument) -> None:
    shown = hover(task, at(TASK, "to: lifecycle.running", offset=8))
    assert shown is not None
    assert shown.markdown == (
        "**state** `lifecycle.running` (atomic)\n"
        "reference: `running`\n\n"
        "An attempt is executing on the worker in `worker_id` under a lease. Its reports "
        "(artifact, completion, failure) must quote the current attempt number.\n"
        "transitions on: TaskCompleted, TaskFailed, LeaseExpired, TaskCancelled\n"
        "reject: TaskStarted → TASK_ALREADY_RUNNING, ArtifactUploaded → ARTIFACT_ALREADY_UPLOADED"
    )
    assert shown.range == Range(
        at(TASK, "to: lifecycle.running", offset=4), at(TASK, "to: lifecycle.running")
    )


def test_hover_on_a_guard_an_event_and_fields(task: ChartDocument) -> None:
    guard = hover(task, at(TASK, "guard: [retry_budget_left", offset=9))
    assert guard is not None and guard.markdown == (
        "**guard** `retry_budget_left`\nif: `ctx.attempt < ctx.max_attempts`\n"
        "else: `RETRY_BUDGET_EXHAUSTED`\n\n"
        "Another attempt is still allowed (the latest attempt number is below max_attempts)."
    )
    event = hover(task, at(TASK, "          TaskStarted:", offset=12))
    assert event is not None and event.markdown == (
        "**event** `TaskStarted`\n"
        "- `attempt` (integer): The attempt being started; must be the next one.\n"
        "- `worker_id` (string): The worker that claimed the task.\n"
        "- `lease_until_ms` (integer): End of the lease granted to that worker (epoch ms)."
    )
    ctx = hover(task, at(TASK, "ctx.attempt + 1", offset=5))
    assert ctx is not None and ctx.markdown == (
        "**context field** `ctx.attempt`: integer\ndefault: `0`\n\n"
        "The number of the latest attempt (0 before the first start); the fencing token "
        "workers must quote."
    )
    nullable = hover(task, at(TASK, "ctx.worker_id is not None", offset=5))
    assert nullable is not None and nullable.markdown.startswith(
        "**context field** `ctx.worker_id`: string or null\ndefault: `null`"
    )
    payload = hover(task, at(TASK, "if: event.retryable", offset=11))
    assert payload is not None and payload.markdown == (
        "**payload field** `TaskFailed.retryable`: boolean\n\nWhether another attempt may succeed."
    )
    assert hover(task, at(TASK, "statechart: task", offset=2)) is None


def test_hover_degrades_on_a_chart_that_does_not_compile() -> None:
    broken = TASK.replace("to: lifecycle.cancelling", "to: lifecycle.nowhere", 1)
    doc = chart_document(broken)
    assert doc.result.chart is None
    shown = hover(doc, at(broken, "      running:", offset=8))
    assert (
        shown is not None
        and "transitions on: TaskCompleted, TaskFailed, LeaseExpired, TaskCancelled"
        in shown.markdown
    )
    assert hover(doc, at(broken, "to: lifecycle.nowhere", offset=8)) is None


# ---- definition, references, symbols --------------------------------------------------------
def test_definition_and_references_of_each_kind(task: ChartDocument) -> None:
    state_key = Range(at(TASK, "      running:", offset=6), at(TASK, "      running:", offset=13))
    assert definition(task, at(TASK, "active('lifecycle.running", offset=20)) == (state_key,)
    used = references(task, at(TASK, "      running:", offset=8))
    assert [text_of(TASK, r) for r in used] == [
        "lifecycle.running",  # task_running's active()
        "lifecycle.running",  # TaskStarted's target
        "running",  # the declaration
        "lifecycle.running",  # running_holds_lease's active()
    ]
    assert state_key in used
    guard = references(task, at(TASK, "  current_attempt:", offset=4), include_declaration=False)
    assert len(guard) == 9 and all(text_of(TASK, r) == "current_attempt" for r in guard)
    event = references(task, at(TASK, "  EffectsReconciled:", offset=4))
    assert [r.start.line for r in event] == sorted(r.start.line for r in event)
    # its declaration, three uses in the states, its producer and seven races: entries
    assert len(event) == 12
    field = references(task, at(TASK, "  artifact_sha256:", offset=4))
    assert [text_of(TASK, r) for r in field] == ["artifact_sha256"] * 6
    # a payload field read in a guard is defined by each event whose transitions use the guard
    defs = definition(task, at(TASK, "if: event.attempt == ctx.attempt\n", offset=11))
    assert len(defs) == 6 and all(text_of(TASK, r) == "attempt" for r in defs)


def test_document_symbols_are_the_state_tree_then_declarations(task: ChartDocument) -> None:
    symbols = document_symbols(task)
    names = [s.name for s in symbols]
    assert names[:3] == ["lifecycle", "cancellation", "artifact"]
    assert names[3:11] == TASK_EVENTS
    assert [c.name for c in symbols[0].children] == [
        "queued",
        "running",
        "cancelling",
        "completed",
        "failed",
        "cancelled",
    ]
    assert [c.name for c in symbols[3].children] == ["attempt", "worker_id", "lease_until_ms"]
    running = symbols[0].children[1]
    assert running.detail == "lifecycle.running"
    assert text_of(TASK, running.selection_range) == "running"
    assert running.range.start == running.selection_range.start


@pytest.mark.parametrize("path", MACHINES, ids=lambda p: p.name)
def test_every_reference_of_a_machine_resolves_and_navigates(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    doc = chart_document(text)
    assert doc.result.chart is not None
    for ref in doc.index.references:
        assert ref.key is not None, ref
        assert ref.precise, ref
        assert text_of(text, ref.range) == ref.text
        middle = Position(ref.range.start.line, ref.range.start.character + 1)
        assert definition(doc, middle), ref
        assert ref.range in references(doc, middle)
        assert hover(doc, middle) is not None


def test_a_document_that_is_not_yaml_answers_nothing() -> None:
    doc = chart_document("states: {a: [\n")
    p = Position(0, 10)
    assert (hover(doc, p), definition(doc, p), references(doc, p), document_symbols(doc)) == (
        None,
        (),
        (),
        (),
    )
    assert rename(doc, p, "b").refusal is not None
    assert code_actions(doc, EVERYWHERE, doc.result.diagnostics) == ()


# ---- rename ---------------------------------------------------------------------------------
# Every kind of reference, once per placeholder: `${s_b}` is state b, `${e_GO}` event GO,
# `${g_ok}` guard ok. Renaming one name must rewrite exactly its placeholders.
RENAME_CHART = string.Template(
    """\
statechart: rename
context:
  n: {type: integer, default: 0}
events:
  ${e_GO}: {x: integer}
  ${e_STOP}: {}
  ${e_PING}: {}
guards:
  ${g_ok}:
    if: event.x > 0 and active('${s_a}.${s_b}')
    else: NOT_OK
  ${g_yes}: "ctx.n >= 0"
initial: ${s_a}.${s_b}
states:
  ${s_a}:
    initial: ${s_b}
    on:
      ${e_PING}:
        to: "${s_a}.${s_c}"
    states:
      ${s_b}:
        on:
          ${e_GO}:
            {to: ${s_a}.${s_c}, guard: ${g_ok}, do: [{raise: ${e_PING}}, {assign: {n: event.x}}]}
          ${e_STOP}: ${s_c}
        already: [${e_STOP}]
      ${s_c}:
        on:
          ${e_GO}: {to: [${s_b}], guard: [${g_yes}, ${g_ok}], if: "not active('${s_c}')"}
          ${e_STOP}: ${s_z}
        reject:
          ${e_PING}: 'NO'
      ${s_h}: {history: shallow, default: ${s_b}}
  ${s_y}:
    initial: ${s_w}
    done: ${s_z}
    always: {to: "${s_z}", if: "active('${s_y}.${s_w}') and ctx.n > 9"}
    states:
      ${s_w}:
        on: {${e_GO}: ${s_w}}
  ${s_z}:
    final: true
    entry:
      - raise: {event: ${e_STOP}}
    reject: {"*": DONE, ${e_GO}: OVER}
invariants:
  i1: {when: ${s_a}.${s_c}, require: [${s_a}], forbid: ${s_z}}
  i2: {assert: "not active('${s_b}') or ctx.n >= 0"}
producers:
  p1: [${e_GO}]
  p2: [${e_STOP}]
races:
  r1: {events: [${e_GO}, ${e_STOP}], in: ${s_a}.${s_c}, decision: who wins}
"""
)
NAMES = {
    "s_a": "a",
    "s_b": "b",
    "s_c": "c",
    "s_h": "h",
    "s_z": "z",
    "s_y": "y",
    "s_w": "w",
    "e_GO": "GO",
    "e_STOP": "STOP",
    "e_PING": "PING",
    "g_ok": "ok",
    "g_yes": "yes",
}


def rename_chart(**renamed: str) -> str:
    return RENAME_CHART.substitute({**NAMES, **renamed})


def test_the_rename_chart_compiles_and_every_reference_resolves() -> None:
    text = rename_chart()
    result = compile_source(text, "rename.yaml")
    assert result.chart is not None, result.diagnostics
    assert all(r.key is not None and r.precise for r in chart_document(text).index.references)


@pytest.mark.parametrize("placeholder", sorted(NAMES), ids=str)
def test_rename_rewrites_every_reference_of_its_kind(placeholder: str) -> None:
    text = rename_chart()
    doc = chart_document(text)
    old = NAMES[placeholder]
    # rename from the declaration and from a reference: the same edits
    declaration = next(
        d
        for d in doc.index.declarations
        if d.name == old and d.kind.name[0].lower() == placeholder[0]
    )
    from_declaration = rename(doc, declaration.range.start, f"{old}_renamed")
    assert from_declaration.refusal is None
    assert apply(text, from_declaration.edits) == rename_chart(**{placeholder: f"{old}_renamed"})
    assert prepare_rename(doc, declaration.range.start) == declaration.range
    for ref in doc.index.references:
        if ref.key == declaration.key and ref.kind is declaration.kind:
            assert rename(doc, ref.range.end, f"{old}_renamed") == from_declaration


@pytest.mark.parametrize(
    ("position_of", "new_name", "refusal"),
    [
        ("  ${s_b}:", "c", "'a' already has a state named 'c'"),
        ("  ${s_z}:", "a", "the root already has a state named 'a'"),
        ("  ${e_GO}:", "STOP", "event 'STOP' already exists"),
        ("  ${g_ok}:", "yes", "guard 'yes' already exists"),
        ("  ${s_b}:", "b.c", "not a name a rename writes"),
        ("  ${s_b}:", "two words", "not a name a rename writes"),
        ("  ${s_b}:", "*", "not a name a rename writes"),
        ("  ${s_b}:", "", "not a name a rename writes"),
        ("  ${e_GO}:", "null", "reads as a YAML value other than the name itself"),
        ("  ${e_GO}:", "true", "reads as a YAML value other than the name itself"),
        ("  ${e_GO}:", "1e3", "not a name a rename writes"),
        ("statechart: ", "other", "no state, event, guard, timer, definition or table here"),
        ("  n: ", "m", "no state, event, guard, timer, definition or table here"),
    ],
)
def test_rename_refuses_colliding_and_invalid_names(
    position_of: str, new_name: str, refusal: str
) -> None:
    text = rename_chart()
    marker = string.Template(position_of).substitute(NAMES)
    outcome = rename(chart_document(text), at(text, marker, offset=len(marker) - 2), new_name)
    assert outcome.edits == ()
    assert outcome.refusal is not None and refusal in outcome.refusal


def test_rename_lengthens_references_the_new_name_makes_ambiguous() -> None:
    text = rename_chart()
    doc = chart_document(text)
    # renaming y.w to b: `b` alone would now name two states, a.b and y.b; a global
    # reference is lengthened, a target keeps naming its sibling by the bare name
    outcome = rename(doc, at(text, "      w:", offset=6), "b")
    assert outcome.refusal is None
    renamed = apply(text, outcome.edits)
    assert renamed == (
        text.replace("active('b') or", "active('a.b') or")
        .replace("initial: w", "initial: b")
        .replace("active('y.w')", "active('y.b')")
        .replace("      w:\n        on: {GO: w}", "      b:\n        on: {GO: b}")
    )
    result = compile_source(renamed, "renamed.yaml")
    assert result.chart is not None, result.diagnostics


def test_rename_refuses_a_name_that_leaves_a_state_without_a_reference() -> None:
    text = rename_chart()
    # a root state named b could never be named: `b` is also the suffix of a.b
    outcome = rename(chart_document(text), at(text, "  z:", offset=2), "b")
    assert outcome.edits == ()
    assert (
        outcome.refusal
        == "after renaming, no reference could name 'b' unambiguously (it is also the end of 'a.b')"
    )


def test_rename_refuses_a_reference_it_cannot_locate() -> None:
    text = rename_chart().replace(
        "if: event.x > 0 and active('a.b')", "if: >-\n      event.x > 0 and\n      active('a.b')"
    )
    assert compile_source(text, "x.yaml").chart is not None
    doc = chart_document(text)
    # a folded scalar is still located token by token
    assert rename(doc, at(text, "  b:", offset=2), "bee").refusal is None
    escaped = rename_chart().replace('to: "a.c"', 'to: "a.\\x63"')
    outcome = rename(chart_document(escaped), at(escaped, "  c:", offset=2), "cee")
    assert outcome.refusal is not None and "cannot be located" in outcome.refusal


def _tables(chart: CompiledChart, states: dict[str, str], names: dict[str, str]) -> object:
    """The chart's tables with names mapped (paths through `states`, others through `names`)."""

    def path(p: str) -> str:
        return states.get(p, p)

    def name(n: str | None) -> str | None:
        if n is not None and n.startswith("done.state."):
            return "done.state." + path(n[len("done.state.") :])
        if n is not None and chart.timer(n) is not None:  # `after(15m)@<path>`
            spec, _, owner = n.rpartition("@")
            return f"{spec}@{path(owner)}"
        return None if n is None else names.get(n, n)

    return (
        [
            (
                path(s.path),
                s.kind,
                s.parent,
                s.children,
                s.initial,
                s.default_entry,
                s.history_default,
                s.transitions,
                [(name(c.event), c.reason) for c in s.already + s.reject],
            )
            for s in chart.states
        ],
        [
            (
                t.source,
                t.kind,
                name(t.event),
                t.targets,
                [(name(g.name), g.reason) for g in t.guards],
                t.domain,
                t.entry_set,
                len(t.effects),
            )
            for t in chart.transitions
        ],
        sorted(name(e) or "" for e in chart.events),
        sorted((name(g) or "", d.reason) for g, d in chart.guards.items()),
        [sorted((name(e) or "", ids) for e, ids in c.items()) for c in chart.candidates],
        chart.eventless,
    )


def _declarations(path: Path) -> list[tuple[str, int]]:
    doc = chart_document(path.read_text(encoding="utf-8"))
    return [
        (path.name, i)
        for i, d in enumerate(doc.index.declarations)
        if d.kind.name in ("STATE", "EVENT", "GUARD")
    ]


ALL_DECLARATIONS = [pair for path in MACHINES for pair in _declarations(path)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(ALL_DECLARATIONS),
    st.from_regex(r"[a-zA-Z_][a-zA-Z0-9_]{0,7}", fullmatch=True),
)
def test_rename_then_compile_gives_the_same_tables(target: tuple[str, int], new_name: str) -> None:
    file, number = target
    path = next(p for p in MACHINES if p.name == file)
    text = path.read_text(encoding="utf-8")
    doc = chart_document(text)
    before = doc.result.chart
    assert before is not None
    decl = doc.index.declarations[number]
    outcome = rename(doc, decl.range.start, new_name)
    if outcome.refusal is not None:
        # refused only for a collision or a name YAML would read as something else
        if decl.kind.name == "STATE":
            parent = doc.index.states[decl.key].parent or ""
            siblings = {doc.index.states[c].name for c in doc.index.states[parent].children}
            collides = new_name in siblings
        else:
            collides = doc.declaration(decl.kind, new_name) is not None
        unnamable = "no reference could name" in outcome.refusal
        assert collides or unnamable or new_name.lower() in ("null", "true", "false"), (
            outcome.refusal
        )
        return
    after = compile_source(apply(text, outcome.edits), file).chart
    assert after is not None
    states: dict[str, str] = {}
    names: dict[str, str] = {}
    if decl.kind.name == "STATE":
        prefix = decl.key.rsplit(".", 1)[0] + "." + new_name if "." in decl.key else new_name
        for p in doc.index.states:
            if p == decl.key or p.startswith(decl.key + "."):
                states[p] = prefix + p[len(decl.key) :]
    else:
        names[decl.key] = new_name
    assert _tables(before, states, names) == _tables(after, {}, {})


TIMED = """\
statechart: timed
context: {lease_until_ms: {type: integer, default: 0}, budget: {type: integer, default: 3}}
events: {Start: {}, Remind: {n: integer}}
guards: {left: ctx.budget > 0}
initial: waiting
after: {7d: closed}
states:
  waiting:
    entry: [{send: {event: Remind, payload: {n: 1}, delay: 30s, id: nudge}}]
    exit: [{cancel: nudge}]
    on: {Start: running, Remind: waiting}
    after:
      15m: {to: closed, guard: left}
  running:
    on: {Remind: running}
    after:
      - {at: ctx.lease_until_ms, to: waiting, do: [{send: {event: Start, at: ctx.lease_until_ms}}]}
      - {delay: 1h30m, to: closed}
  closed: {final: true}
"""


def test_rename_in_a_chart_with_timers_reaches_every_reference() -> None:
    """Targets, guards and sent events of `after` entries and `send` effects are renamed too,
    and the timers follow their state's new path."""
    doc = chart_document(TIMED)
    before = doc.result.chart
    assert before is not None and before.timers
    targets = [d for d in doc.index.declarations if d.kind.name in ("STATE", "EVENT", "GUARD")]
    assert {d.key for d in targets} >= {"waiting", "running", "closed", "Start", "Remind", "left"}
    for decl in targets:
        outcome = rename(doc, decl.range.start, "renamed")
        assert outcome.refusal is None, (decl.key, outcome.refusal)
        after = compile_source(apply(TIMED, outcome.edits), "timed.yaml").chart
        assert after is not None, decl.key
        states = {decl.key: "renamed"} if decl.kind.name == "STATE" else {}
        names = {} if states else {decl.key: "renamed"}
        assert _tables(before, states, names) == _tables(after, {}, {}), decl.key
        assert [t.name for t in after.timers] == [
            t.name.replace(f"@{decl.key}", "@renamed") if states else t.name for t in before.timers
        ]


def test_completion_in_timers() -> None:
    doc = chart_document(TIMED)
    assert labels(doc, at(TIMED, "15m: {to: clo")) == ["waiting", "running", "closed"]
    assert labels(doc, at(TIMED, "after: {7d: c")) == ["waiting", "running", "closed"]
    fields = completions(doc, at(TIMED, "{at: ctx."))
    assert [item.label for item in fields] == ["lease_until_ms", "budget"]
    sent = completions(doc, at(TIMED, "{send: {event: St"))
    assert [item.label for item in sent] == ["Start", "Remind"]


# ---- code actions ---------------------------------------------------------------------------
UNCLASSIFIED = """\
statechart: shop
events: {PAY: {}, SHIP: {}, CANCEL: {}}
initial: open
states:
  open: {on: {PAY: paid, CANCEL: cancelled}, reject: {SHIP: NOT_PAID}}
  paid:
    on: {SHIP: shipped}
    already: [PAY]
  shipped: {final: true, reject: {"*": SHIPPED}}
  cancelled: {final: true, reject: {"*": CANCELLED}}
"""


def _lint(text: str, tmp_path: Path) -> list[Diagnostic]:
    path = tmp_path / "chart.yaml"
    path.write_text(text, encoding="utf-8")
    return lint_file(path, LintConfig())


@pytest.mark.parametrize(
    ("variant", "fixed"),
    [
        # no reject map yet: one is added under the state
        (
            UNCLASSIFIED,
            UNCLASSIFIED.replace(
                "    already: [PAY]\n",
                "    already: [PAY]\n    reject:\n      CANCEL: NOT_IN_PAID\n",
            ),
        ),
        # a block reject map: the entry joins it
        (
            UNCLASSIFIED.replace(
                "    already: [PAY]\n", "    already: [PAY]\n    reject:\n      PAY: X\n"
            ),
            UNCLASSIFIED.replace(
                "    already: [PAY]\n",
                "    already: [PAY]\n    reject:\n      PAY: X\n      CANCEL: NOT_IN_PAID\n",
            ),
        ),
        # a flow reject map, and a flow state
        (
            UNCLASSIFIED.replace("    already: [PAY]\n", "    reject: {PAY: X}\n"),
            UNCLASSIFIED.replace(
                "    already: [PAY]\n", "    reject: {PAY: X, CANCEL: NOT_IN_PAID}\n"
            ),
        ),
        (
            UNCLASSIFIED.replace(
                "  paid:\n    on: {SHIP: shipped}\n    already: [PAY]\n",
                "  paid: {on: {SHIP: shipped}, already: [PAY]}\n",
            ),
            UNCLASSIFIED.replace(
                "  paid:\n    on: {SHIP: shipped}\n    already: [PAY]\n",
                "  paid: {on: {SHIP: shipped}, already: [PAY], reject: {CANCEL: NOT_IN_PAID}}\n",
            ),
        ),
    ],
    ids=["new-map", "block-map", "flow-map", "flow-state"],
)
def test_code_action_classifies_the_unclassified_event_where_the_finding_says(
    variant: str, fixed: str, tmp_path: Path
) -> None:
    findings = [d for d in _lint(variant, tmp_path) if d.slug == "undefined-pair"]
    assert len(findings) == 1
    actions = code_actions(chart_document(variant), EVERYWHERE, findings)
    assert {a.fixes for a in actions} == {"undefined-pair"}
    assert not any(a.preferred for a in actions)  # several plausible reasons: none is a guess
    chosen = next(a for a in actions if a.title == "Reject CANCEL in 'paid' (NOT_IN_PAID)")
    assert apply(variant, chosen.edits) == fixed
    assert not [d for d in _lint(fixed, tmp_path) if d.slug == "undefined-pair"]
    for action in actions:  # each choice classifies the event
        assert not [
            d for d in _lint(apply(variant, action.edits), tmp_path) if d.slug == "undefined-pair"
        ]


def test_code_action_reuses_the_reason_the_chart_gives_the_event_elsewhere(
    tmp_path: Path,
) -> None:
    variant = UNCLASSIFIED.replace(
        "  shipped: {final: true, ", "  shipped: {final: true, on: {CANCEL: shipped}, "
    ).replace("{SHIP: NOT_PAID}", "{SHIP: NOT_PAID}}\n  held: {reject: {CANCEL: TOO_LATE}")
    findings = [d for d in _lint(variant, tmp_path) if d.slug == "undefined-pair"]
    assert len(findings) == 1
    actions = code_actions(chart_document(variant), EVERYWHERE, findings)
    assert [a.title for a in actions] == [
        "Reject CANCEL in 'paid' (TOO_LATE)",
        "Reject CANCEL in 'paid' (NOT_IN_PAID)",
        "Reject CANCEL in 'paid' (NOT_ALLOWED)",
    ]
    assert "      CANCEL: TOO_LATE\n" in apply(variant, actions[0].edits)


def test_code_action_offers_each_reason_the_chart_uses_not_one_guess(tmp_path: Path) -> None:
    # every other state gives PAY a reason of its own: each is offered, most used first,
    # then the reasons the state itself gives, then the standard ones
    text = """\
statechart: pay
events: {PAY: {}, SHIP: {}, CANCEL: {}}
initial: created
states:
  created:
    on: {SHIP: shipped, CANCEL: done}
    reject: {SHIP: NOT_READY}
  paying: {reject: {PAY: PAYMENT_IN_PROGRESS}, on: {SHIP: shipped, CANCEL: done}}
  shipped: {reject: {PAY: ALREADY_SHIPPED}, on: {SHIP: shipped, CANCEL: done}}
  held: {reject: {PAY: ON_HOLD}, on: {SHIP: shipped, CANCEL: done}}
  stuck: {reject: {PAY: ON_HOLD}, on: {SHIP: shipped, CANCEL: done}}
  done: {final: true, reject: {"*": DONE}}
"""
    findings = [
        d for d in _lint(text, tmp_path) if d.slug == "undefined-pair" and "'created'" in d.message
    ]
    assert len(findings) == 1
    actions = code_actions(chart_document(text), EVERYWHERE, findings)
    assert [a.title for a in actions] == [
        f"Reject PAY in 'created' ({reason})"
        for reason in (
            "ON_HOLD",
            "PAYMENT_IN_PROGRESS",
            "ALREADY_SHIPPED",
            "NOT_READY",
            "NOT_IN_CREATED",
            "NOT_ALLOWED",
        )
    ]


def test_code_action_classifies_in_the_owning_region_of_a_parallel_chart(tmp_path: Path) -> None:
    text = (ROOT / "tests" / "charts" / "order.yaml").read_text(encoding="utf-8")
    # drop one region-level entry: the finding names that region, the fix restores one
    doc0 = chart_document(text)
    region, entry = next(
        (path, r)
        for path, info in doc0.index.states.items()
        if path and info.parent == ""
        for r in doc0.index.references
        if r.role.value == "reject"
        and info.node.get("reject") is not None
        and doc0.lines.range_of(info.node.get("reject").span).contains(r.range.start)  # type: ignore[union-attr]
    )
    line = text.split("\n")[entry.range.start.line]
    broken = text.replace(line + "\n", "", 1)
    findings = [d for d in _lint(broken, tmp_path) if d.slug == "undefined-pair"]
    assert findings, "dropping a region-level reject entry leaves the event unclassified"
    doc = chart_document(broken)
    actions = [code_actions(doc, EVERYWHERE, [finding])[0] for finding in findings]
    fixed = broken
    for action in actions:
        fixed = apply(fixed, action.edits)
    assert not [d for d in _lint(fixed, tmp_path) if d.slug == "undefined-pair"]
    assert compile_source(fixed, "order.yaml").chart is not None
    assert region in actions[0].title or any(region in a.title for a in actions)


MISSPELT = [
    # (the misspelling, where, the fix's new text)
    ("to: lifecycle.running", "to: lifecycle.runing", "lifecycle.running"),
    (
        "guard: [retry_budget_left, next_attempt]",
        "guard: [retry_budget_left, next_atempt]",
        "next_attempt",
    ),
    ("already: [TaskCancelled]", "already: [TaskCanceled]", "TaskCancelled"),
    ("TaskCompleted: TASK_NOT_RUNNING", "TaskComplete: TASK_NOT_RUNNING", "TaskCompleted"),
    ("if: event.attempt == ctx.attempt + 1", "if: event.attempt == ctx.atempt + 1", "attempt"),
    ("if: event.retryable", "if: event.retriable", "retryable"),
    ("    description: Where the task", "    descripton: Where the task", "description"),
    ("    initial: queued", "    initial: queud", "queued"),
    ("guard: effects_reconciled", "guard: effects_reconcile", "effects_reconciled"),
    ("when: lifecycle.cancelled", "when: lifecycle.canceled", "lifecycle.cancelled"),
]


@pytest.mark.parametrize(
    ("good", "bad", "new_text"), MISSPELT, ids=[m[1].split("\n")[-1].strip() for m in MISSPELT]
)
def test_code_action_respells_a_misspelt_name(good: str, bad: str, new_text: str) -> None:
    broken = TASK.replace(good, bad, 1)
    result = compile_source(broken, "task.yaml")
    assert result.errors, bad
    doc = chart_document(broken, result)
    actions = [
        a for a in code_actions(doc, EVERYWHERE, result.diagnostics) if a.title.startswith("Change")
    ]
    assert actions, result.diagnostics
    first = actions[0]
    assert first.edits[0].new_text == new_text
    assert apply(broken, first.edits) == TASK


def test_code_action_declares_an_undeclared_event() -> None:
    lines = TASK.split("\n")
    declared = lines.index("  LeaseExpired:")
    broken = "\n".join(lines[:declared] + lines[declared + 2 :])
    result = compile_source(broken, "task.yaml")
    doc = chart_document(broken, result)
    declares = [
        a for a in code_actions(doc, EVERYWHERE, result.errors) if a.title.startswith("Declare")
    ]
    assert [a.title for a in declares] == ["Declare event 'LeaseExpired'"]
    fixed = apply(broken, declares[0].edits)
    assert "  LeaseExpired: {}\n" in fixed
    assert not [d for d in compile_source(fixed, "task.yaml").errors if d.slug == "unknown-event"]


@pytest.mark.parametrize(
    "events_block",
    ["events: {A: {}}\n", "events:\n  A: {}\n", ""],
    ids=["flow", "block", "none"],
)
def test_declare_event_in_every_form_of_events(events_block: str) -> None:
    text = f"statechart: t\n{events_block}initial: s\nstates:\n  s:\n    on: {{B: s}}\n"
    result = compile_source(text, "t.yaml")
    doc = chart_document(text, result)
    actions = [
        a for a in code_actions(doc, EVERYWHERE, result.errors) if a.title == "Declare event 'B'"
    ]
    assert len(actions) == 1
    fixed = apply(text, actions[0].edits)
    assert compile_source(fixed, "t.yaml").errors == ()


def test_code_actions_only_for_findings_on_the_lines_of_the_range() -> None:
    broken = TASK.replace("to: lifecycle.running", "to: lifecycle.runing", 1)
    result = compile_source(broken, "task.yaml")
    doc = chart_document(broken, result)
    far = Range(Position(0, 0), Position(1, 0))
    assert code_actions(doc, far, result.diagnostics) == ()
    near = at(broken, "to: lifecycle.runing", offset=6)
    expected = code_actions(doc, Range(near, near), result.diagnostics)
    assert expected
    line = broken.split("\n")[near.line]
    for column in range(len(line) + 1):  # anywhere on the line, column 0 and the end too
        cursor = Position(near.line, column)
        assert code_actions(doc, Range(cursor, cursor), result.diagnostics) == expected
    for other in (near.line - 1, near.line + 1):
        cursor = Position(other, 0)
        assert code_actions(doc, Range(cursor, cursor), result.diagnostics) == ()


# ---- hostile documents --------------------------------------------------------------------
YAML_NOISE = st.text(
    alphabet=st.sampled_from(list("[]{},:'\"#-\n *&!|>.?%@`\\\tab_Z09(")), max_size=12
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(MACHINES),
    st.integers(min_value=0, max_value=10**5),
    st.integers(min_value=0, max_value=40),
    YAML_NOISE,
    st.integers(min_value=-40, max_value=40),
)
def test_every_entry_point_answers_any_edit_of_a_machine(
    path: Path, start: int, length: int, noise: str, shift: int
) -> None:
    """A machine with a slice replaced by YAML punctuation, asked anything near the edit
    and past the end of the text: an answer (maybe empty), never an exception."""
    text = path.read_text(encoding="utf-8")
    start %= len(text)
    edited = text[:start] + noise + text[start + length :]
    result = compile_source(edited, "edited.yaml")
    doc = chart_document(edited, result)
    near = min(max(start + shift, 0), len(edited))
    line = edited.count("\n", 0, near)
    positions = [
        Position(line, near - (edited.rfind("\n", 0, near) + 1)),
        Position(line + 10**4, 3),
        Position(line, 10**4),
    ]
    document_symbols(doc)
    code_actions(doc, EVERYWHERE, result.diagnostics)
    for p in positions:
        completions(doc, p)
        hover(doc, p)
        definition(doc, p)
        references(doc, p)
        prepare_rename(doc, p)
        outcome = rename(doc, p, "renamed_x")
        assert outcome.refusal is None or outcome.edits == ()
        code_actions(doc, Range(p, p), result.diagnostics)


def test_positions_count_code_points_on_lines_with_non_ascii_names() -> None:
    text = (
        "statechart: u\nevents: {GÖ: {}}\ninitial: früh\nstates:\n"
        "  früh: {on: {GÖ: {to: spät, if: \"not active('spät')\"}}}\n  spät: {final: true}\n"
    )
    doc = chart_document(text)
    assert doc.result.chart is not None, doc.result.diagnostics
    line = text.split("\n")[4]
    used = references(doc, at(text, "  spät:", offset=3))
    assert [(r.start.line, r.start.character) for r in used] == [
        (4, line.index("spät")),
        (4, line.index("spät')")),
        (5, 2),
    ]
    outcome = rename(doc, Position(5, 3), "later")
    assert outcome.refusal is None
    assert apply(text, outcome.edits) == text.replace("spät", "later")
    assert labels(doc, at(text, "to: sp")) == ["früh", "spät"]


def test_hover_on_a_state_lists_what_its_ancestors_answer_too() -> None:
    text = (
        "statechart: h\nevents: {GO: {}, STOP: {}, PING: {}}\ninitial: outer\nstates:\n"
        "  outer:\n    initial: inner\n    on: {STOP: done}\n    reject: {GO: NOT_YET}\n"
        "    already: [PING]\n    states:\n      inner: {on: {PING: other}}\n      other: {}\n"
        "  done: {final: true}\n"
    )
    doc = chart_document(text)
    assert doc.chart is not None, doc.result.diagnostics
    shown = hover(doc, at(text, "      inner:", offset=7))
    assert shown is not None and shown.markdown == (
        "**state** `outer.inner` (atomic)\nreference: `inner`\n"
        "transitions on: PING\n"
        "transitions of ancestors on: STOP (outer)\n"
        "already/reject of ancestors: PING → ALREADY_APPLIED (outer), GO → NOT_YET (outer)"
    )


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(ALL_DECLARATIONS), st.text(max_size=12))
def test_rename_to_any_text_is_refused_or_compiles(target: tuple[str, int], new_name: str) -> None:
    """Any string as the new name: a refusal, or edits after which the chart still compiles."""
    file, number = target
    path = next(p for p in MACHINES if p.name == file)
    text = path.read_text(encoding="utf-8")
    doc = chart_document(text)
    outcome = rename(doc, doc.index.declarations[number].range.start, new_name)
    if outcome.refusal is None:
        result = compile_source(apply(text, outcome.edits), file)
        assert result.chart is not None, (new_name, result.errors)
    else:
        assert outcome.edits == ()
