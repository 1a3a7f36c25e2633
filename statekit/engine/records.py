"""Building the engine's frozen evidence records fast.

A frozen dataclass's generated `__init__` sets each field through
`object.__setattr__` by name; on the evidence path (one `Microstep` per
microstep, one `ContextChange` per assignment, built every time the runner
reads `Result.evidence`, and one `EmittedMessage` per message a step emits) that was
most of the cost of the evidence. `maker`
returns a constructor that fills the slots through their descriptors instead:
the same object (`==`, `hash`, `repr` and pickling see only the fields), built
in about half the time. Only for slotted frozen dataclasses without
`__post_init__` or field conversions.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import MISSING
from itertools import repeat
from operator import call
from typing import Any, TypeVar

from statekit.engine.evidence import ContextChange, EmittedMessage, FiredTransition, Microstep

T = TypeVar("T")

# runs an iterator to its end, keeping nothing
_drain: Callable[[Iterable[Any]], None] = deque(maxlen=0).extend


def maker(cls: type[T]) -> Callable[..., T]:
    """A positional constructor of `cls` for its first fields; the remaining fields take
    their defaults (every field after the given ones must have a plain default)."""
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    setters = tuple(cls.__dict__[f.name].__set__ for f in fields)
    # the setters and values of the defaults to set after `k` given values, per `k`
    # (looked up once per call, rather than every default field tested against the count:
    # a record of many defaulted fields, `Outcome`'s, was built in twice the time)
    after: list[tuple[tuple[Any, ...], tuple[Any, ...]]] = []
    for given in range(len(fields) + 1):
        rest = [(setters[i], f.default) for i, f in enumerate(fields[given:], given)]
        defaulted = [(setter, value) for setter, value in rest if value is not MISSING]
        after.append((tuple(s for s, _ in defaulted), tuple(v for _, v in defaulted)))
    tails = tuple(after)
    new = object.__new__

    def make(*values: Any) -> T:
        obj = new(cls)
        # every slot set through its descriptor, the loop run in C (`map` of
        # `operator.call`, drained): a quarter faster than a Python loop over the fields
        _drain(map(call, setters, repeat(obj), values))
        tail, defaults = tails[len(values)]
        if tail:
            _drain(map(call, tail, repeat(obj), defaults))
        return obj

    return make


def _microstep_maker() -> Callable[..., Microstep]:
    """`Microstep(event, payload, transitions, exited, entered, changes, emitted, raised)`
    with the timer logs empty, its slots set one by one (unrolled: this runs once per
    microstep whenever evidence is read). Falls back to `maker` if the record's fields
    are not the ones this function knows."""
    names = tuple(f.name for f in dataclasses.fields(Microstep))
    known = (
        "event",
        "payload",
        "transitions",
        "exited",
        "entered",
        "changes",
        "emitted",
        "raised",
        "armed",
        "cancelled",
        "sent",
    )
    if names != known:
        return maker(Microstep)
    s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10 = (Microstep.__dict__[n].__set__ for n in names)
    new = object.__new__

    def make(
        event: str | None,
        payload: Mapping[str, Any],
        transitions: tuple[FiredTransition, ...],
        exited: tuple[str, ...],
        entered: tuple[str, ...],
        changes: tuple[ContextChange, ...],
        emitted: tuple[str, ...],
        raised: tuple[str, ...],
    ) -> Microstep:
        obj = new(Microstep)
        s0(obj, event)
        s1(obj, payload)
        s2(obj, transitions)
        s3(obj, exited)
        s4(obj, entered)
        s5(obj, changes)
        s6(obj, emitted)
        s7(obj, raised)
        s8(obj, ())
        s9(obj, ())
        s10(obj, ())
        return obj

    return make


def _three_field_maker(cls: type[T], known: tuple[str, str, str]) -> Callable[[Any, Any, Any], T]:
    """`cls(a, b, c)` for a record of three fields named `known`, its slots set one by
    one (see `_microstep_maker`); `maker(cls)` if its fields are not those."""
    names = tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]
    if names != known:
        return maker(cls)
    s0, s1, s2 = (cls.__dict__[n].__set__ for n in names)
    new = object.__new__

    def make(a: Any, b: Any, c: Any) -> T:
        obj = new(cls)
        s0(obj, a)
        s1(obj, b)
        s2(obj, c)
        return obj

    return make


def _timer_logs_setter() -> Callable[
    [Microstep, tuple[str, ...], tuple[str, ...], tuple[str, ...]], None
]:
    """Sets a `Microstep`'s timer logs (armed, cancelled, sent) on a record `make_microstep`
    has just built, before anyone sees it (a `dataclasses.replace` would build it again)."""
    set_armed, set_cancelled, set_sent = (
        Microstep.__dict__[n].__set__ for n in ("armed", "cancelled", "sent")
    )

    def set_logs(
        record: Microstep,
        armed: tuple[str, ...],
        cancelled: tuple[str, ...],
        sent: tuple[str, ...],
    ) -> None:
        set_armed(record, armed)
        set_cancelled(record, cancelled)
        set_sent(record, sent)

    return set_logs


make_microstep = _microstep_maker()
"""A fast `Microstep` constructor: the eight fields before the timer logs, positionally."""
make_change = _three_field_maker(ContextChange, ("field", "old", "new"))
"""A fast `ContextChange(field, old, new)`."""
make_message = _three_field_maker(EmittedMessage, ("message_id", "type", "payload"))
"""A fast `EmittedMessage(message_id, type, payload)` (one per message a step emits)."""
set_timer_logs = _timer_logs_setter()
"""Fill the timer logs of a `Microstep` just built by `make_microstep` (never a shared one)."""
