"""The door chart both coverage-plugin test modules run suites against (importable as
`coverage_charts`): three events, two transitions out of `closed`, two rejections."""

DOOR = """
statechart: door
events: {OPEN: {}, CLOSE: {}, LOCK: {}}
initial: closed
states:
  closed:
    on: {OPEN: open, LOCK: locked}
  open:
    on: {CLOSE: closed}
    reject: {LOCK: DOOR_OPEN}
  locked:
    reject: {OPEN: LOCKED}
"""
