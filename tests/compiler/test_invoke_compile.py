"""`invoke:`, a final state's `output:` and `send: {to: ...}`: what compiles, and every
misuse as one positioned diagnostic (a table: the chart, the slug, the line and column,
words of the message)."""

from __future__ import annotations

import pytest

from statekit.compiler.invocations import ToChild, ToInstance, ToParent
from statekit.compiler.ir import Send
from statekit.compiler.pipeline import compile_source
from statekit.compiler.serialize import chart_to_json

PARENT = """\
statechart: order
context:
  order_id: {type: string, default: ""}
  total: {type: integer, default: 0}
  ref: {type: string, default: ""}
events:
  ack: {status: string, reason: {type: string, nullable: true}}
  cancel: {}
initial: paying
states:
  paying:
    invoke:
      id: payment
      chart: payment
      version: 2
      input: {order_id: ctx.order_id, amount: ctx.total * 100}
      output: {ref: string}
    entry:
      - send: {to: payment, event: authorise, payload: {amount: ctx.total}}
      - send: {to: {chart: audit, instance: "'audit-' + ctx.order_id"}, event: noted, reply: ack}
    on:
      done.invoke.payment: {to: done, do: [{assign: {ref: event.ref}}]}
      error.invoke.payment: {to: failed, do: [{assign: {ref: event.reason}}]}
      cancel: failed
      ack: {}
  done: {final: true, output: {ref: ctx.ref, total: ctx.total}}
  failed: {final: true}
"""


def compiled(text: str) -> object:
    result = compile_source(text, "chart.yaml")
    assert not result.errors, [d.message for d in result.errors]
    assert result.chart is not None
    return result.chart


def test_an_invocation_compiles_with_its_events_input_and_output() -> None:
    result = compile_source(PARENT, "order.yaml")
    assert result.chart is not None, [d.message for d in result.errors]
    chart = result.chart
    (invocation,) = chart.invocations
    assert (invocation.id, invocation.chart, invocation.version) == ("payment", "payment", 2)
    assert [name for name, _ in invocation.input] == ["order_id", "amount"]
    assert chart.state("paying").invocations == (invocation,)
    assert chart.invocation("payment") is invocation
    done, error = chart.events["done.invoke.payment"], chart.events["error.invoke.payment"]
    assert [(f.name, f.type.describe()) for f in done.fields] == [("ref", "string")]
    assert [(f.name, f.type.describe()) for f in error.fields] == [("reason", "string")]
    assert [name for name, _ in chart.state("done").output] == ["ref", "total"]
    sends = [e for e in chart.state("paying").entry if isinstance(e, Send)]
    assert isinstance(sends[0].to, ToChild) and sends[0].to.invoke_id == "payment"
    assert isinstance(sends[1].to, ToInstance) and sends[1].to.reply == "ack"
    assert sends[1].to.chart == "audit"


def test_the_digest_covers_invocations_output_and_targets() -> None:
    base = compile_source(PARENT, "order.yaml").chart
    assert base is not None
    for old, new in [
        ("chart: payment", "chart: payment2"),
        ("version: 2", "version: 3"),
        ("amount: ctx.total * 100", "amount: ctx.total"),
        ("output: {ref: ctx.ref, total: ctx.total}", "output: {ref: ctx.ref}"),
        ("send: {to: payment,", "send: {to: parent,"),
        ("'audit-' + ctx.order_id", "ctx.order_id"),
        ("reply: ack}", "}"),
    ]:
        assert PARENT.count(old) == 1, old
        other = compile_source(PARENT.replace(old, new), "order.yaml").chart
        assert other is not None, old
        assert other.digest != base.digest, old
    state = chart_to_json(base)["states"][base.path_index["paying"]]
    assert state["invoke"][0]["chart"] == "payment"


def test_a_chart_without_invocations_keeps_its_json_form() -> None:
    plain = "statechart: p\ninitial: a\nevents: {go: {}}\nstates: {a: {on: {go: b}}, b: {}}\n"
    chart = compile_source(plain, "p.yaml").chart
    assert chart is not None and chart.invocations == ()
    data = chart_to_json(chart, positions=False)
    assert all("invoke" not in s and "output" not in s for s in data["states"])


def test_send_to_parent_takes_any_event_name() -> None:
    child = """\
statechart: payment
events: {authorise: {amount: integer}}
initial: waiting
states:
  waiting:
    on:
      authorise: {to: paid, do: [{send: {to: parent, event: progress, payload: {n: 1}}}]}
  paid: {final: true, output: {ref: "'r-1'"}}
"""
    result = compile_source(child, "payment.yaml")
    assert result.chart is not None, [d.message for d in result.errors]
    (transition,) = [t for t in result.chart.transitions if t.event == "authorise"]
    (send,) = transition.effects
    assert isinstance(send, Send) and isinstance(send.to, ToParent)


