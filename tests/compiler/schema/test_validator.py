"""The DSL's JSON Schema and the schema stage's diagnostics."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft7Validator

from statekit.compiler.diagnostics import Diagnostic, Severity
from statekit.compiler.schema import document, validator
from statekit.compiler.schema.vocabulary import HISTORY_STATE_KEYS
from statekit.compiler.source.loader import load_yaml
from statekit.compiler.source.nodes import MappingNode, Node, ScalarNode, SequenceNode

REPO = Path(__file__).resolve().parents[3]
SCHEMA_FILE = REPO / "statekit" / "schema" / "statechart.schema.json"
DSL_DOC = REPO / "docs" / "dsl.md"
FULL_CHART = Path(__file__).parents[1] / "fixtures" / "full_chart.yaml"

DRAFT7_KEYWORDS = {
    "$schema", "$id", "$ref", "$comment", "title", "description", "default", "examples",
    "type", "enum", "const", "properties", "patternProperties", "additionalProperties",
    "required", "propertyNames", "minProperties", "maxProperties", "items", "additionalItems",
    "minItems", "maxItems", "uniqueItems", "contains", "pattern", "minLength", "maxLength",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "oneOf",
    "anyOf", "allOf", "not", "if", "then", "else", "definitions", "dependencies",
    "markdownDescription",
}  # fmt: skip


def parse(text: str, file: str = "chart.yaml") -> Node:
    root, problems = load_yaml(text, file)
    assert root is not None, problems
    assert not problems, problems
    return root


def check(text: str) -> tuple[Diagnostic, ...]:
    return validator.validate(parse(text), "chart.yaml")


def loaded_schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return loaded


def walk(
    node: Any, path: tuple[str | int, ...] = ()
) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    """Every sub-schema (dicts only) with its path in the schema document."""
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            if key in ("enum", "const", "required", "default", "examples"):
                continue
            if key in ("properties", "definitions", "patternProperties"):
                for name, sub in value.items():
                    yield from walk(sub, (*path, key, name))
            else:
                yield from walk(value, (*path, key))
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from walk(item, (*path, index))


# --- the schema document ----------------------------------------------------------


def test_schema_is_valid_draft7() -> None:
    document = loaded_schema()
    assert document["$schema"] == "http://json-schema.org/draft-07/schema#"
    Draft7Validator.check_schema(document)


def test_schema_text_is_the_shipped_file() -> None:
    assert document.schema_text() == SCHEMA_FILE.read_text(encoding="utf-8")
    assert document.schema() == loaded_schema()


def test_schema_uses_only_draft7_keywords() -> None:
    for path, node in walk(loaded_schema()):
        unknown = set(node) - DRAFT7_KEYWORDS
        assert not unknown, f"{'/'.join(map(str, path))}: {unknown}"


def test_every_definition_and_property_has_a_description() -> None:
    document = loaded_schema()
    assert document["description"]
    missing = [
        "/".join(map(str, path))
        for path, node in walk(document)
        if len(path) >= 2
        and path[-2] in ("definitions", "properties")
        and not node.get("description")
    ]
    assert not missing


def test_descriptions_are_one_sentence() -> None:
    for path, node in walk(loaded_schema()):
        text = node.get("description")
        if isinstance(text, str):
            assert text.endswith("."), path
            assert "\n" not in text, path


def test_every_closed_mapping_has_a_title_naming_the_construct() -> None:
    for path, node in walk(loaded_schema()):
        if node.get("additionalProperties") is False:
            assert str(node.get("title", "")).endswith(" mapping"), path


def test_every_pattern_explains_itself() -> None:
    for path, node in walk(loaded_schema()):
        if "pattern" in node:
            assert node.get("title") and node.get("$comment"), path


def test_the_validator_is_built_once() -> None:
    assert validator._validator() is validator._validator()


# --- the vocabulary is defined once; this keeps the docs equal --------------------


def doc_section(title: str) -> str:
    text = DSL_DOC.read_text(encoding="utf-8")
    match = re.search(rf"^#+ {re.escape(title)}\n(.*?)(?=^#+ |\Z)", text, re.M | re.S)
    assert match, title
    return match.group(1)


def table_rows(section: str) -> list[tuple[str, str]]:
    """(first cell, second cell) of each body row of the section's table."""
    rows = [line for line in section.splitlines() if line.startswith("|")]
    out = []
    for line in rows[2:]:
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]]
        out.append((cells[0], cells[1]))
    return out


def first_column_keys(section: str) -> set[str]:
    """`parallel: true` → parallel; `entry`, `exit` → entry, exit."""
    return {
        code.split(":")[0].strip()
        for first, _ in table_rows(section)
        for code in re.findall(r"`([^`]+)`", first)
    }


def state_keys_from_doc() -> set[str]:
    return first_column_keys(doc_section("State keys"))


