"""The compiled chart names the fields evidence must redact: declared secrets and their copies."""

from __future__ import annotations

from chart_helpers import chart_of

from statekit.compiler.serialize import chart_to_json

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
  IDLE: {}
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
      IDLE: {}
"""


def test_secrets_spread_through_assign_and_raise_to_a_fixpoint() -> None:
    redacted = chart_of(SECRETS).redacted
    assert redacted.context == {"token", "pin", "echoed"}
    assert dict(redacted.payload) == {
        "LOGIN": {"password"},
        "ECHO": {"value"},
        "IDLE": frozenset(),
    }


def test_a_chart_without_secrets_redacts_nothing() -> None:
    chart = chart_of(SECRETS.replace(", secret: true", ""))
    assert chart.redacted.context == set()
    assert all(not fields for fields in chart.redacted.payload.values())


def test_redaction_is_derived_so_it_stays_out_of_the_json_and_the_digest() -> None:
    chart = chart_of(SECRETS)
    assert "redacted" not in chart_to_json(chart)
