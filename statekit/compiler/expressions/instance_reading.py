"""How `instance.id` reaches the compiled expressions: the ID of the instance a step is
computed for, set per step as the clock reading is (`statekit.compiler.expressions.clock`).

The engine's step does not otherwise know which instance it steps: `Chart.initialize`,
`Chart.send` and `Chart.fire` take `instance_id=` and set it here for the duration of a
step of a chart that reads `instance.id` (charts that never read it pay nothing). The
Simulator, the FamilySimulator and the runner give it. `instance.id` read where no ID
was given is an evaluation error (an `EVALUATION_ERROR` rejection, or `error.execution`
in a chart with `on_evaluation_error: raise`), nothing changed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

STEP_INSTANCE: ContextVar[str | None] = ContextVar("statekit_step_instance", default=None)
"""The ID of the instance whose step is being computed, or None (not given, or outside
a step)."""

INSTANCE_NAME = "instance"
"""`instance.id` in the expression language."""


class NoInstanceId(Exception):
    """`instance.id` was read where the step was given no instance ID."""

    def __init__(self) -> None:
        super().__init__("`instance.id` was read but the step was given no instance ID")


def read_instance_id() -> str:
    """The ID of the instance being stepped; `NoInstanceId` when the step has none."""
    found = STEP_INSTANCE.get()
    if found is None:
        raise NoInstanceId()
    return found


@contextmanager
def instance_reading(instance_id: str | None) -> Iterator[None]:
    """`instance.id` reads `instance_id` inside the block (None: it cannot be read)."""
    token = STEP_INSTANCE.set(instance_id)
    try:
        yield
    finally:
        STEP_INSTANCE.reset(token)