def split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in text:
        depth += char in "[{"
        depth -= char in "]}"
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [*parts, current]


def brace_keys(section: str, starts_with: str) -> set[str]:
    """Keys of the first `{...}` in `section` whose text begins with `{starts_with`."""
    flat = " ".join(section.split())
    start = flat.index("{" + starts_with)
    depth = 0
    for end in range(start, len(flat)):
        depth += flat[end] == "{"
        depth -= flat[end] == "}"
        if depth == 0:
            break
    inner = flat[start + 1 : end]
    return {part.split(":")[0].strip() for part in split_top_level(inner)}


def properties(definition: str | None) -> set[str]:
    document = loaded_schema()
    node = document if definition is None else document["definitions"][definition]
    return set(node["properties"])


def test_state_keys_equal_the_docs() -> None:
    assert properties("state") == state_keys_from_doc()


def test_history_state_keys_equal_the_docs_and_are_state_keys() -> None:
    sentence = re.search(r"^A history state may only have (.*)\.$", DSL_DOC.read_text(), re.M)
    assert sentence, "docs/dsl.md names the keys of a history state"
    documented = set(re.findall(r"`([a-z]+)`", sentence.group(1)))
    assert documented == HISTORY_STATE_KEYS
    assert properties("state") >= HISTORY_STATE_KEYS


def test_root_keys_equal_the_docs() -> None:
    chart_keys = first_column_keys(doc_section("Chart keys (root only)"))
    assert properties(None) == chart_keys | state_keys_from_doc()


def test_root_state_keys_mean_the_same_as_in_a_state() -> None:
    document = loaded_schema()
    for key, sub in document["definitions"]["state"]["properties"].items():
        root_sub = dict(document["properties"][key])
        if key == "description":  # the chart's prose vs the state's: same type, own hover text
            root_sub["description"] = sub["description"]
        assert root_sub == sub, key


def test_transition_keys_equal_the_docs() -> None:
    section = doc_section("Transitions")
    assert properties("transitionMapping") == brace_keys(section, "to")
    bullets = set(re.findall(r"^- `(\w+)`", section, re.M))
    assert bullets <= properties("transitionMapping")


def test_field_spec_keys_equal_the_docs() -> None:
    assert properties("fieldSpecMapping") == brace_keys(doc_section("Field specs"), "type")
    assert set(loaded_schema()["definitions"]["fieldType"]["enum"]) == {
        "integer",
        "number",
        "string",
        "boolean",
    }


def test_effect_keys_equal_the_docs() -> None:
    section = doc_section("Effects")
    assert properties("effect") == set(re.findall(r"^- `(\w+):", section, re.M))
    assert properties("emitMapping") == brace_keys(section, "type")
    assert properties("raiseMapping") == brace_keys(section, "event")


def test_guard_invariant_and_lint_keys_equal_the_docs() -> None:
    chart = doc_section("Chart keys (root only)")
    assert properties("guardMapping") == brace_keys(chart, "if")
    assert properties("lintSettings") == brace_keys(chart, "ignore")
    invariants = doc_section("Invariants")
    assert properties("stateInvariant") == brace_keys(invariants, "when")
    assert properties("expressionInvariant") == brace_keys(invariants, "assert")


# --- valid charts -----------------------------------------------------------------


def test_full_chart_fixture_is_valid() -> None:
    assert validator.validate(parse(FULL_CHART.read_text(encoding="utf-8")), "full.yaml") == ()


def test_full_chart_fixture_uses_every_key_the_schema_allows() -> None:
    used: set[str] = set()

    def visit(node: Node) -> None:
        if isinstance(node, MappingNode):
            for key, value in node.items:
                used.add(str(key.value))
                visit(value)
        elif isinstance(node, SequenceNode):
            for item in node.items:
                visit(item)

    visit(parse(FULL_CHART.read_text(encoding="utf-8")))
    allowed = {key for _, node in walk(loaded_schema()) for key in node.get("properties", {})}
    assert allowed - used == set()


