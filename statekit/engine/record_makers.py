"""Building frozen records fast: the engine's messages and the runner's rows.

A frozen dataclass's generated `__init__` sets each field through
`object.__setattr__` by name. For the engine's outbox messages (one
`EmittedMessage` per message a step emits) and for the runner's rows (about
ten records per event: `rows.positional`) that was most of the cost of
building them. `maker(cls)` returns a positional constructor
that builds the same object (`==`, `hash`, `repr` and pickling see only the
fields) faster, one of two ways:

- for a record whose slots are exactly its fields and whose only base is
  `object`, as an instance of a *mutable twin*: a plain slotted dataclass with
  the same fields in the same order (so the same memory layout), whose
  `__init__` the standard library generates and which stores each field with
  one specialised attribute store; the object's class is then set to the
  frozen record, which Python allows between two classes of the same layout.
  Checked on a probe when the maker is made. About a third of the time of the
  record's own constructor for a dozen fields (0.7 µs against 2.4 µs);
- for any other record (a base class, a weak-reference slot, a record the probe
  does not confirm), through the slot descriptors, the loop run in C: about
  three quarters of the time.

Only for slotted frozen dataclasses without `__post_init__` or field
conversions (their checks would be skipped).
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import MISSING
from itertools import repeat
from operator import call
from typing import Any, TypeVar

from statekit.engine.evidence import EmittedMessage

T = TypeVar("T")

# runs an iterator to its end, keeping nothing
_drain: Callable[[Iterable[Any]], None] = deque(maxlen=0).extend


def maker(cls: type[T]) -> Callable[..., T]:
    """A positional constructor of `cls` for its first fields; the remaining fields take
    their defaults (every field after the given ones must have a plain default)."""
    twin = _mutable_twin(cls)
    if twin is not None:
        build = twin

        def make_through_twin(*values: Any) -> T:
            obj: Any = build(*values)
            obj.__class__ = cls  # same layout: the frozen record, its slots already set
            return obj  # type: ignore[no-any-return]

        return make_through_twin
    return _descriptor_maker(cls)


def _mutable_twin(cls: type[Any]) -> type[Any] | None:
    """A mutable slotted dataclass with the fields of the frozen record `cls`, in order and
    with their defaults, whose instances may become instances of `cls` (see the module
    docstring); None when `cls` is not such a record or a probe built through the twin
    is not equal to the one `cls` builds."""
    fields = dataclasses.fields(cls)
    names = tuple(f.name for f in fields)
    if (
        cls.__bases__ != (object,)
        or cls.__dict__.get("__slots__") != names
        or hasattr(cls, "__post_init__")
        or any(not f.init or f.kw_only is True for f in fields)
    ):
        return None
    specs: list[tuple[str, Any] | tuple[str, Any, Any]] = []
    for f in fields:
        if f.default is not MISSING:
            specs.append((f.name, f.type, dataclasses.field(default=f.default)))
        elif f.default_factory is not MISSING:
            specs.append((f.name, f.type, dataclasses.field(default_factory=f.default_factory)))
        else:
            specs.append((f.name, f.type))
    twin = dataclasses.make_dataclass(
        f"{cls.__name__}Twin", specs, slots=True, eq=False, repr=False, match_args=False
    )
    twin.__module__ = cls.__module__
    probe_values = tuple(object() for _ in fields)  # distinct values: a swapped slot shows
    try:
        probe = twin(*probe_values)
        probe.__class__ = cls
        same = probe == cls(*probe_values) and type(probe) is cls
    except (TypeError, ValueError):  # layouts Python will not swap between
        return None
    return twin if same else None


def _slot(cls: type[Any], name: str) -> Any:
    """The slot descriptor of the field `name`, defined by `cls` or a base of it."""
    return next(k.__dict__[name] for k in cls.__mro__ if name in k.__dict__)


def _descriptor_maker(cls: type[T]) -> Callable[..., T]:
    """`maker` through the slot descriptors, for records no twin can stand in for."""
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    setters = tuple(_slot(cls, f.name).__set__ for f in fields)
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


make_message: Callable[[str, str, Mapping[str, Any]], EmittedMessage] = maker(EmittedMessage)
"""A fast `EmittedMessage(message_id, type, payload)` (one per message a step emits)."""
