"""The classified step: every event ends in exactly one classified result, in the
order docs/semantics.md gives (UNKNOWN_EVENT → INVALID_PAYLOAD → selection → classification
→ invariants)."""

from __future__ import annotations

import math

import pytest
from chart_helpers import chart_of, machine

from statekit.engine.chart import Chart
from statekit.engine.result import (
    EVALUATION_ERROR,
    INVALID_PAYLOAD,
    INVARIANT_VIOLATION,
    REDACTED,
    TERMINAL_STATE,
    UNDEFINED_TRANSITION,
    UNKNOWN_EVENT,
    Status,
)
from statekit.engine.step import ChartMismatchError

GUARDS = """
statechart: guards
events: {GO: {amount: integer}, SOLO: {amount: integer}, HERE: {amount: integer}}
guards:
  positive: {if: event.amount > 0, else: NOT_POSITIVE}
  small: {if: event.amount < 100, else: TOO_BIG}
initial: p
states:
  p:
    parallel: true
    states:
      r1:
        initial: a
        states:
          a:
            on:
              GO: {to: a2, guard: [positive, small]}
              SOLO: {to: a2, if: event.amount == 1}
              HERE: {to: a2, if: event.amount == 1}
            already: [HERE]
          a2: {}
      r2:
        initial: b
        states:
          b:
            on:
              GO: {to: b2, if: event.amount > 1000, else: NOT_HUGE}
          b2: {}
"""


@pytest.mark.parametrize(
    ("amount", "status", "reason"),
    [
        (-1, Status.REJECTED, "NOT_POSITIVE"),  # r1's first guard fails first
        (500, Status.REJECTED, "TOO_BIG"),  # r1's second guard; r2's if fails later
        (50, Status.APPLIED, None),
        (5000, Status.APPLIED, None),  # r1 fails, r2 fires: applied
    ],
)
def test_the_first_failing_guard_in_selection_order_gives_the_reason(
    amount: int, status: Status, reason: str | None
) -> None:
    chart = machine(GUARDS)
    result = chart.send(chart.start(), "GO", {"amount": amount})
    assert (result.status, result.reason) == (status, reason)


def test_an_inline_if_without_else_fails_with_guard_failed() -> None:
    chart = machine(GUARDS)
    result = chart.send(chart.start(), "SOLO", {"amount": 2})
    assert result.reason == "GUARD_FAILED"
    assert result.message is not None and "event.amount == 1" in result.message


def test_already_wins_over_a_failing_guard() -> None:
    chart = machine(GUARDS)
    result = chart.send(chart.start(), "HERE", {"amount": 2})
    assert result.status is Status.ALREADY_APPLIED
    assert result.reason is None and result.emitted == () and result.evidence == ()


REJECTS = """
statechart: rejects
events: {A: {}, B: {}, C: {}, D: {}, LATE: {}, DONE_AGAIN: {}, FINISH: {}}
initial: outer
reject: {"*": ROOT_ANY}
states:
  outer:
    initial: inner
    reject: {A: OUTER_A, C: OUTER_C}
    on: {FINISH: end}
    states:
      inner:
        initial: p
        states:
          p:
            parallel: true
            states:
              r1:
                initial: x
                states:
                  x:
                    reject: {B: X_B, "*": X_ANY}
              r2:
                initial: y
                states:
                  y:
                    reject: {D: Y_D, C: Y_C}
  end:
    final: true
    already: [DONE_AGAIN]
    reject: {LATE: TOO_LATE}
"""


@pytest.mark.parametrize(
    ("event", "reason"),
    [
        ("B", "X_B"),  # exact before "*" in one state
        ("A", "X_ANY"),  # the deepest state with a matching entry wins, even by "*"
        ("D", "Y_D"),  # exact before "*" between states of equal depth
        ("C", "Y_C"),  # first in document order among equal depth exact entries
    ],
)
def test_the_most_specific_reject_entry_gives_the_reason(event: str, reason: str) -> None:
    chart = machine(REJECTS)
    result = chart.send(chart.start(), event)
    assert (result.status, result.reason) == (Status.REJECTED, reason)
    assert result.state is chart.start()


