"""`statekit diff`: the behavioural differences between two versions of a chart (pure).

`diff_charts(old, new)` compares two compiled charts and returns a
`ChartDiff`: states added, removed and renamed (by the migration `new`
declares from `old`'s version); transitions added, removed and changed (by
their source state, trigger and position among the source's transitions of
that trigger: targets, guards, effects); entry and exit effects; events and
their payloads; context fields; invariants; every reachable (configuration,
event) of `old` whose answer changed (old answers → new answers, the
configuration mapped by the declared renames), from the two explorations;
and the reachable configurations of `old` that `new` strands, exactly as
`statekit migrate` would (`statekit.analysis.stranding`: a state it lacks, an
armed timer it does not declare or map), each with a path of events from the
start and the timers armed there; and those whose instances migrating moves
into states `old` lacks (a region added, entered by default or as `enter:`
says), with the states entered. Nothing here reads a file.

`behaviour_changed` is whether any difference was found (a digest that
differs with nothing else found is reported as such, so no change goes
unseen); `exit_code` is 1 when behaviour changed and the version did not.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from statekit.analysis.effect_words import effects_in_words
from statekit.analysis.explain import Row, explain
from statekit.analysis.exploration import Exploration
from statekit.analysis.explorer import explore
from statekit.analysis.named_changes import named_changes
from statekit.analysis.stranding import (
    EnteredConfiguration,
    StrandedConfiguration,
    map_configurations,
)
from statekit.compiler.canonical import canonical_json
from statekit.compiler.invariant_ir import ExpressionInvariant, Invariant
from statekit.compiler.ir import (
    CompiledChart,
    FieldDecl,
    Transition,
)
from statekit.compiler.migration_ir import MigrationDecl, TimerDue
from statekit.compiler.model.timers import timer_spec
from statekit.compiler.serialize import chart_to_json
from statekit.engine.chart import Chart
from statekit.engine.timer_migration import moved_timer_id

MAX_CLASSIFICATION_CHANGES = 500
"""At most this many changed (configuration, event) answers are listed (the count is
always exact)."""


@dataclass(frozen=True, slots=True)
class Change:
    """One difference: its kind (`state-added`, `transition-changed`, ...), what it is
    about, and the old and new answer in words (None where there is none)."""

    kind: str
    subject: str
    old: str | None = None
    new: str | None = None

    def text(self) -> str:
        """`kind subject: old → new`."""
        if self.old is None and self.new is None:
            return f"{self.kind} {self.subject}"
        return f"{self.kind} {self.subject}: {self.old or '-'} → {self.new or '-'}"

    def to_data(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"kind": self.kind, "subject": self.subject, "old": self.old, "new": self.new}


@dataclass(frozen=True, slots=True)
class ChartDiff:
    """What changed from `old` to `new` (see the module docstring)."""

    name: str
    old_version: int
    new_version: int
    changes: tuple[Change, ...]
    stranded: tuple[StrandedConfiguration, ...]
    classification_changes: int = 0
    limits: tuple[str, ...] = field(default_factory=tuple)
    entered: tuple[EnteredConfiguration, ...] = ()
    """The reachable configurations of `old` whose instances migrating enters states
    `old` lacks (a region added), with the states entered."""

    @property
    def behaviour_changed(self) -> bool:
        """Whether any behavioural difference was found."""
        return bool(self.changes or self.stranded)

    @property
    def version_bumped(self) -> bool:
        """Whether the new chart has a higher version."""
        return self.new_version > self.old_version

    @property
    def exit_code(self) -> int:
        """0 when behaviour is unchanged or the version was bumped, else 1 (for CI)."""
        return 1 if self.behaviour_changed and not self.version_bumped else 0

    def summary(self) -> str:
        """One line naming what changed (for messages that refuse a changed chart)."""
        if not self.behaviour_changed:
            return "no behavioural difference"
        shown = [c.text() for c in self.changes[:3]]
        more = len(self.changes) - len(shown) + len(self.stranded)
        return "; ".join(shown) + (f"; and {more} more (statekit diff)" if more > 0 else "")

    def to_data(self) -> dict[str, Any]:
        """JSON-ready form (`statekit diff --format json`)."""
        return {
            "chart": self.name,
            "old_version": self.old_version,
            "new_version": self.new_version,
            "behaviour_changed": self.behaviour_changed,
            "version_bumped": self.version_bumped,
            "changes": [c.to_data() for c in self.changes],
            "classification_changes": self.classification_changes,
            "stranded": [s.to_data() for s in self.stranded],
            "entered": [e.to_data() for e in self.entered],
            "limits": list(self.limits),
        }

    def lines(self) -> list[str]:
        """The text form (`statekit diff`)."""
        head = f"chart {self.name!r}: version {self.old_version} → {self.new_version}"
        if not self.behaviour_changed:
            return [head, "no behavioural difference"]
        out = [head, *(f"  {c.text()}" for c in self.changes)]
        listed = sum(c.kind == "answer-changed" for c in self.changes)
        if self.classification_changes > listed:
            out.append(f"  ... {self.classification_changes - listed} more changed answers")
        for s in self.stranded:
            path = " → ".join(s.path) if s.path else "(the initial configuration)"
            armed = f" (timers armed: {', '.join(s.timers)})" if s.timers else ""
            out.append(
                f"  stranded {{{', '.join(s.configuration)}}}{armed}: {s.why}; reached by {path}"
            )
        for e in self.entered:
            path = " → ".join(e.path) if e.path else "(the initial configuration)"
            out.append(
                f"  migrating {{{', '.join(e.configuration)}}} enters {', '.join(e.entered)}; "
                f"reached by {path}"
            )
        out.extend(f"  (analysis limit: {limit})" for limit in self.limits)
        return out


def diff_charts(
    old: CompiledChart,
    new: CompiledChart,
    *,
    old_exploration: Exploration | None = None,
    new_exploration: Exploration | None = None,
) -> ChartDiff:
    """The differences from `old` to `new` (explored here unless explorations are given)."""
    declared = new.migration_from(old.version)
    rename: Mapping[str, str] = declared.rename if declared is not None else {}
    changes: list[Change] = []
    changes.extend(_state_changes(old, new, rename))
    changes.extend(_transition_changes(old, new, rename))
    changes.extend(_named_timer_changes(old, new, declared))
    changes.extend(_field_changes("context", old.context, new.context))
    changes.extend(_event_changes(old, new))
    changes.extend(_invariant_changes(old, new))
    changes.extend(Change(*c) for c in named_changes(old, new))
    old_x = old_exploration or explore(old)
    new_x = new_exploration or explore(new)
    answers, count = _answer_changes(old_x, new_x, rename)
    changes.extend(answers)
    mapped = map_configurations(old_x, Chart(new))
    stranded = mapped.stranded
    limits = tuple(limit.message for limit in (*old_x.limits, *new_x.limits))
    if (
        not changes
        and not stranded
        and old.digest != new.digest
        and not _same_but_version(old, new)
    ):
        changes.append(Change("chart-changed", "digest", old.digest, new.digest))
    return ChartDiff(
        name=new.name,
        old_version=old.version,
        new_version=new.version,
        changes=tuple(changes),
        stranded=stranded,
        classification_changes=count,
        limits=limits,
        entered=mapped.entered,
    )


def _same_but_version(old: CompiledChart, new: CompiledChart) -> bool:
    """Whether the charts differ only in their version and declared migrations."""
    a, b = chart_to_json(old, positions=False), chart_to_json(new, positions=False)
    for data in (a, b):
        data.pop("version", None)
        data.pop("migrations", None)
    return canonical_json(a) == canonical_json(b)


def _state_changes(
    old: CompiledChart, new: CompiledChart, rename: Mapping[str, str]
) -> Iterator[Change]:
    old_paths = {s.path for s in old.states if s.path}
    new_paths = {s.path for s in new.states if s.path}
    renamed_to = {rename[p] for p in old_paths if p in rename}
    for path in sorted(old_paths):
        if path in rename and rename[path] != path:
            yield Change("state-renamed", path, path, rename[path])
        elif path not in new_paths:
            yield Change("state-removed", path)
    for path in sorted(new_paths - old_paths - renamed_to):
        yield Change("state-added", path)
    new_index = new.path_index
    for s in old.states:
        target = rename.get(s.path, s.path)
        if not s.path or target not in new_index:
            continue
        t = new.states[new_index[target]]
        if s.kind is not t.kind:
            yield Change("state-kind-changed", target, s.kind.value, t.kind.value)
        for part in ("entry", "exit"):
            before = effects_in_words(getattr(s, part))
            after = effects_in_words(getattr(t, part))
            if before != after:
                yield Change(f"{part}-changed", target, before or "nothing", after or "nothing")


def _trigger(t: Transition) -> str:
    return t.event if t.event is not None else t.kind.value


def _transitions(
    chart: CompiledChart, rename: Mapping[str, str]
) -> dict[tuple[str, str, int], str]:
    """Each transition by (source path, trigger, position), described in words (old
    paths renamed to new ones when `rename` is given)."""
    out: dict[tuple[str, str, int], str] = {}
    counts: dict[tuple[str, str], int] = {}
    states = chart.states
    for t in chart.transitions:
        source = states[t.source].path or "(root)"
        source = rename.get(source, source)
        key = (source, _trigger(t))
        position = counts.get(key, 0)
        counts[key] = position + 1
        targets = [rename.get(states[i].path, states[i].path) for i in t.targets]
        guards = [g.expression.source for g in t.guards]
        words = "→ " + (", ".join(targets) if targets else "(internal)")
        if guards:
            words += " if " + " and ".join(guards)
        effects = effects_in_words(t.effects)
        if effects:
            words += f" do {effects}"
        out[(source, key[1], position)] = words
    return out


def _transition_changes(
    old: CompiledChart, new: CompiledChart, rename: Mapping[str, str]
) -> Iterator[Change]:
    before, after = _transitions(old, rename), _transitions(new, {})
    for key in sorted(before.keys() | after.keys()):
        subject = f"{key[0]} on {key[1]}" + (f" #{key[2] + 1}" if key[2] else "")
        if key not in after:
            yield Change("transition-removed", subject, before[key], None)
        elif key not in before:
            yield Change("transition-added", subject, None, after[key])
        elif before[key] != after[key]:
            yield Change("transition-changed", subject, before[key], after[key])


def _named_timer_changes(
    old: CompiledChart, new: CompiledChart, declared: MigrationDecl | None
) -> Iterator[Change]:
    """A named timer (`id:`) whose delay or deadline changed: its event keeps its name, so
    no transition or answer changes, but its instances' timing does. Each says what
    migrating does to a timer already armed (`statekit.engine.timer_migration`): its due
    time is kept unless the migration's `timers:` says `due: recompute`. (An unnamed
    timer's event carries its delay, so re-timing it removes one timer and adds another.)"""
    rename = declared.rename if declared is not None else {}
    ways = declared.timers if declared is not None else {}
    for timer in old.timers:
        way = ways.get(timer.name)
        if timer.label is None or (way is not None and way.due is TimerDue.DROP):
            continue
        path = old.states[timer.state].path
        new_name = moved_timer_id(timer.name, path, rename)
        if way is not None and way.to is not None:
            new_name = way.to
        now = new.timer(new_name)
        if now is None:  # gone: `stranded` says what becomes of its instances
            continue
        was_spec = f"{timer.kind.value} {timer_spec(timer, path)}"
        now_spec = f"{now.kind.value} {timer_spec(now, new.states[now.state].path)}"
        if was_spec != now_spec:
            due = "recomputed" if way is not None and way.due is TimerDue.RECOMPUTE else "kept"
            armed = f"{now_spec} (a timer already armed: its due time is {due})"
            yield Change("timer-retimed", new_name, was_spec, armed)


