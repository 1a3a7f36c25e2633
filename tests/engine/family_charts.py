"""Charts for the family tests: the example order family, and small parents and children
that exercise one rule each."""

from __future__ import annotations

import functools
from pathlib import Path

import statekit
from statekit.engine.chart import Chart
from statekit.testing import FamilySimulator

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "order_family"


@functools.cache
def _order_family() -> tuple[Chart, ...]:
    names = ("order", "payment", "shipment")
    return tuple(statekit.load(EXAMPLES / f"{name}.yaml") for name in names)


def order_family() -> list[Chart]:
    """The example family: order, payment, shipment (compiled once)."""
    return list(_order_family())


def started_order(order_id: str = "o-1", total: int = 30) -> FamilySimulator:
    """A simulator holding one order family, started."""
    sim = FamilySimulator(order_family())
    sim.start("order", order_id, {"order_id": order_id, "total": total})
    return sim


def load_text(folder: Path, text: str) -> Chart:
    """The chart of this YAML text (saved in `folder` under its `statechart:` name)."""
    name = text.split("statechart:", 1)[1].split()[0]
    path = folder / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return statekit.load(path)


# A parent that talks to its child and back: `poke` makes it send `ping` to the child,
# which answers `pong` to its parent; `echo` makes the child send `pong` when it gets
# `ping` (forever: the ping-pong the bound stops) once the parent says `loop`.
TALKER = """\
statechart: talker
context:
  pongs: {type: integer, default: 0}
  looping: {type: boolean, default: false}
events:
  poke: {}
  loop: {}
  pong: {n: integer}
  restart: {}
  twice: {}
  note: {}
initial: talking
states:
  talking:
    invoke: {id: echo, chart: echo, input: {step: 2}, output: {seen: integer}}
    on:
      poke: {do: [{send: {to: echo, event: ping, payload: {n: ctx.pongs}}}]}
      loop:
        do:
          - assign: {looping: true}
          - send: {to: echo, event: ping, payload: {n: 0}}
      pong:
        do:
          - assign: {pongs: ctx.pongs + 1}
          - send: {to: echo, event: ping, payload: {n: event.n}}
        if: ctx.looping
        else: NOT_LOOPING
      restart: talking
      twice:
        do:
          - send: {to: echo, event: ping, payload: {n: 10}}
          - send: {event: note}
          - send: {to: echo, event: ping, payload: {n: 20}}
      note: {}
      done.invoke.echo: {}
      error.invoke.echo: {}
"""

ECHO = """\
statechart: echo
context:
  step: {type: integer, default: 1}
  seen: {type: integer, default: 0}
events:
  ping: {n: integer}
  crash: {}
  stop: {}
initial: listening
states:
  listening:
    on:
      ping:
        do:
          - assign: {seen: ctx.seen + 1}
          - send: {to: parent, event: pong, payload: {n: event.n + ctx.step}}
      crash: {do: [{assign: {seen: 1 // (ctx.seen - ctx.seen)}}]}
      stop: stopped
    after:
      1m: {do: [{send: {to: parent, event: pong, payload: {n: -1}}}]}
  stopped: {final: true, output: {seen: ctx.seen}}
"""
