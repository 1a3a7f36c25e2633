"""Charts for the diagram tests: one with every kind of state, one with awkward names."""

from __future__ import annotations

from chart_helpers import chart_of

from statekit.diagrams.model import Diagram, extract

# Every drawing feature: a compound state with entry/exit and a targetless
# transition, a parallel state with two regions, deep and shallow history,
# a final state, `always` and `done`, a transition on a compound state, a
# multi-target transition and a 100-character label.
KITCHEN_SINK = """
    statechart: sink
    description: Every kind of state.
    context:
      n: {type: integer, default: 0}
    events:
      GO: {}
      BACK: {}
      PING: {}
      LONG: {}
      SPLIT: {}
      STOP: {}
    guards:
      small: {if: ctx.n < 10, else: TOO_BIG}
      a_rather_long_guard_name_that_goes_on: {if: ctx.n >= 0, else: NEGATIVE}
    initial: idle
    states:
      idle:
        on:
          GO: work
          LONG:
            to: work.par
            guard: [small, a_rather_long_guard_name_that_goes_on]
            do:
              - assign: {n: ctx.n + 1}
              - emit: {type: SomethingRatherLongHappenedToTheCounterAndEveryoneShouldKnowIt}
        reject:
          BACK: NOT_STARTED
          "*": IDLE
      work:
        initial: step
        entry:
          - assign: {n: 0}
        on:
          PING: {do: [{assign: {n: ctx.n + 1}}]}
          BACK: idle
        done: finished
        states:
          again: {history: deep}
          step:
            on:
              GO: {to: par, guard: small}
              SPLIT: {to: [left.b, right.d]}
          par:
            parallel: true
            always: {to: end, if: ctx.n > 5}
            states:
              left:
                initial: a
                states:
                  a: {on: {GO: b}}
                  b: {on: {GO: a}}
              right:
                initial: c
                states:
                  c: {on: {GO: d}}
                  d: {}
          end: {final: true}
      finished:
        on:
          STOP: done
          BACK: work.again
        already: [PING]
      done: {final: true}
    invariants:
      bounded:
        assert: ctx.n <= 100
      par_has_both:
        when: par
        require: [left, right]
"""

# Names that are legal in the DSL but mean something in DOT, HTML, Mermaid or Markdown.
ODD_NAMES = """
    statechart: odd-names
    events:
      'say"hi"': {}
      x-y: {}
      "a:b;c": {}
      "100%%": {}
      "#35;": {}
      "<b>&amp;|`": {}
    initial: 'q"uote'
    states:
      'q"uote':
        on:
          'say"hi"': café
          x-y: 'a-b'
          "a:b;c": "<i>"
          "100%%": '{x}'
          "#35;": 'q"uote'
          "<b>&amp;|`": café
      café: {}
      a-b: {}
      "<i>": {}
      "{x}": {}
"""


def sink() -> Diagram:
    """The diagram model of KITCHEN_SINK."""
    return extract(chart_of(KITCHEN_SINK))


def odd() -> Diagram:
    """The diagram model of ODD_NAMES."""
    return extract(chart_of(ODD_NAMES))
