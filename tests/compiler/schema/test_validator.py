"""The schema check: one cached validator; valid charts pass, state names follow the rule."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from schema_helpers import (
    FULL_CHART,
    check,
    loaded_schema,
    parse,
    walk,
)

from statekit.compiler.schema import validator
from statekit.compiler.source.nodes import MappingNode, Node, SequenceNode


def test_the_validator_is_built_once() -> None:
    assert validator.schema_validator() is validator.schema_validator()


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


NAME_ALPHABET = st.sampled_from(list("ab.*_- \t\n\u00a0é9"))


@given(st.text(NAME_ALPHABET, max_size=6))
def test_state_names_follow_the_documented_rule(name: str) -> None:
    allowed = bool(name) and "." not in name and not any(c.isspace() for c in name)
    allowed = allowed and not name.startswith("*")
    draft7 = validator.schema_validator()
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


def test_a_500_state_chart_is_valid_and_validating_again_gives_the_same() -> None:
    root = parse(big_chart(500))
    assert validator.validate(root, "big.yaml") == ()
    assert validator.validate(root, "big.yaml") == ()
