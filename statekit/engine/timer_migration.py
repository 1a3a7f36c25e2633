"""How a migration maps an instance's armed `after` timers into a newer chart version.

A state's timer is identified by its timer event's name (`after(7d)@entitlement.grace`,
or `after(grace)@entitlement.grace` for a timer named with `id:`). An armed timer
maps, in order of precedence:

- by the newer chart's `migrations: timers:` entry for its old name: `drop`
  disarms it; `{to, due}` makes it the timer `to` (default: its own name, moved
  with its state's rename) and keeps its due time (`due: keep`, the default) or
  recomputes it (`due: recompute`: the time it was armed, its due time minus the
  delay it was armed with, plus the new delay; an `at:` timer takes its
  expression's value over the migrated context);
- else to its own name, moved with its state's rename (`moved_timer_id`), its
  due time kept.

A timer keeps its generation. It takes the delay of the timer it becomes (a
literal's value; a `delay:` expression's value when recomputed), since a stored
timer must have its declaration's delay. A timer that maps to no timer of the
newer chart, or whose time cannot be recomputed (armed with a deadline, so the
time it was armed is not known), strands the instance (`Stranded`, why in its
message). Sent timers (`send` with a delay, no owner) keep their ID.

The states a migration enters (`statekit.engine.state_completion`) arm their `after`
timers as entering them would (`arm_entered`), after the mapped ones, in entry order
and declaration order, each with the next generation: a literal delay, a `delay:`
or `at:` expression's value over the migrated context, due at the migration's clock
reading plus the delay (None without a reading, as a step without one arms it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from statekit.compiler.ir import TimerDecl, TimerKind
from statekit.compiler.migration_ir import MigrationDecl, TimerDue
from statekit.engine.chart import Chart
from statekit.engine.errors import EvaluationError
from statekit.engine.evaluation import computed_value
from statekit.engine.timers import clamped_due
from statekit.engine.validation import EMPTY


class Stranded(Exception):
    """The state cannot be expressed in the newer chart; the message says why."""


def moved_timer_id(timer_id: str, owner: str | None, rename: Mapping[str, str]) -> str:
    """The ID of an armed timer once its owning state `owner` is renamed by `rename`: an
    `after` timer's ID ends with `@<owner path>` (`compiler.model.timers.timer_name`),
    so it moves with its state; a sent timer (no owner) keeps its ID."""
    suffix = f"@{owner}"
    if owner is None or owner not in rename or not timer_id.endswith(suffix):
        return timer_id
    return f"{timer_id[: -len(suffix)]}@{rename[owner]}"


@dataclass(frozen=True, slots=True)
class MappedTimers:
    """The armed timers in the newer chart's terms (state JSON entries), and what moved.

    `renamed` old ID → new ID; `retimed` the (new) IDs whose delay or due time changed;
    `dropped` the old IDs disarmed; `declared` what a `migrations: timers:` entry did to
    each timer it mapped (old ID → `{to, due}`, or `drop`)."""

    entries: tuple[dict[str, Any], ...]
    renamed: Mapping[str, str]
    retimed: frozenset[str]
    dropped: tuple[str, ...]
    declared: Mapping[str, Any]


def map_timers(
    entries: list[dict[str, Any]],
    new: Chart,
    declared: MigrationDecl | None,
    context: Mapping[str, Any],
) -> MappedTimers:
    """The armed timers `entries` (a state's JSON) mapped into `new` (see the module
    docstring); `context` is the migrated context; `Stranded` when one does not map."""
    rename: Mapping[str, str] = declared.rename if declared is not None else {}
    ways = declared.timers if declared is not None else {}
    out: list[dict[str, Any]] = []
    renamed: dict[str, str] = {}
    retimed: set[str] = set()
    dropped: list[str] = []
    applied: dict[str, Any] = {}
    for entry in entries:
        owner = entry.get("owner")
        if owner is None:  # a sent timer: its ID is the send's
            out.append(entry)
            continue
        old_id = entry["id"]
        way = ways.get(old_id)
        if way is not None and way.due is TimerDue.DROP:
            dropped.append(old_id)
            applied[old_id] = "drop"
            continue
        moved = moved_timer_id(old_id, owner, rename)
        new_id = way.to if way is not None and way.to is not None else moved
        decl = new.ir.timer(new_id)
        if decl is None:
            raise Stranded(_missing(old_id, new_id, new, mapped=way is not None))
        due = way.due if way is not None else TimerDue.KEEP
        timed = _timed(entry, decl, due, context, new)
        mapped = {
            **entry,
            "id": new_id,
            "event": new_id,
            "owner": new.ir.states[decl.state].path,
            **timed,
        }
        if way is not None:
            applied[old_id] = {"to": new_id, "due": way.due.value}
        if new_id != old_id:
            renamed[old_id] = new_id
        elif mapped != entry:
            retimed.add(new_id)
        out.append(mapped)
    return MappedTimers(
        entries=tuple(out),
        renamed=renamed,
        retimed=frozenset(retimed),
        dropped=tuple(dropped),
        declared=applied,
    )


def arm_entered(
    entered: Sequence[str], new: Chart, context: Mapping[str, Any], generation: int,
    now_ms: int | None,
) -> tuple[dict[str, Any], ...]:  # fmt: skip
    """The timers the states `entered` (paths of `new`, in entry order) arm, as state JSON
    entries, generations following `generation` (see the module docstring)."""
    out: list[dict[str, Any]] = []
    ir = new.ir
    for path in entered:
        for timer_index in ir.state(path).timers:
            decl = ir.timers[timer_index]
            value = decl.delay_ms if decl.delay_ms is not None else _value(decl, context)
            delay: int | None
            due: int | None
            if decl.kind is TimerKind.AT:
                delay, due = None, value
            else:
                delay, due = value, None if now_ms is None else clamped_due(now_ms + value)
            generation += 1
            out.append(
                {
                    "id": decl.name,
                    "event": decl.name,
                    "payload": {},
                    "delay_ms": delay,
                    "due_ms": due,
                    "generation": generation,
                    "owner": path,
                }
            )
    return tuple(out)


def _missing(old_id: str, new_id: str, new: Chart, *, mapped: bool) -> str:
    where = f"chart {new.name!r} version {new.version}"
    if mapped:
        return f"the migration maps timer {old_id!r} to {new_id!r}, which {where} does not declare"
    moved = f" (moved with its state to {new_id!r})" if new_id != old_id else ""
    return (
        f"the instance has timer {old_id!r} armed{moved}, which {where} does not declare "
        "(map it under the migration's `timers:`: to a timer, or `drop`)"
    )


def _timed(
    entry: Mapping[str, Any],
    decl: TimerDecl,
    due: TimerDue,
    context: Mapping[str, Any],
    new: Chart,
) -> dict[str, Any]:
    """The delay and due time of a timer that becomes `decl` (a paused one stays paused:
    its time left moves by the change of delay when recomputed, else stays)."""
    old_delay: int | None = entry["delay_ms"]
    old_due: int | None = entry["due_ms"]
    left: int | None = entry.get("paused_ms")
    if left is not None:
        new_delay = None if decl.kind is TimerKind.AT else decl.delay_ms
        if new_delay is None and decl.kind is not TimerKind.AT:
            new_delay = _value(decl, context)
        if due is TimerDue.RECOMPUTE and old_delay is not None and new_delay is not None:
            left = clamped_due(left - old_delay + new_delay)
        return {"delay_ms": new_delay, "due_ms": None, "paused_ms": left}
    if decl.kind is TimerKind.AT:
        if due is TimerDue.RECOMPUTE:
            return {"delay_ms": None, "due_ms": _value(decl, context)}
        if old_due is None:
            raise Stranded(
                f"timer {decl.name!r} of chart {new.name!r} version {new.version} is a "
                f"deadline, and timer {entry['id']!r} was armed without a due time"
            )
        return {"delay_ms": None, "due_ms": old_due}
    if due is TimerDue.KEEP:
        delay = decl.delay_ms if decl.delay_ms is not None else old_delay
        if delay is None:
            delay = _value(decl, context)
        return {"delay_ms": delay, "due_ms": old_due}
    new_delay = decl.delay_ms if decl.delay_ms is not None else _value(decl, context)
    if old_delay is None:
        raise Stranded(
            f"timer {entry['id']!r} was armed with a deadline: the time it was armed is not "
            "known, so its due time cannot be recomputed (`due: keep` it, or `drop` it)"
        )
    recomputed = None if old_due is None else clamped_due(old_due - old_delay + new_delay)
    return {"delay_ms": new_delay, "due_ms": recomputed}


def _value(decl: TimerDecl, context: Mapping[str, Any]) -> int:
    """A `delay:` or `at:` expression's value over the migrated context."""
    assert decl.expression is not None
    try:
        value = computed_value(f"timer {decl.name}", decl.expression, context, EMPTY, frozenset())
    except EvaluationError as exc:
        raise Stranded(str(exc)) from exc
    assert isinstance(value, int)
    return value
