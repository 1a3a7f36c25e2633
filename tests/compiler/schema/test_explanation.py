"""Schema errors explained: one clear, positioned message per problem, in the DSL's terms."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from schema_helpers import (
    FULL_CHART,
    check,
    parse,
)

from statekit.compiler.diagnostics import Severity
from statekit.compiler.schema import validator
from statekit.compiler.source.nodes import MappingNode, Node, ScalarNode, SequenceNode

# --- one clear, positioned message per problem ------------------------------------


ERRORS = [
    pytest.param(
        "statechart: x\nstates:\n  a:\n    on:\n      GO: {to: b, gaurd: ok}\n",
        "unknown key 'gaurd' in transition (allowed: to, guard, if, else, do, description)",
        (5, 19),
        "did you mean 'guard'?",
        id="misspelt key in a transition",
    ),
    pytest.param(
        "statechart: x\nstates:\n  a:\n    on:\n      GO:\n        - to: b\n          iff: x\n",
        "unknown key 'iff' in transition",
        (7, 11),
        "did you mean 'if'?",
        id="misspelt key in a transition in a list",
    ),
    pytest.param(
        "statechart: x\nstates:\n  a:\n    fnal: true\n",
        "unknown key 'fnal' in state (allowed: description, initial, states,",
        (4, 5),
        "did you mean 'final'?",
        id="misspelt key in a state",
    ),
    pytest.param(
        "statechart: x\ninital: a\nstates: {a: {}}\n",
        "unknown key 'inital' in statechart (allowed: statechart, version,",
        (2, 1),
        "did you mean 'initial'?",
        id="misspelt key at the root",
    ),
    pytest.param(
        "statechart: x\nstates:\n  a:\n    guards: {}\n",
        "unknown key 'guards' in state",
        (4, 5),
        "'guards' is a chart key: it is allowed only at the top of the file",
        id="chart key in a state",
    ),
    pytest.param(
        "statechart: x\nversion: two\n",
        "expected an integer for 'version', got a string",
        (2, 10),
        None,
        id="wrong type",
    ),
    pytest.param(
        "statechart: x\nversion: 0\n",
        "'version' must be at least 1, got 0",
        (2, 10),
        None,
        id="version below 1",
    ),
    pytest.param(
        "statechart: x\nversion: 1.0\n",
        "expected an integer for 'version', got a number",
        (2, 10),
        None,
        id="a float is not an integer",
    ),
    pytest.param(
        "statechart: x\nstates:\n  a:\n    on: {GO: 5}\n",
        "expected a state reference, a transition mapping or a list of transitions"
        " for event 'GO', got an integer",
        (4, 14),
        None,
        id="wrong transition type",
    ),
    pytest.param(
        "statechart: x\nstates:\n  a:\n    on:\n      GO: [[b]]\n",
        "expected a state reference or a transition mapping for item 1 of event 'GO', got a list",
        (5, 12),
        None,
        id="list in a transition list",
    ),
    pytest.param(
        "statechart: x\nstates:\n  a:\n    entry: {assign: {n: 1}}\n",
        "expected a list of effects for 'entry', got a mapping",
        (4, 12),
        "effects are a list: write each one as an item (- assign: ...)",
        id="effects not in a list",
    ),
    pytest.param(
        "statechart: x\nstates:\n  a:\n",
        "expected a state mapping for state 'a', got null",
        (3, 5),
        "write {} for a state without keys",
        id="empty state",
    ),
    pytest.param(
        "statechart: x\nstates:\n  a:\n    already: GO\n",
        "expected a list of event names for 'already', got a string",
        (4, 14),
        None,
        id="already not a list",
    ),
    pytest.param(
        "statechart: x\nstates:\n  idle.wait: {}\n",
        "invalid state name 'idle.wait': non-empty, no '.', no white space",
        (3, 3),
        None,
        id="state name with a dot",
    ),
    pytest.param(
        "statechart: x\nevents:\n  '*': null\n",
        "invalid event name '*'",
        (3, 3),
        None,
        id="event named *",
    ),
    pytest.param(
        "statechart: x\nstates:\n  a:\n    on:\n      'GO NOW': b\n",
        "invalid event name 'GO NOW': non-empty, no '.', no white space",
        (5, 7),
        None,
        id="event name with a space",
    ),
    pytest.param(
        "statechart: 'my chart'\n",
        "invalid chart name 'my chart': letters, digits, '_' and '-'",
        (1, 13),
        None,
        id="chart name",
    ),
    pytest.param(
        "statechart: x\ncontext:\n  2fast: integer\n",
        "invalid field name '2fast': an identifier",
        (3, 3),
        None,
        id="field name",
    ),
    pytest.param(
        "statechart: x\nstates:\n  a:\n    on: {GO: {to: 'a b'}}\n",
        "invalid state reference 'a b': a state name or a dotted path of state names",
        (4, 19),
        None,
        id="state reference",
    ),
    pytest.param(
        "statechart: x\nstates:\n  a:\n    reject: {GO: not_allowed}\n",
        "invalid reason code 'not_allowed': upper case letters, digits and '_'",
        (4, 18),
        None,
        id="bad reason code",
    ),
    pytest.param(
        "statechart: x\nstates:\n  a:\n    reject: {'**': NOPE}\n",
        "invalid reject key '**'",
        (4, 14),
        None,
        id="bad reject key",
    ),
    pytest.param(
        "statechart: x\nguards:\n  g: {if: ok, else: Nope}\n",
        "invalid reason code 'Nope'",
        (3, 21),
        None,
        id="bad guard reason code",
    ),
    pytest.param(
        "statechart: x\nstates:\n  p:\n    states:\n      h: {history: dep}\n",
        "invalid value 'dep' for 'history': expected one of shallow, deep",
        (5, 20),
        "did you mean 'deep'?",
        id="bad history value",
    ),
    pytest.param(
        "statechart: x\nstates:\n  a: {parallel: false}\n",
        "'parallel' can only be true, got false",
        (3, 17),
        None,
        id="parallel false",
    ),
    pytest.param(
        "statechart: x\nstates:\n  a:\n    entry:\n      - {assign: {n: 1}, emit: {type: X}}\n",
        "an effect has exactly one key "
        "(assign, emit, raise, send, cancel, pause, resume, foreach or if), got 'assign', 'emit'",
        (5, 9),
        None,
        id="effect with two keys",
    ),
    pytest.param(
        "statechart: x\nstates:\n  a:\n    entry:\n      - asign: {n: 1}\n",
        "unknown key 'asign' in effect "
        "(allowed: assign, emit, raise, send, cancel, pause, resume, foreach, if)",
        (5, 9),
        "did you mean 'assign'?",
        id="misspelt effect",
    ),
    pytest.param(
        "statechart: x\nstates:\n  a:\n    exit:\n      - emit: {payload: {}}\n",
        "missing required key 'type' in emit",
        (5, 15),
        None,
        id="emit without type",
    ),
    pytest.param(
        "statechart: x\nstates:\n  a:\n    exit:\n      - raise: 5\n",
        "expected an event name or a raise mapping for 'raise', got an integer",
        (5, 16),
        None,
        id="raise of the wrong type",
    ),
    pytest.param(
        "description: no name\nstates: {a: {}}\n",
        "missing required key 'statechart'",
        (1, 1),
        None,
        id="missing statechart",
    ),
    pytest.param(
        "statechart: x\ncontext:\n  n: integr\n",
        "invalid field type 'integr': expected one of integer, number, string, boolean",
        (3, 6),
        "did you mean 'integer'?",
        id="misspelt field type",
    ),
    pytest.param(
        "statechart: x\nevents:\n  E: {n: {tpe: integer}}\n",
        "unknown key 'tpe' in field spec (allowed: type, enum, items, nullable, default, secret,",
        (3, 11),
        "did you mean 'type'?",
        id="misspelt key in a field spec",
    ),
    pytest.param(
        "statechart: x\nevents:\n  E: [n]\n",
        "expected a payload declaration (a mapping or null) for event 'E', got a list",
        (3, 6),
        None,
        id="payload declaration",
    ),
    pytest.param(
        "statechart: x\nguards:\n  g: {iff: ctx.ok}\n",
        "unknown key 'iff' in guard (allowed: if, else, description)",
        (3, 7),
        "did you mean 'if'?",
        id="misspelt key in a guard",
    ),
    pytest.param(
        "statechart: x\ninvariants:\n  i: {when: a, requir: b}\n",
        "unknown key 'requir' in state invariant (allowed: when, require, forbid, description)",
        (3, 16),
        "did you mean 'require'?",
        id="misspelt key in a state invariant",
    ),
    pytest.param(
        "statechart: x\ninvariants:\n  i: {asert: ctx.n > 0}\n",
        "unknown key 'asert' in expression invariant (allowed: assert, description)",
        (3, 7),
        "did you mean 'assert'?",
        id="misspelt key in an expression invariant",
    ),
    pytest.param(
        "statechart: x\ninvariants:\n  i: {}\n",
        "invariant 'i' needs 'when' (a state invariant) or 'assert' (an expression invariant)",
        (3, 6),
        None,
        id="empty invariant",
    ),
    pytest.param(
        "statechart: x\nlint:\n  severity: {unused-event: warn}\n",
        "invalid severity 'warn': expected one of error, warning, off",
        (3, 28),
        "did you mean 'warning'?",
        id="lint severity",
    ),
    pytest.param(
        "statechart: x\nlint:\n  ignore: [Unused_Event]\n",
        "invalid lint rule slug 'Unused_Event': lower case letters, digits and '-'",
        (3, 12),
        None,
        id="lint slug",
    ),
    pytest.param(
        "statechart: x\nstates:\n  a:\n    on: {GO: {to: []}}\n",
        "'to' must not be empty",
        (4, 19),
        None,
        id="empty target list",
    ),
    pytest.param(
        "statechart: x\nstates:\n  a: {already: [A, A]}\n",
        "'already' lists 'A' more than once",
        (3, 16),
        None,
        id="duplicate already",
    ),
]


@pytest.mark.parametrize(("text", "message", "position", "note"), ERRORS)
def test_error_fixture(
    text: str, message: str, position: tuple[int, int], note: str | None
) -> None:
    diagnostics = check(text)
    assert len(diagnostics) == 1, [d.message for d in diagnostics]
    (found,) = diagnostics
    assert message in found.message
    assert (found.span.line, found.span.column) == position
    assert found.span.file == "chart.yaml"
    assert found.slug == "schema"
    assert found.severity is Severity.ERROR
    if note is not None:
        assert note in found.notes
    for raw in ("is not valid under any", "Additional properties", "is a required property"):
        assert raw not in found.message


def test_errors_are_sorted_and_distinct() -> None:
    text = "statechart: x\nversion: no\nstates:\n  b: {fnal: true}\n  a:\n    on: {GO: 5, GO2: 6}\n"
    diagnostics = check(text)
    assert [(d.span.line, d.span.column) for d in diagnostics] == [
        (2, 10),
        (4, 7),
        (6, 14),
        (6, 22),
    ]
    assert len(set(diagnostics)) == len(diagnostics)


def test_all_problems_are_reported_in_one_run() -> None:
    text = "statechart: x\nstates:\n  a:\n    on:\n      GO: {to: b, gaurd: ok, iff: x, doo: []}\n"
    messages = [d.message for d in check(text)]
    assert [m.split(" in ")[0] for m in messages] == [
        "unknown key 'gaurd'",
        "unknown key 'iff'",
        "unknown key 'doo'",
    ]


def test_a_list_root_is_explained() -> None:
    root = SequenceNode((), parse("statechart: x\n").span)
    (found,) = validator.validate(root, "chart.yaml")
    assert found.message == "expected a statechart mapping, got a list"


def key_nodes(
    node: Node, parents: tuple[str, ...] = ()
) -> Iterator[tuple[ScalarNode, tuple[str, ...]]]:
    if isinstance(node, MappingNode):
        for key, value in node.items:
            yield key, parents
            yield from key_nodes(value, (*parents, str(key.value)))
    elif isinstance(node, SequenceNode):
        for item in node.items:
            yield from key_nodes(item, parents)


OPEN_MAPS = {"states", "on", "context", "events", "guards", "invariants", "reject", "assign"}
OPEN_MAPS |= {"payload", "severity", "producers", "races", "idempotency", "rename", "timers"}
OPEN_MAPS |= {"enter"}  # a migration's states entered
OPEN_MAPS |= {"define", "tables", "entries"}  # definitions, tables, a table's entries
OPEN_MAPS |= {"input", "output"}  # an invocation's input and output, a final state's output
OPEN_MAPS |= {"fields"}  # a record's fields
OPEN_MAPS |= {"cases"}  # a chosen chart's cases (values of `by`)


def keyword_keys() -> list[tuple[ScalarNode, str]]:
    """DSL keywords used as keys in the full chart (not names in open maps), with their text."""
    out = []
    for key, parents in key_nodes(parse(FULL_CHART.read_text(encoding="utf-8"))):
        in_open_map = bool(parents) and (
            parents[-1] in OPEN_MAPS
            or (len(parents) >= 2 and parents[-2] == "events")
            or (parents[-1] == "after" and str(key.value)[:1].isdigit())  # delay → transition
        )
        if not in_open_map:
            out.append((key, str(key.value)))
    return out


def test_a_misspelt_keyword_anywhere_is_exactly_one_error_at_that_key() -> None:
    lines = FULL_CHART.read_text(encoding="utf-8").splitlines(keepends=True)
    cases = keyword_keys()
    assert len(cases) > 100
    for key, text in cases:
        mutated = list(lines)
        line = mutated[key.span.line - 1]
        end = key.span.end_column - 1
        mutated[key.span.line - 1] = line[:end] + "_" + line[end:]
        diagnostics = check("".join(mutated))
        assert len(diagnostics) == 1, (key, [d.message for d in diagnostics])
        (found,) = diagnostics
        assert (found.span.line, found.span.column) == (key.span.line, key.span.column)
        assert found.message.startswith(f"unknown key '{text}_' in "), found.message
        assert f"did you mean '{text}'?" in found.notes
