"""Building the engine's frozen evidence records fast.

A frozen dataclass's generated `__init__` sets each field through
`object.__setattr__` by name; on the evidence path (one `Microstep` per
microstep, one `ContextChange` per assignment, built every time the runner
reads `Result.evidence`) that was most of the cost of the evidence. `maker`
returns a constructor that fills the slots through their descriptors instead:
the same object (`==`, `hash`, `repr` and pickling see only the fields), built
in about half the time. Only for slotted frozen dataclasses without
`__post_init__` or field conversions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def maker(cls: type[T]) -> Callable[..., T]:
    """A positional constructor of `cls` for its first fields; the remaining fields take
    their defaults (every field after the given ones must have a plain default)."""
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    setters = tuple(cls.__dict__[f.name].__set__ for f in fields)
    defaults = tuple(
        (i, f.default) for i, f in enumerate(fields) if f.default is not dataclasses.MISSING
    )
    new = object.__new__

    def make(*values: Any) -> T:
        obj = new(cls)
        for setter, value in zip(setters, values, strict=False):
            setter(obj, value)
        for i, default in defaults:
            if i >= len(values):
                setters[i](obj, default)
        return obj

    return make