def test_the_root_can_classify_everything_left() -> None:
    text = REJECTS.replace('reject: {B: X_B, "*": X_ANY}', "reject: {B: X_B}")
    chart = machine(text)
    assert chart.send(chart.start(), "A").reason == "OUTER_A"
    assert chart.send(chart.start(), "LATE").reason == "ROOT_ANY"


def test_without_any_entry_the_reason_is_undefined_transition() -> None:
    chart = machine(GUARDS)
    result = chart.send(chart.start(), "SOLO", {"amount": 1})
    again = chart.send(result.state, "SOLO", {"amount": 1})
    assert (again.status, again.reason) == (Status.REJECTED, UNDEFINED_TRANSITION)


def test_a_final_chart_only_listens_to_its_final_states_entries() -> None:
    chart = machine(REJECTS)
    final = chart.send(chart.start(), "FINISH").state
    assert final.is_final
    assert chart.send(final, "DONE_AGAIN").status is Status.ALREADY_APPLIED
    assert chart.send(final, "LATE").reason == "TOO_LATE"
    # The root's "*" does not apply once the chart is final.
    terminal = chart.send(final, "A")
    assert (terminal.status, terminal.reason) == (Status.REJECTED, TERMINAL_STATE)
    # Unknown events and bad payloads are classified before any state is consulted.
    assert chart.send(final, "NOPE").reason == UNKNOWN_EVENT
    assert chart.send(final, "A", {"x": 1}).reason == INVALID_PAYLOAD


PAYLOADS = """
statechart: payloads
context: {last: integer}
events:
  GO:
    n: integer
    x: number
    who: {enum: [user, support]}
    note: {type: string, nullable: true, default: null}
    flag: {type: boolean, default: false}
  BARE: {}
initial: a
states:
  a:
    on:
      GO: {do: [{assign: {last: event.n}}]}
      BARE: a
"""

VALID = {"n": 1, "x": 2.5, "who": "user"}


@pytest.mark.parametrize(
    ("payload", "needle"),
    [
        ({"x": 2.5, "who": "user"}, "missing required field 'n'"),
        ({**VALID, "extra": 1}, "unknown field(s) 'extra'"),
        ({**VALID, "n": True}, "field 'n': expected integer, got boolean"),
        ({**VALID, "n": 1.0}, "expected integer, got number"),
        ({**VALID, "x": "2"}, "expected number, got string"),
        ({**VALID, "x": math.nan}, "got a non-finite number"),
        ({**VALID, "x": math.inf}, "got a non-finite number"),
        ({**VALID, "n": 2**63}, "got an integer beyond 64 bits"),
        ({**VALID, "who": "admin"}, "field 'who': expected one of 'user', 'support', got 'admin'"),
        (
            {**VALID, "who": "x" * 100},
            "got 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...' (100 characters)",
        ),
        ({**VALID, "who": 3}, "field 'who': expected one of 'user', 'support', got integer"),
        ({**VALID, "flag": None}, "expected boolean, got null"),
        ([1, 2], "must be a mapping"),
    ],
)
def test_invalid_payloads_are_refused_before_any_state_is_consulted(
    payload: object, needle: str
) -> None:
    chart = machine(PAYLOADS)
    result = chart.send(chart.start(), "GO", payload)  # type: ignore[arg-type]
    assert (result.status, result.reason) == (Status.REJECTED, INVALID_PAYLOAD)
    assert result.message is not None and needle in result.message


def test_valid_payloads_take_defaults_and_integers_are_numbers() -> None:
    chart = machine(PAYLOADS)
    s0 = chart.start()
    result = chart.send(s0, "GO", {"n": 3, "x": 2, "who": "support"})
    assert result.status is Status.APPLIED
    assert result.evidence[0].payload == {
        "n": 3,
        "x": 2,
        "who": "support",
        "note": None,
        "flag": False,
    }
    assert chart.send(s0, "BARE").status is Status.APPLIED
    assert chart.send(s0, "BARE", {}).status is Status.APPLIED
    assert chart.send(s0, "BARE", {"n": 1}).reason == INVALID_PAYLOAD