def _field(decl: FieldDecl) -> str:
    words = canonical_json(decl.type.to_json())
    if decl.has_default:
        words += f" default {canonical_json(decl.default)}"
    return words


def _field_changes(
    what: str, old: Mapping[str, FieldDecl], new: Mapping[str, FieldDecl]
) -> Iterator[Change]:
    for name in sorted(old.keys() | new.keys()):
        if name not in new:
            yield Change(f"{what}-removed", name, _field(old[name]), None)
        elif name not in old:
            yield Change(f"{what}-added", name, None, _field(new[name]))
        elif _field(old[name]) != _field(new[name]):
            yield Change(f"{what}-changed", name, _field(old[name]), _field(new[name]))


def _event_changes(old: CompiledChart, new: CompiledChart) -> Iterator[Change]:
    for name in sorted(old.events.keys() | new.events.keys()):
        if name not in new.events:
            yield Change("event-removed", name)
        elif name not in old.events:
            yield Change("event-added", name)
        else:
            a = {f.name: f for f in old.events[name].fields}
            b = {f.name: f for f in new.events[name].fields}
            yield from _field_changes(f"payload-{name}", a, b)


def _invariant(chart: CompiledChart, inv: Invariant) -> str:
    if isinstance(inv, ExpressionInvariant):
        return f"assert {inv.expression.source}"
    paths = chart.states
    parts = []
    for part in ("when", "require", "forbid"):
        ids = getattr(inv, part)
        if ids:
            parts.append(f"{part} {', '.join(paths[i].path for i in ids)}")
    return "; ".join(parts)


