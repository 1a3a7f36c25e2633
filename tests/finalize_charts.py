"""The charts of the `finalize:` tests (the Simulator's and the durable runner's): a
collector whose left region invokes a probe with a finalize, and whose right region
invokes another probe without one."""

from __future__ import annotations

PARENT = """\
statechart: collector
context:
  last: {type: integer, nullable: true, default: 0}
  ref: {type: string, nullable: true, default: none-yet}
  finalized: {type: integer, default: 0}
events:
  reading: {value: integer}
  poke: {}
initial: collecting
states:
  collecting:
    parallel: true
    states:
      left:
        initial: waiting
        states:
          waiting:
            invoke:
              id: probe
              chart: probe
              output: {ref: string}
              finalize:
                - assign: {last: event.value, ref: event.ref, finalized: ctx.finalized + 1}
            on:
              reading:
                - {to: high, if: "ctx.last == 42"}
                - {description: a low reading stays}
              done.invoke.probe: finished
              error.invoke.probe: finished
          high: {}
          finished: {}
      right:
        initial: idle
        states:
          idle:
            invoke: {id: other, chart: probe}
            on:
              poke: {to: idle, do: [{send: {to: other, event: measure, payload: {value: 42}}}]}
              done.invoke.other: idle
              error.invoke.other: idle
"""

PROBE = """\
statechart: probe
context:
  ref: {type: string, default: R-1}
events:
  measure: {value: integer}
  quit: {}
  ignored: {}
initial: measuring
states:
  measuring:
    on:
      measure: {do: [{send: {to: parent, event: reading, payload: {value: event.value}}}]}
      quit: gone
  gone:
    final: true
    output: {ref: ctx.ref}
"""
