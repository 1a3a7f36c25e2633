"""`record_makers.maker`: for every frozen record of the package, the fast constructor
builds the record its own constructor builds (equal, same class, hash, repr, pickled
form, still frozen), through the mutable twin where one can stand in and through the
slot descriptors where none can."""

from __future__ import annotations

import dataclasses
import importlib
import pickle
import pkgutil
from dataclasses import FrozenInstanceError, dataclass, field
from typing import Any

import pytest

import statekit
from statekit.engine import record_makers
from statekit.engine.record_makers import maker


def _frozen_records() -> list[type[Any]]:
    """Every slotted frozen dataclass defined in the package (each module imported)."""
    found: dict[str, type[Any]] = {}
    for module in pkgutil.walk_packages(statekit.__path__, "statekit."):
        if module.name.startswith("statekit.lsp") or module.name.endswith(".__main__"):
            continue  # the editor server (imported only with pygls), the command line
        loaded = importlib.import_module(module.name)
        for value in vars(loaded).values():
            if (
                isinstance(value, type)
                and dataclasses.is_dataclass(value)
                and value.__module__ == loaded.__name__
                and value.__dataclass_params__.frozen  # type: ignore[attr-defined]
                and "__slots__" in value.__dict__
            ):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return [found[name] for name in sorted(found)]


RECORDS = _frozen_records()


def _values(record: type[Any]) -> tuple[Any, ...]:
    """Distinct, hashable, picklable values, one per field (a swapped slot would show)."""
    return tuple(f"value of {f.name}" for f in dataclasses.fields(record))


def test_the_package_has_records_and_most_take_the_twin() -> None:
    twinned = [r for r in RECORDS if record_makers._mutable_twin(r) is not None]
    assert len(RECORDS) > 30
    assert len(twinned) > len(RECORDS) // 2  # the per-event ones among them (below)


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: f"{r.__module__}.{r.__qualname__}")
def test_a_record_built_fast_is_the_record_its_constructor_builds(record: type[Any]) -> None:
    fields = [f for f in dataclasses.fields(record) if f.init]
    if len(fields) != len(dataclasses.fields(record)) or hasattr(record, "__post_init__"):
        assert record_makers._mutable_twin(record) is None
        return  # not a record `maker` is for (its docstring says which)
    values = _values(record)
    expected = record(*values)
    routes = [maker(record), record_makers._descriptor_maker(record)]
    for make in routes:
        built = make(*values)
        assert type(built) is record
        assert built == expected and repr(built) == repr(expected)
        if record.__hash__ is not None:
            assert hash(built) == hash(expected)
        if _pickles(expected):
            assert pickle.loads(pickle.dumps(built)) == expected
        if fields:
            with pytest.raises(FrozenInstanceError):
                setattr(built, fields[0].name, "changed")
        assert [getattr(built, f.name) for f in fields] == list(values)


def _pickles(value: object) -> bool:
    """Whether `value` (built by its own constructor) survives pickling (a record whose
    methods call `super()` without arguments does not, under slots, on Python 3.11)."""
    try:
        return bool(pickle.loads(pickle.dumps(value)) == value)
    except TypeError:
        return False


@dataclass(frozen=True, slots=True)
class _Defaults:
    a: int
    b: tuple[int, ...] = ()
    c: list[int] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Checked:
    a: int

    def __post_init__(self) -> None:
        if self.a < 0:
            raise ValueError("negative")


@dataclass(frozen=True, slots=True, eq=False)
class _Identity:
    a: int


@dataclass(frozen=True, slots=True)
class _Base:
    a: int


@dataclass(frozen=True, slots=True)
class _Derived(_Base):
    b: int


@dataclass(frozen=True, slots=True, weakref_slot=True)
class _Weak:
    a: int


def test_fields_left_out_take_their_defaults_and_factories_give_new_values() -> None:
    make = maker(_Defaults)
    assert record_makers._mutable_twin(_Defaults) is not None
    one, two = make(1), make(1)
    assert one == _Defaults(1) and one.b == () and one.c == [] and one.c is not two.c
    assert make(1, (2,), [3]) == _Defaults(1, (2,), [3])


@pytest.mark.parametrize(
    ("record", "values"),
    [(_Checked, (1,)), (_Identity, (1,)), (_Derived, (1, 2)), (_Weak, (1,))],
    ids=["post_init", "eq_false", "a_base_class", "weakref_slot"],
)
def test_a_record_no_twin_can_stand_in_for_is_built_through_its_descriptors(
    record: type[Any], values: tuple[Any, ...]
) -> None:
    assert record_makers._mutable_twin(record) is None
    built = maker(record)(*values)
    assert type(built) is record
    assert [getattr(built, f.name) for f in dataclasses.fields(record)] == list(values)
    with pytest.raises(FrozenInstanceError):
        built.a = 5
