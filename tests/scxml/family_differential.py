"""A family (a chart and the charts it invokes) in statekit's `FamilySimulator` against
python-statemachine running the exported document, whose children are inline `<invoke>`s.

psm runs each invoked child on a thread of its own; after every action the test
waits for every child's thread (`PsmMachine.settle`), so what the children sent the
parent has been processed, as statekit's family step processes it before it returns.
What psm lets a caller observe is the parent: after the start and each event sent
to the parent, the two agree on whether the event took a transition, the parent's
active leaf states and its context. Time stands still on both sides (psm's frozen
clock, the simulator never advanced): no timer of the family fires.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from differential import values
from hypothesis import strategies as st
from psm_machine import PsmMachine

from statekit.engine.chart import Chart
from statekit.engine.family_events import from_outside
from statekit.engine.result import Status
from statekit.scxml.export_document import ScxmlExport
from statekit.testing import FamilySimulator

ROOT_ID = "w3c"


@dataclass
class FamilyPair:
    """One family in both engines; the root compared after every action."""

    root: Chart
    exported: ScxmlExport
    family: FamilySimulator
    psm: PsmMachine
    log: list[str]

    @classmethod
    def start(cls, charts: list[Chart], exported: ScxmlExport) -> FamilyPair:
        family = FamilySimulator(charts)
        family.start(charts[0].name, ROOT_ID)
        psm = PsmMachine(exported.text)
        psm.settle()
        pair = cls(charts[0], exported, family, psm, [])
        pair.check("start")
        return pair

    def send(self, event: str, payload: dict[str, Any]) -> None:
        step = self.family.send(event, payload, to=ROOT_ID)
        applied = step.result is not None and step.result.status is Status.APPLIED
        psm_applied = self.psm.send(self.exported.names.events[event], payload)
        self.psm.settle()
        self.log.append(f"{event} {payload} -> {step.reason or 'APPLIED'}")
        assert applied == psm_applied, self._trail(
            f"statekit {step.reason or 'APPLIED'}, psm took "
            f"{'a' if psm_applied else 'no'} transition"
        )
        self.check(event)

    def check(self, action: str) -> None:
        names, ir = self.exported.names, self.root.ir
        state = self.family.member(ROOT_ID).state
        leaves = frozenset(names.state_ids[ir.path_index[p]] for p in state.leaves)
        assert leaves == self.psm.leaves(), self._trail(
            f"after {action}: statekit {sorted(leaves)}, psm {sorted(self.psm.leaves())}"
        )
        for field, value in state.context.items():
            theirs = self.psm.data(names.data[field])
            assert (type(theirs), theirs) == (type(value), value), self._trail(
                f"after {action}: ctx.{field} is {value!r} in statekit, {theirs!r} in psm"
            )

    def _trail(self, message: str) -> str:
        return message + "\n  " + "\n  ".join(self.log)


def run_family_stream(pair: FamilyPair, data: st.DataObject, steps: int) -> None:
    """`steps` events to the root drawn by hypothesis, compared after each; only the
    events a caller may send (a child's done/error and reply events come from the
    family, and statekit refuses them from outside, `FAMILY_EVENT`)."""
    events = sorted(e for e in pair.root.ir.events if from_outside(pair.root, e) is None)
    for _ in range(steps):
        choice = data.draw(st.sampled_from(events))
        fields = pair.root.ir.events[choice].fields
        pair.send(choice, {f.name: data.draw(values(f.type)) for f in fields})
