"""Data-guard choices for one replay of a macrostep, as the explorer enumerates them.

The explorer replays a macrostep depth first, once per sequence of choices:
`ScriptedGuardOracle` answers each guard on unknown data from the script of
that replay (extending it with True), records the `Assumption` it made, and
stops choosing past `MAX_CHOICES` (every further data guard then fails).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from statekit.analysis.guards import UNKNOWN, Assumption, ThreeValued
from statekit.compiler.ir import GuardCheck, Transition

MAX_CHOICES = 20
"""Data-guard decisions one macrostep may need before its enumeration stops."""


class ScriptedGuardOracle:
    """Answers guards for one replay of a macrostep: exactly when the three-valued
    value is known, else from `script` (extending it with True).

    A guard asked again with the same data gets the same answer without a new
    choice: the memo key holds the guard's tree, its relevant active states
    and the current values of the context fields it reads (an abstract
    `assign` stores a new `AbstractValue`, so a changed field changes the key);
    guards that read the event are memoised per payload object. `known`
    seeds the memo with what the start configuration's stability implies.
    """

    __slots__ = ("assumptions", "cut", "event_memo", "memo", "payload", "pos", "script", "three")

    def __init__(self, script: list[bool], three: ThreeValued, known: dict[object, bool]) -> None:
        self.script = script
        self.three = three
        self.pos = 0
        self.cut = False
        self.assumptions: list[Assumption] = []
        self.payload: object = None
        self.memo = dict(known)
        self.event_memo: dict[object, bool] = {}

    def __call__(
        self,
        check: GuardCheck,
        transition: Transition,
        context: Mapping[str, Any],
        payload: Mapping[str, Any],
        active: frozenset[int],
    ) -> bool:
        value, key, info = self.three.lookup(check.expression, active)
        if value is not UNKNOWN:
            return value
        data_key = (key, tuple([context[f] for f in info.fields]))
        if info.reads_event:
            if payload is not self.payload:
                self.payload = payload
                self.event_memo = {}
            memo = self.event_memo
        else:
            memo = self.memo
        found = memo.get(data_key)
        if found is not None:
            return found
        pos = self.pos
        if pos < len(self.script):
            answer = self.script[pos]
            self.pos = pos + 1
        elif pos >= MAX_CHOICES:  # past the bound every further decision is "fails"
            answer = False
            self.cut = True
        else:
            answer = True
            self.script.append(True)
            self.pos = pos + 1
        memo[data_key] = answer
        self.assumptions.append(Assumption(check, transition.id, answer))
        return answer
