"""Charts shared by the model tests."""

NESTED = """
statechart: nested
events:
  GO: {}
  BACK: {}
  FIX: {n: integer}
initial: a
states:
  a:
    initial: b
    states:
      b:
        initial: c
        states:
          c: {on: {GO: d}}
          d: {on: {BACK: a.b.c}}
      h: {history: deep}
    on:
      FIX: {to: p, if: event.n > 0, else: NOT_POSITIVE}
  p:
    parallel: true
    states:
      left:
        initial: x
        states: {x: {on: {GO: y}}, y: {final: true}}
      right:
        initial: x
        states: {x: {}, z: {}}
    on:
      BACK: a.h
    done: out
  out: {final: true}
"""