# (name, replace this in PARENT, with this, slug, line, column, words in the message)
MISUSES = [
    (
        "duplicate invoke id",
        "  done: {final: true,",
        "  other:\n    invoke: {id: payment, chart: x}\n  done: {final: true,",
        "schema",
        28,
        18,
        "duplicate invoke id 'payment' (first at line 14)",
    ),
    (
        "send to no invoke id",
        "send: {to: payment, event: authorise",
        "send: {to: paymnt, event: authorise",
        "schema",
        20,
        20,
        "send to 'paymnt': no invoke in the chart has this id",
    ),
    (
        "delayed send to another instance",
        "event: noted, reply: ack}",
        "event: noted, reply: ack, delay: 5s}",
        "schema",
        21,
        106,
        "a send to another instance cannot be delayed or named ('delay:')",
    ),
    (
        "send at to another instance",
        "event: noted, reply: ack}",
        "event: noted, reply: ack, at: ctx.total}",
        "schema",
        21,
        103,
        "a send to another instance cannot be delayed or named ('at:')",
    ),
    (
        "an id on a send to another instance",
        "event: noted, reply: ack}",
        "event: noted, reply: ack, id: again}",
        "schema",
        21,
        103,
        "a send to another instance cannot be delayed or named ('id:')",
    ),
    (
        "delayed send to an address",
        "{to: {chart: audit, instance: \"'audit-' + ctx.order_id\"}, event: noted, reply: ack}",
        "{to: {address: ctx.order_id}, event: noted, delay: 5s}",
        "schema",
        21,
        66,
        "a send to an address cannot be delayed or named ('delay:')",
    ),
    (
        "output on a state that is not final",
        "  failed: {final: true}",
        "  failed: {output: {x: ctx.ref}}",
        "schema",
        28,
        12,
        "'output' on a state that is not final ('failed')",
    ),
    (
        "final siblings that disagree on their output",
        "  failed: {final: true}",
        "  failed:\n    initial: f\n"
        "    states: {f: {final: true, output: {x: ctx.ref}}, g: {final: true}}",
        "schema",
        30,
        54,
        "final state 'failed.g' gives the output none, but 'failed.f' gives {x: string}",
    ),
    (
        "invoke from a final state",
        "  failed: {final: true}",
        "  failed: {final: true, invoke: {id: late, chart: x}}",
        "schema",
        28,
        33,
        "final state 'failed' cannot invoke a chart",
    ),
    (
        "input over an unknown context field",
        "order_id: ctx.order_id,",
        "order_id: ctx.order_no,",
        "expression-type",
        17,
        25,
        "input of invoke 'payment' field 'order_id': unknown context field 'order_no'",
    ),
    (
        "output over an unknown context field",
        "output: {ref: ctx.ref, total: ctx.total}",
        "output: {ref: ctx.reff, total: ctx.total}",
        "expression-type",
        27,
        37,
        "output field 'ref': unknown context field 'reff'",
    ),
    (
        "reply to a child",
        "send: {to: payment, event: authorise, payload: {amount: ctx.total}}",
        "send: {to: payment, event: authorise, reply: ack}",
        "schema",
        20,
        54,
        "'reply:' needs 'to: {chart, instance}'",
    ),
    (
        "reply with an undeclared event",
        "event: noted, reply: ack}",
        "event: noted, reply: akc}",
        "unknown-event",
        21,
        94,
        "reply of undeclared event 'akc'",
    ),
    (
        "reply with an event carrying more than status and reason",
        "event: noted, reply: ack}",
        "event: noted, reply: cancel2}",
        "expression-type",
        21,
        94,
        "reply event cancel2 has field(s) a reply does not carry: extra",
    ),
    (
        "an instance ID that is not a string",
        "instance: \"'audit-' + ctx.order_id\"",
        "instance: ctx.total",
        "expression-type",
        21,
        45,
        "instance ID: expected string, got integer",
    ),
    (
        "done of an invoke id the chart does not have",
        "      cancel: failed\n",
        "      cancel: failed\n      done.invoke.shipment: failed\n",
        "unknown-event",
        26,
        7,
        "undeclared event 'done.invoke.shipment'",
    ),
    (
        "a field the output does not declare",
        "assign: {ref: event.ref}",
        "assign: {ref: event.reference}",
        "expression-type",
        23,
        59,
        "event done.invoke.payment has no field 'reference'",
    ),
]


@pytest.mark.parametrize(
    ("old", "new", "slug", "line", "column", "words"),
    [case[1:] for case in MISUSES],
    ids=[case[0] for case in MISUSES],
)
def test_each_misuse_is_one_positioned_error(
    old: str, new: str, slug: str, line: int, column: int, words: str
) -> None:
    text = PARENT.replace("  cancel: {}\n", "  cancel: {}\n  cancel2: {extra: integer}\n")
    assert text.count(old) == 1, old
    result = compile_source(text.replace(old, new), "chart.yaml")
    found = [(d.slug, d.span.line, d.span.column, d.message) for d in result.diagnostics]
    assert len(found) == 1, found
    ((got_slug, got_line, got_column, message),) = found
    assert words in message, found
    assert (got_slug, got_line, got_column) == (slug, line, column), found


def test_a_misspelt_invoke_id_gets_the_closest_one() -> None:
    text = PARENT.replace(
        "send: {to: payment, event: authorise", "send: {to: paymnt, event: authorise"
    )
    (found,) = compile_source(text, "chart.yaml").diagnostics
    assert found.notes[0].startswith("did you mean 'payment'? ")


@pytest.mark.parametrize(
    ("to", "timing"),
    [("parent", "delay: 5s, id: later"), ("payment", "delay: 5s"), ("payment", "at: ctx.total")],
)
def test_a_send_to_the_parent_or_a_child_can_be_delayed_and_named(to: str, timing: str) -> None:
    text = PARENT.replace(
        "send: {to: payment, event: authorise, payload: {amount: ctx.total}}",
        f"send: {{to: {to}, event: authorise, {timing}}}",
    )
    result = compile_source(text, "chart.yaml")
    assert result.chart is not None, [d.message for d in result.errors]
    send = result.chart.state("paying").entry[0]
    assert isinstance(send, Send)
    assert send.delayed and send.id == ("later" if "id:" in timing else None)
    assert isinstance(send.to, ToParent if to == "parent" else ToChild)