def _invariant_changes(old: CompiledChart, new: CompiledChart) -> Iterator[Change]:
    a = {i.name: _invariant(old, i) for i in old.invariants}
    b = {i.name: _invariant(new, i) for i in new.invariants}
    for name in sorted(a.keys() | b.keys()):
        if name not in b:
            yield Change("invariant-removed", name, a[name], None)
        elif name not in a:
            yield Change("invariant-added", name, None, b[name])
        elif a[name] != b[name]:
            yield Change("invariant-changed", name, a[name], b[name])


def _answers(row: Row | None, event: str, rename: Mapping[str, str]) -> str:
    if row is None or event not in row.verdicts:
        return "(not classified)"
    texts = []
    for verdict in row.verdicts[event]:
        if verdict.target is not None:
            texts.append("→ " + ", ".join(rename.get(p, p) for p in verdict.target))
        else:
            texts.append(verdict.text())
    return " | ".join(sorted(set(texts)))


def _answer_changes(
    old: Exploration, new: Exploration, rename: Mapping[str, str]
) -> tuple[list[Change], int]:
    old_rows = explain(old).rows
    new_rows = {frozenset(r.states): r for r in explain(new).rows}
    changes: list[Change] = []
    count = 0
    for row in old_rows:
        mapped = frozenset(rename.get(p, p) for p in row.states)
        other = new_rows.get(mapped)
        if other is None:
            continue  # stranded or unreachable in new: reported as such
        for event in sorted(row.verdicts.keys() | other.verdicts.keys()):
            before, after = _answers(row, event, rename), _answers(other, event, {})
            if before != after:
                count += 1
                if count <= MAX_CLASSIFICATION_CHANGES:
                    subject = "{" + ", ".join(sorted(mapped)) + "} + " + event
                    changes.append(Change("answer-changed", subject, before, after))
    return changes, count
