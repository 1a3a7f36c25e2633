"""How `now` reaches the compiled expressions: the step's clock reading, set per step.

Evaluators keep the signature `(ctx, payload, active_ids)`: the reading of the
clock is not a fourth argument that every closure of every chart would pass on,
but a context variable (`contextvars`: per thread and per asyncio task) that the
engine sets for the duration of a step of a chart that reads `now`
(`statekit.engine.clock_steps`). Charts that never read `now` never set it and pay
nothing; the step stays a function of its inputs, since the value is the step's
`now_ms` argument. bench/engine_bench.py measures the figure (see docs/semantics.md).

`now` read where no reading was set raises `NoClockReading`; the engine refuses
such a step before it starts (`CLOCK_REQUIRED`), so this is only met by code that
calls an evaluator itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

STEP_CLOCK: ContextVar[int | None] = ContextVar("statekit_step_clock", default=None)
"""The clock reading (epoch ms) of the step being computed, or None outside one."""


class NoClockReading(Exception):
    """`now` was read where the step has no clock reading."""

    def __init__(self) -> None:
        super().__init__("`now` was read but the step has no clock reading (now_ms)")


def read_clock() -> int:
    """The step's clock reading; `NoClockReading` when none is set."""
    value = STEP_CLOCK.get()
    if value is None:
        raise NoClockReading()
    return value


@contextmanager
def clock_reading(now_ms: int | None) -> Iterator[None]:
    """`now` reads `now_ms` inside the block (None: `now` cannot be read)."""
    token = STEP_CLOCK.set(now_ms)
    try:
        yield
    finally:
        STEP_CLOCK.reset(token)
