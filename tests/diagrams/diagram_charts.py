"""Charts for the diagram tests: every kind of state, awkward names, targetless transitions."""

from __future__ import annotations

import re
from html import unescape

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

# Targetless transitions in every place a state can be drawn: a simple state (a line
# inside its box), a compound and a parallel state (a note beside the box), the chart's
# compound root (a note on its initial marker); guards, effects and text that means
# something to Mermaid (`:`, `;`, `%%`, `end note`). Final states at the top, in a
# compound state and in a region.
TARGETLESS = """
    statechart: targetless
    context:
      n: {type: integer, default: 0}
      s: {type: string, default: ""}
    events:
      TICK: {}
      "a:b;c": {}
      POKE: {}
      "50%%": {}
      RESET: {}
      GO: {}
    initial: idle
    on:
      RESET: {do: [{assign: {n: 0}}]}
    states:
      idle:
        on:
          TICK: {do: [{assign: {n: ctx.n + 1}}]}
          "a:b;c": {if: "ctx.s == 'x'", else: NOPE, do: [{assign: {s: "'y'"}}]}
          GO: busy
      busy:
        initial: inner
        on:
          POKE: {if: "ctx.s != 'end note'", else: ENDED, do: [{emit: {type: Poked}}]}
        states:
          inner:
            on: {GO: both}
          both:
            parallel: true
            on:
              "50%%": {if: ctx.n > 1, else: SMALL}
            states:
              left:
                initial: l1
                states:
                  l1: {on: {TICK: l2}}
                  l2: {final: true}
              right:
                initial: r1
                states:
                  r1: {}
            done: finished
          finished: {final: true}
        done: over
      over: {final: true}
"""

# A chart whose root is parallel, with a targetless transition on the root.
PARALLEL_ROOT = """
    statechart: parallel_root
    events: {PING: {}, GO: {}}
    parallel: true
    on:
      PING: {do: [{emit: {type: Pong}}]}
    states:
      a:
        initial: a1
        states:
          a1: {on: {GO: a2}}
          a2: {final: true}
      b:
        initial: b1
        states:
          b1: {}
"""


def sink() -> Diagram:
    """The diagram model of KITCHEN_SINK."""
    return extract(chart_of(KITCHEN_SINK))


def odd() -> Diagram:
    """The diagram model of ODD_NAMES."""
    return extract(chart_of(ODD_NAMES))


def targetless() -> Diagram:
    """The diagram model of TARGETLESS."""
    return extract(chart_of(TARGETLESS))


def parallel_root() -> Diagram:
    """The diagram model of PARALLEL_ROOT."""
    return extract(chart_of(PARALLEL_ROOT))


# Each kind of timer: a literal (`after 15m`), a `delay:` expression with a guard, an
# `at:` deadline, alternatives of one timer, a targetless timer, a timer on the root, and
# `send` (delayed, at a deadline, undelayed) and `cancel` effects.
TIMED = """
    statechart: timed
    context:
      lease_until_ms: {type: integer, default: 0}
      backoff_ms: {type: integer, default: 1000}
      budget: {type: integer, default: 3}
    events:
      Start: {}
      Remind: {n: integer}
    guards:
      retry_budget_left: {if: ctx.budget > 0, else: BUDGET_EXHAUSTED}
    initial: processing
    after:
      7d: {do: [{emit: {type: StillAlive}}]}
    states:
      processing:
        entry: [{send: {event: Remind, payload: {n: 1}, delay: 30s, id: nudge}}]
        exit: [{cancel: nudge}]
        on: {Start: running}
        after:
          15m: {to: closed, do: [{emit: {type: PaymentTimedOut}}]}
      running:
        after:
          - at: ctx.lease_until_ms
            to: waiting_retry
            do: [{send: {event: Remind, payload: {n: 2}, at: ctx.lease_until_ms + 60000}}]
      waiting_retry:
        after:
          - delay: ctx.backoff_ms
            to: processing
            guard: retry_budget_left
            do: [{send: {event: Start}}]
          - delay: ctx.backoff_ms
            to: closed
          - {delay: 1h30m, do: [{assign: {budget: ctx.budget - 1}}]}
      closed: {final: true}
"""


def timed() -> Diagram:
    """The diagram model of TIMED."""
    return extract(chart_of(TIMED))


def label_lines(line: str) -> list[str]:
    """The text lines of the label on one DOT line (a table row each), tags left out."""
    found = re.search(r"label=<(.*)>[,\]]", line)
    assert found is not None, line
    rows = re.findall(r"<TD[^>]*>(.*?)</TD>", found.group(1))
    return [unescape(re.sub(r"<[^>]+>", "", row)) for row in rows]


def labels(dot: str) -> list[str]:
    """Every edge label of the DOT text, its lines joined with spaces."""
    return [" ".join(label_lines(x)) for x in dot.splitlines() if " -> " in x and "label=<" in x]
