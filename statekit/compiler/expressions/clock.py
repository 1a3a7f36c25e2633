"""How `now` reaches the compiled expressions: the step's clock reading, set per step.

Evaluators keep the signature `(ctx, payload, active_ids)`: the reading of the
clock is not a fourth argument that every closure of every chart would pass on,
but a context variable (`contextvars`: per thread and per asyncio task) that the
engine sets for the duration of a step of a chart that reads `now`
(`statekit.engine.clock_steps`). Charts that never read `now` never set it and pay
nothing; the step stays a function of its inputs, since the value is the step's
`now_ms` argument. bench/clock_steps.py measures what it costs (see docs/semantics.md).

`now` read where no reading was set raises `NoClockReading` (the engine then
answers the step REJECTED `CLOCK_REQUIRED`, nothing changed).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar


class ClockReading:
    """The clock reading of one step (None: the step was given none), and whether `now` was
    read without one (`missed`)."""

    __slots__ = ("missed", "value")

    def __init__(self, value: int | None) -> None:
        self.value = value
        self.missed = False


STEP_CLOCK: ContextVar[ClockReading | None] = ContextVar("statekit_step_clock", default=None)
"""The clock reading of the step being computed, or None outside one."""


class NoClockReading(Exception):
    """`now` was read where the step has no clock reading."""

    def __init__(self) -> None:
        super().__init__("`now` was read but the step has no clock reading (now_ms)")


def read_clock() -> int:
    """The step's clock reading; `NoClockReading` (noted as `missed`) when it has none."""
    reading = STEP_CLOCK.get()
    if reading is not None:
        if reading.value is not None:
            return reading.value
        reading.missed = True
    raise NoClockReading()


@contextmanager
def clock_reading(now_ms: int | None) -> Iterator[ClockReading]:
    """`now` reads `now_ms` inside the block (None: `now` cannot be read, and the reading
    yielded notes an attempt)."""
    reading = ClockReading(now_ms)
    token = STEP_CLOCK.set(reading)
    try:
        yield reading
    finally:
        STEP_CLOCK.reset(token)