def test_unknown_and_unhashable_event_types_are_unknown_events() -> None:
    chart = machine(PAYLOADS)
    assert chart.send(chart.start(), "done.state.a").reason == UNKNOWN_EVENT
    assert chart.send(chart.start(), ["GO"]).reason == UNKNOWN_EVENT  # type: ignore[arg-type]


INVARIANTS = """
statechart: inv
context: {n: integer, d: {type: integer, default: 1}}
events: {ADD: {k: integer}, ENTER: {}, ZERO: {}}
initial: a
states:
  a:
    on:
      ADD: {do: [{assign: {n: ctx.n + event.k}}, {emit: {type: Added, payload: {n: ctx.n}}}]}
      ENTER: b
      ZERO: {do: [{assign: {d: 0}}]}
  b: {}
  c: {}
invariants:
  b_needs_c: {when: b, require: c}
  small: {assert: ctx.n < 10}
  divisible: {assert: 10 // ctx.d >= 0}
"""


def test_a_broken_expression_invariant_rejects_the_whole_step() -> None:
    chart = machine(INVARIANTS)
    s0 = chart.start()
    ok = chart.send(s0, "ADD", {"k": 3})
    assert ok.status is Status.APPLIED and ok.state.context["n"] == 3
    bad = chart.send(ok.state, "ADD", {"k": 7})
    assert (bad.status, bad.reason, bad.invariant) == (
        Status.REJECTED,
        INVARIANT_VIOLATION,
        "small",
    )
    assert bad.state is ok.state and bad.emitted == ()
    # The evidence shows what was rolled back.
    assert bad.evidence[0].changes[0].new == 10


def test_a_broken_state_invariant_is_named() -> None:
    chart = machine(INVARIANTS)
    bad = chart.send(chart.start(), "ENTER")
    assert (bad.reason, bad.invariant) == (INVARIANT_VIOLATION, "b_needs_c")


ERRORS = """
statechart: errors
context:
  x: {type: integer, default: 5}
  d: {type: integer, default: 0}
  f: {type: number, default: 10.0}
events: {DIV: {}, GUARD: {by: integer}, BIG: {}, EMIT: {}, HUGE: {}}
initial: a
states:
  a:
    on:
      DIV: {do: [{assign: {x: 1}}, {assign: {x: ctx.x // ctx.d}}]}
      GUARD: {to: b, if: 10 // event.by > 1}
      BIG: {do: [{assign: {f: ctx.f * 1e308}}]}
      EMIT: {do: [{emit: {type: Ratio, payload: {r: ctx.x % ctx.d}}}]}
      HUGE: {do: [{assign: {x: ctx.x ** 64}}]}
  b: {}
"""


@pytest.mark.parametrize(
    ("event", "payload", "needle"),
    [
        ("DIV", None, "assign to ctx.x `ctx.x // ctx.d` at line 11, column "),
        ("GUARD", {"by": 0}, "'if' `10 // event.by > 1` at line 12, column "),
        ("BIG", None, "not a finite number"),
        ("EMIT", None, "emit Ratio field 'r' `ctx.x % ctx.d`"),
        ("HUGE", None, "does not fit in a 64-bit integer"),
    ],
)
def test_expression_errors_are_rejections_naming_the_expression(
    event: str, payload: dict[str, int] | None, needle: str
) -> None:
    chart = machine(ERRORS)
    s0 = chart.start()
    result = chart.send(s0, event, payload)
    assert (result.status, result.reason) == (Status.REJECTED, EVALUATION_ERROR)
    assert result.state is s0
    assert result.message is not None and needle in result.message, result.message


def test_an_invariant_that_cannot_be_evaluated_is_an_evaluation_error() -> None:
    chart = machine(INVARIANTS)
    result = chart.send(chart.start(), "ZERO")
    assert result.reason == EVALUATION_ERROR
    assert "invariant 'divisible'" in (result.message or "")


