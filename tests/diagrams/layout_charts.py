"""Chart shapes whose Mermaid text is hard to lay out: composites inside parallel regions
(mermaid-js/mermaid#4052) and deep nesting with edges across levels."""

from __future__ import annotations

# A parallel state whose regions hold composite states with edges into and out of them:
# at the region's top level (`busy`), deeper (`deep`, `deepest` inside `busy`), a history
# state inside one (drawn to its composite), a transition that re-enters one, a
# composite as a region's initial state, and a parallel state inside a region (`inner`)
# whose own region holds a composite with edges (`l2`). `calm` is a parallel state with
# no edge on a composite inside it: it keeps Mermaid's region separators.
COMPOSITES_IN_REGIONS = """
    statechart: composites_in_regions
    events: {GO: {}, BACK: {}, DIG: {}, UP: {}, DONE: {}, RESET: {}, CALM: {}}
    initial: inactive
    states:
      inactive:
        on: {GO: active, CALM: calm}
      active:
        parallel: true
        on: {RESET: inactive}
        states:
          work:
            initial: idle
            states:
              idle:
                on: {GO: busy, BACK: busy.again}
              busy:
                initial: first
                on:
                  DONE: idle
                  RESET: busy
                states:
                  again: {history: shallow}
                  first:
                    on: {DIG: deep}
                  deep:
                    initial: deeper
                    on: {UP: first}
                    states:
                      deeper:
                        on: {UP: deepest}
                      deepest:
                        initial: bottom
                        states:
                          bottom: {on: {GO: top}}
                          top: {final: true}
          watch:
            initial: inner
            states:
              inner:
                parallel: true
                states:
                  left:
                    initial: l1
                    states:
                      l1: {on: {DIG: l2}}
                      l2:
                        initial: l2a
                        on: {BACK: l1}
                        states:
                          l2a: {}
                  right:
                    initial: r1
                    states:
                      r1: {}
      calm:
        parallel: true
        on: {RESET: inactive}
        states:
          north:
            initial: n1
            states:
              n1: {on: {GO: n2}}
              n2: {}
          south:
            initial: nested
            states:
              nested:
                initial: s1
                states:
                  s1: {}
"""

# Six levels of compound states, edges from the deepest level to the top and between
# levels, a final state at the bottom and a targetless transition in the middle.
DEEP_NESTING = """
    statechart: deep_nesting
    context:
      n: {type: integer, default: 0}
    events: {DOWN: {}, UP: {}, OUT: {}, TICK: {}}
    initial: l1
    states:
      top:
        on: {DOWN: l1.l2.l3.l4.l5.l6}
      l1:
        initial: l2
        states:
          l2:
            initial: l3
            on: {OUT: top}
            states:
              l3:
                initial: l4
                on: {TICK: {do: [{assign: {n: ctx.n + 1}}]}}
                states:
                  l4:
                    initial: l5
                    states:
                      l5:
                        initial: l6
                        on: {UP: l2}
                        states:
                          l6:
                            on: {UP: l6done, OUT: top}
                          l6done: {final: true}
"""

# The user trial's order chart, cut down to the edges of its Mermaid drawing that ran
# into each other: `CANCEL [not active('placed.fulfilment.shipped')]` (a word wider than
# Mermaid's 200-pixel label, clipped) beside `CANCEL (from packing)` between the same two
# boxes, a guard with a path longer than a label line, and a field name longer than a
# line with nothing to break it after (cut).
LONG_GUARD = """
    statechart: long_guard
    events: {PLACE: {}, PICKED: {}, BOXED: {}, SHIPPED: {}, CANCEL: {}}
    context:
      scansremainingbeforewegiveup: {type: integer, default: 3}
    initial: review
    states:
      review:
        on: {PLACE: placed}
      placed:
        parallel: true
        on:
          CANCEL: {to: cancelled, if: not active('placed.fulfilment.shipped')}
        states:
          payment:
            initial: authorizing_with_a_very_long_name_indeed
            states:
              authorizing_with_a_very_long_name_indeed: {}
          fulfilment:
            initial: picking
            states:
              picking:
                on: {PICKED: fulfilment.packing}
              packing:
                initial: boxing
                on: {CANCEL: cancelled}
                states:
                  boxing:
                    on:
                      BOXED:
                        to: fulfilment.shipped
                        if: active('placed.payment.authorizing_with_a_very_long_name_indeed')
              shipped:
                on:
                  SHIPPED: {to: fulfilment.shipped, if: ctx.scansremainingbeforewegiveup > 0}
      cancelled:
        final: true
"""