VALID = {
    "minimal": "statechart: x\n",
    "names from YAML 1.1 booleans stay names": """
statechart: switch
events: {on: null, off: {}, yes: {because: string}}
initial: off
states:
  off: {on: {on: on}}
  on: {on: {off: off, yes: off}}
""",
    "parallel root with region targets": """
statechart: two_regions
version: 1
parallel: true
states:
  a: {initial: a1, states: {a1: {on: {GO: {to: [a2, b2]}}}, a2: {}}}
  b: {initial: b1, states: {b1: {}, b2: {final: true}}}
""",
    "history with a list default": """
statechart: h
initial: p
states:
  p:
    initial: q
    states:
      q: {}
      r: {}
      h: {history: deep, default: [q]}
""",
    "literal and expression assignments, both raise forms": """
statechart: effects
context:
  n: integer
  flag: boolean
  ratio: number
  note: {type: string, nullable: true, default: null}
events: {E: {k: integer}, INTERNAL: {k: integer}, PING: null}
initial: s
states:
  s:
    entry:
      - assign: {n: 1, flag: true, ratio: 0.5, note: null}
      - assign: {n: ctx.n + 1}
      - raise: PING
      - raise: {event: INTERNAL, payload: {k: ctx.n}}
      - emit: {type: Pinged}
    on:
      E: {do: []}
""",
    "guards in both forms, guard lists, if/else": """
statechart: g
events: {E: {n: integer}}
guards:
  small: event.n < 10
  positive: {if: event.n > 0, else: NOT_POSITIVE, description: Must be positive.}
initial: s
states:
  s:
    on:
      E:
        - {to: t, guard: [positive, small]}
        - {to: t, guard: positive, if: event.n == 42, else: NOT_THE_ANSWER}
        - t
  t: {final: true}
""",
    "reject and already": """
statechart: r
events: {A: null, B: null}
initial: s
states:
  s:
    already: [A]
    reject: {B: NOT_NOW, "*": ILLEGAL_TRANSITION}
""",
    "every field spec form and lint severities": """
statechart: fields
context:
  a: integer
  b: number
  c: string
  d: boolean
  e: {enum: [1, 2, 3], default: 1}
  f: {type: string, secret: true, default: "", description: A token.}
events:
  E:
    p: {enum: [x, y]}
    q: {type: integer, default: 0, nullable: true}
lint:
  ignore: [unused-event]
  severity: {unused-guard: error, unreachable-transition: warning, expression-type: off}
""",
    "invariants in both forms": """
statechart: inv
context: {n: integer}
invariants:
  a: {when: [x, y], require: z, forbid: [w]}
  b: {when: x}
  c: {assert: ctx.n >= 0, description: Never negative.}
""",
}


@pytest.mark.parametrize("text", VALID.values(), ids=VALID.keys())
def test_valid_snippets(text: str) -> None:
    assert check(text) == ()


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
        "an effect has exactly one key (assign, emit or raise), got 'assign', 'emit'",
        (5, 9),
        None,
        id="effect with two keys",
    ),
    pytest.param(
        "statechart: x\nstates:\n  a:\n    entry:\n      - asign: {n: 1}\n",
        "unknown key 'asign' in effect (allowed: assign, emit, raise)",
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
        "unknown key 'tpe' in field spec (allowed: type, enum, nullable, default, secret,",
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
OPEN_MAPS |= {"payload", "severity"}


def keyword_keys() -> list[tuple[ScalarNode, str]]:
    """DSL keywords used as keys in the full chart (not names in open maps), with their text."""
    out = []
    for key, parents in key_nodes(parse(FULL_CHART.read_text(encoding="utf-8"))):
        in_open_map = bool(parents) and (
            parents[-1] in OPEN_MAPS or (len(parents) >= 2 and parents[-2] == "events")
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


NAME_ALPHABET = st.sampled_from(list("ab.*_- \t\n\u00a0é9"))


@given(st.text(NAME_ALPHABET, max_size=6))
def test_state_names_follow_the_documented_rule(name: str) -> None:
    allowed = bool(name) and "." not in name and not any(c.isspace() for c in name)
    allowed = allowed and not name.startswith("*")
    draft7 = validator._validator()
    document = {"statechart": "x", "states": {name: {}}}
    assert draft7.is_valid(document) == allowed


def big_chart(states: int) -> str:
    lines = ["statechart: big", "context: {count: integer}", "events:"]
    lines += [f"  E{i}: {{amount: integer}}" for i in range(10)]
    lines += ["guards: {ok: {if: event.amount > 0, else: NOT_OK}}", "initial: g0", "states:"]
    groups = states // 10
    for group in range(groups):
        lines += [f"  g{group}:", f"    initial: s{group}_0", "    states:"]
        for j in range(10):
            lines += [
                f"      s{group}_{j}:",
                "        entry: [{assign: {count: ctx.count + 1}}, {emit: {type: Entered}}]",
                f"        on:\n          E{j}: {{to: s{group}_{(j + 1) % 10}, guard: ok}}",
                f"          E{(j + 1) % 10}:",
                f"            - {{to: s{(group + 1) % groups}_0, if: ctx.count > 5}}",
                "            - s0_0",
                '        reject: {"*": ILLEGAL_TRANSITION}',
            ]
    return "\n".join(lines) + "\n"


def test_a_500_state_chart_validates_quickly() -> None:
    root = parse(big_chart(500))
    validator.validate(root, "big.yaml")  # warm the cache
    started = time.perf_counter()
    assert validator.validate(root, "big.yaml") == ()
    # About 0.1 s here; the bound is loose because CI machines are shared and noisy.
    assert time.perf_counter() - started < 2.0
