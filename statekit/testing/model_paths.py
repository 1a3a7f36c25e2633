"""`statekit.testing.paths(chart)`: the covering paths of `statekit paths`, as data.

    import pytest, statekit
    from statekit.testing import paths

    CHART = statekit.load("machines/payment.yaml")

    @pytest.mark.parametrize("path", paths(CHART), ids=lambda p: p.id)
    def test_implementation_agrees(path):
        impl = MyPayment()
        for step in path.steps:
            assert impl.handle(step.event) == (step.status, step.reason)

Together the paths fire every selectable transition and reach every rejection
class of the chart (model-based testing: see docs/testing.md). Each step names
the event, the classification the chart gives it (status and reason), the
configuration it leads to, the data-guard outcomes it takes (`assuming`), and
a payload that makes the chart take it (`payload_fields`, checked by replaying
the path through `Chart.send`; None where the bounded search found none).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from statekit.analysis.explorer import explore
from statekit.analysis.paths import PathStep, RejectionClass, covering_paths
from statekit.compiler.ir import CompiledChart
from statekit.engine.chart import Chart


@dataclass(frozen=True, slots=True)
class CoveringPath:
    """One event sequence from the initial state: its steps (each a `PathStep`: event,
    assuming, status, reason, configuration, transitions) and what it covers."""

    id: str
    steps: tuple[PathStep, ...]
    transitions: tuple[int, ...]
    rejections: tuple[RejectionClass, ...]

    @property
    def events(self) -> tuple[str, ...]:
        """The event names, in order."""
        return tuple(step.event for step in self.steps if step.event is not None)


class PathsError(ValueError):
    """The chart given to `paths` does not compile."""


def paths(chart: Chart | CompiledChart | str | Path) -> tuple[CoveringPath, ...]:
    """The covering paths of `chart` (a `Chart`, its IR, or a chart file), shortest first.

    `id` is a stable test id (`3-PAY-REFUND`: its position and events). Raises
    `PathsError` for a file that does not compile.
    """
    if isinstance(chart, Chart):
        ir = chart.ir
    elif isinstance(chart, CompiledChart):
        ir = chart
    else:
        from statekit.compiler.pipeline import compile_file

        compiled = compile_file(chart)
        if compiled.chart is None:
            first = compiled.errors[0] if compiled.errors else None
            raise PathsError(f"{chart}: does not compile" + (f": {first}" if first else ""))
        ir = compiled.chart
    suite = covering_paths(explore(ir))
    out = []
    for number, path in enumerate(suite.paths, 1):
        steps = tuple(step for step in path.steps if step.event is not None)
        name = "-".join([str(number), *(step.event or "" for step in steps)]) or str(number)
        out.append(CoveringPath(name, steps, path.transitions, path.rejections))
    return tuple(out)
