"""Charts as they are while being typed: one per class of error the compiler reports.

Each is a small chart that names every kind of thing hover and completion
describe (states of each kind, `reject` and `already`, events with payload,
guards, context fields, a timer, an invariant), broken so that the compiler
reports the error class it is filed under (a test checks that it does).
"""

from __future__ import annotations

BASE = """\
statechart: payment
context:
  tries: {type: integer, default: 0, description: Attempts so far.}
  note: {type: string, nullable: true}
events:
  PAY: {amount: {type: integer, description: In cents.}}
  PAY_FAILED: {}
  CANCEL: {}
  KICK: {}
guards:
  enough: {if: event.amount > 3, else: TOO_SMALL, description: Big enough.}
invariants:
  paid_alone: {when: paid, forbid: created}
initial: created
states:
  created:
    description: Waiting for the payment.
    on:
      PAY: {to: paying, guard: enough, do: [{assign: {tries: ctx.tries + 1}}]}
      KICK: created
    reject:
      PAY_FAILED: CONFLICTING_RESULT
      CANCEL: TOO_LATE
    already: [KICK]
  paying:
    initial: charging
    entry: [{send: {event: KICK, delay: 1h, id: give_up}}]
    after:
      1h: created
    on:
      PAY_FAILED: created
      CANCEL: cancelled
    states:
      charging: {}
      back: {history: shallow}
  paid: {final: true}
  cancelled: {final: true}
"""


def _swap(old: str, new: str) -> str:
    assert old in BASE, old
    return BASE.replace(old, new, 1)


BROKEN: dict[str, str] = {
    "yaml-syntax": _swap("      KICK: created\n", "      KICK: created: again\n"),
    "duplicate-key": _swap("      KICK: created\n", "      KICK: created\n      KICK: paid\n"),
    "yaml-limits": _swap(
        "  note: {type: string", "  deep: " + "[" * 120 + "]" * 120 + "\n  note: {type: string"
    ),
    "schema": _swap("    description: Waiting", "    descripton: Waiting"),
    "unknown-state": _swap("      CANCEL: cancelled", "      CANCEL: canceled"),
    "ambiguous-state": _swap("      charging: {}", "      charging: {}\n      paid: {}"),
    "unknown-event": _swap("      KICK: created\n", "      KIKC: created\n"),
    "unknown-guard": _swap("guard: enough", "guard: enuogh"),
    "unknown-timer-id": _swap(
        "    already: [KICK]", "    already: [KICK]\n    entry: [{cancel: give_upp}]"
    ),
    "invalid-initial": _swap("    initial: charging", "    initial: chargin"),
    "invalid-migration": _swap(
        "initial: created\n", "initial: created\nmigrations:\n  - {from: 3}\n"
    ),
    "invalid-target": _swap("{to: paying, guard", "{to: [paid, cancelled], guard"),
    "invalid-idempotency-key": _swap(
        "initial: created\n", "initial: created\nidempotency: {PAY: [amout]}\n"
    ),
    "expression-syntax": _swap("event.amount > 3", "event.amount >"),
    "expression-unsafe": _swap("event.amount > 3", "event.amount.__class__ > 3"),
    "expression-type": _swap("ctx.tries + 1", "ctx.tries + 'one'"),
}
"""Error class (the slug the compiler reports) → a chart with that error."""