SECRETS = """
statechart: secrets
context:
  token: {type: string, default: ""}
  pin: {type: string, secret: true, default: ""}
  plain: {type: string, default: ""}
  echoed: {type: string, default: ""}
events:
  LOGIN: {user: string, password: {type: string, secret: true}}
  ECHO: {value: string}
initial: out
states:
  out:
    on:
      LOGIN:
        to: in
        do:
          - assign: {token: "event.password + '!'", plain: event.user, pin: "'1234'"}
          - raise: {event: ECHO, payload: {value: ctx.token}}
  in:
    on:
      ECHO: {do: [{assign: {echoed: "ctx.plain + event.value"}}]}
"""


def test_secret_fields_and_values_copied_from_them_are_redacted_from_evidence() -> None:
    chart = machine(SECRETS)
    result = chart.send(chart.start(), "LOGIN", {"user": "ann", "password": "hunter2"})
    assert result.status is Status.APPLIED
    login, echo = result.evidence
    assert login.payload == {"user": "ann", "password": REDACTED}
    changes = {c.field: (c.old, c.new) for c in login.changes}
    assert changes["token"] == (REDACTED, REDACTED)  # filled from a secret field
    assert changes["pin"] == (REDACTED, REDACTED)  # declared secret
    assert changes["plain"] == ("", "ann")
    assert echo.payload == {"value": REDACTED}  # raised from a tainted context field
    assert {c.field: c.new for c in echo.changes}["echoed"] == REDACTED  # tainted in turn
    text = " ".join([repr(result), str(result.evidence), repr(result.state)])
    assert "hunter2" not in text and "1234" not in text


def test_rejection_messages_never_show_a_secret_value() -> None:
    chart = machine(SECRETS)
    result = chart.send(chart.start(), "LOGIN", {"user": "ann", "password": 12345})
    assert result.reason == INVALID_PAYLOAD
    assert "12345" not in (result.message or "") and "12345" not in repr(result)


EMITS = """
statechart: emits
context: {n: integer}
events: {GO: {}}
initial: a
states:
  a:
    exit: [{emit: {type: Left, payload: {n: ctx.n}}}]
    on: {GO: {to: b, do: [{assign: {n: 2}}, {emit: {type: Moved, payload: {n: ctx.n}}}]}}
  b:
    entry: [{emit: {type: Entered}}]
"""


def test_emitted_messages_are_collected_in_order_with_ids_from_the_event_id() -> None:
    chart = machine(EMITS)
    result = chart.send(chart.start(), "GO", event_id="evt-1")
    assert [(m.message_id, m.type, dict(m.payload)) for m in result.emitted] == [
        ("evt-1/0", "Left", {"n": 0}),
        ("evt-1/1", "Moved", {"n": 2}),
        ("evt-1/2", "Entered", {}),
    ]
    assert result.evidence[0].emitted == ("evt-1/0", "evt-1/1", "evt-1/2")


def test_message_ids_without_an_event_id_are_deterministic() -> None:
    chart = machine(EMITS)
    first = chart.send(chart.start(), "GO")
    second = machine(EMITS).send(machine(EMITS).start(), "GO")
    assert [m.message_id for m in first.emitted] == [m.message_id for m in second.emitted]
    assert first.emitted[0].message_id.startswith("auto-")
    assert first.emitted[0].message_id.endswith("/0")


def test_a_state_of_another_chart_is_a_programming_error() -> None:
    chart = machine(EMITS)
    other = machine(GUARDS)
    with pytest.raises(ChartMismatchError, match="belongs to chart 'guards'"):
        chart.send(other.start(), "GO")
    with pytest.raises(TypeError):
        chart.send("not a state", "GO")  # type: ignore[arg-type]


def test_a_state_of_another_chart_object_with_the_same_digest_is_accepted() -> None:
    first, second = Chart(chart_of(EMITS)), Chart(chart_of(EMITS))
    result = second.send(first.start(), "GO")
    assert result.status is Status.APPLIED
    assert result.state.configuration == {"b"}
