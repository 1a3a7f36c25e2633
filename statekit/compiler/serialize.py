"""The IR as canonical JSON (`statekit compile`) and the chart digest.

The digest hashes the canonical form without source positions, file name,
descriptions, producers and race decisions: editing comments, layout or
documentation does not make a new chart version, while any change to
behaviour does.
"""

from __future__ import annotations

import hashlib
from typing import Any

# re-exported for code written against this module before compiler/canonical.py owned it
from statekit.compiler.canonical import canonical_json as canonical_json
from statekit.compiler.diagnostics import SourceSpan
from statekit.compiler.invariant_ir import ExpressionInvariant, Invariant
from statekit.compiler.invocations import (
    Invocation,
    MessageTarget,
    ToAddress,
    ToChild,
    ToParent,
)
from statekit.compiler.ir import (
    Assign,
    ClassifiedEvent,
    CompiledChart,
    Conditional,
    Effect,
    Emit,
    FieldDecl,
    Foreach,
    GuardCheck,
    Pause,
    Raise,
    Resume,
    Send,
    StateNode,
    TimerDecl,
    Transition,
)
from statekit.compiler.migration_ir import MigrationDecl
from statekit.compiler.race_ir import RaceSide

IR_FORMAT_VERSION = 1


def _span(span: SourceSpan) -> list[int]:
    return [span.line, span.column, span.end_line, span.end_column]


class _Writer:
    def __init__(self, positions: bool) -> None:
        self.positions = positions

    def node(
        self, out: dict[str, Any], span: SourceSpan, description: str | None = None
    ) -> dict[str, Any]:
        if self.positions:
            out["span"] = _span(span)
            if description is not None:
                out["description"] = description
        return out

    def effect(self, effect: Effect) -> dict[str, Any]:
        if isinstance(effect, Assign):
            body: dict[str, Any] = {"assign": [[k, e.to_json()] for k, e in effect.assignments]}
        elif isinstance(effect, Emit):
            body = {"emit": effect.type, "payload": [[k, e.to_json()] for k, e in effect.payload]}
        elif isinstance(effect, Raise):
            body = {"raise": effect.event, "payload": [[k, e.to_json()] for k, e in effect.payload]}
        elif isinstance(effect, Send):
            body = {"send": effect.event, "payload": [[k, e.to_json()] for k, e in effect.payload]}
            if effect.delay_ms is not None:
                body["delay_ms"] = effect.delay_ms
            if effect.delay is not None:
                body["delay"] = effect.delay.to_json()
            if effect.at is not None:
                body["at"] = effect.at.to_json()
            if effect.id is not None:
                body["id"] = effect.id
            if effect.to is not None:  # absent without one: earlier charts keep their digests
                body["to"] = self.target(effect.to)
        elif isinstance(effect, Pause):
            body = {"pause": effect.name}
        elif isinstance(effect, Resume):
            body = {"resume": effect.name}
        elif isinstance(effect, Foreach):
            body = {"foreach": effect.array.to_json(), "item": effect.item}
            if effect.index is not None:
                body["index"] = effect.index
            body["do"] = [self.effect(e) for e in effect.effects]
        elif isinstance(effect, Conditional):
            body = {
                "if": [
                    {
                        "cond": self.node(
                            {"expression": b.check.expression.to_json()}, b.check.span
                        ),
                        "then": [self.effect(e) for e in b.effects],
                    }
                    for b in effect.branches
                ],
                "else": [self.effect(e) for e in effect.otherwise],
            }
        else:
            body = {"cancel": effect.id}
        return self.node(body, effect.span)

    def target(self, target: MessageTarget) -> dict[str, Any]:
        if isinstance(target, ToParent):
            body: dict[str, Any] = {"parent": True}
        elif isinstance(target, ToChild):
            body = {"invoke": target.invoke_id}
        elif isinstance(target, ToAddress):
            body = {"address": target.address.to_json()}
        else:
            body = {"chart": target.chart, "instance": target.instance.to_json()}
            if target.reply is not None:
                body["reply"] = target.reply
        return self.node(body, target.span)

    def invocation(self, i: Invocation) -> dict[str, Any]:
        body: dict[str, Any] = {
            "id": i.id,
            "chart": i.chart,
            "version": i.version,
            "input": [[k, e.to_json()] for k, e in i.input],
        }
        if i.finalize:  # absent without one: earlier charts keep their digests
            body["finalize"] = [self.effect(e) for e in i.finalize]
        if i.choice is not None:  # absent for a fixed chart: earlier charts keep their digests
            body["choice"] = {
                "by": i.choice.by.to_json(),
                "cases": [[c.value, c.chart] for c in i.choice.cases],
            }
        if i.forward:  # absent unless set: earlier charts keep their digests
            body["forward"] = True
        return self.node(body, i.span, i.description)

    def timer(self, t: TimerDecl) -> dict[str, Any]:
        body: dict[str, Any] = {"id": t.id, "name": t.name, "state": t.state, "kind": t.kind.value}
        if t.delay_ms is not None:
            body["delay_ms"] = t.delay_ms
        if t.expression is not None:
            body["expression"] = t.expression.to_json()
        if t.label is not None:  # absent when unnamed: earlier charts keep their digests
            body["label"] = t.label
        return self.node(body, t.span)

    def classified(self, entry: ClassifiedEvent) -> dict[str, Any]:
        out: dict[str, Any] = {"event": entry.event}
        if entry.reason is not None:
            out["reason"] = entry.reason
        return self.node(out, entry.span)

    def state(self, s: StateNode) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": s.id,
            "name": s.name,
            "path": s.path,
            "kind": s.kind.value,
            "parent": s.parent,
            "children": list(s.children),
            "history_children": list(s.history_children),
            "depth": s.depth,
            "ancestors": list(s.ancestors),
            "last_descendant": s.last_descendant,
            "initial": list(s.initial),
            "default_entry": list(s.default_entry),
            "history": s.history.value if s.history else None,
            "history_default": list(s.history_default),
            "entry": [self.effect(e) for e in s.entry],
            "exit": [self.effect(e) for e in s.exit],
            "transitions": list(s.transitions),
            "already": [self.classified(c) for c in s.already],
            "reject": [self.classified(c) for c in s.reject],
        }
        if s.timers:  # absent without timers: charts without time keep their digests
            out["timers"] = list(s.timers)
        if s.invocations:  # absent without invocations: earlier charts keep their digests
            out["invoke"] = [self.invocation(i) for i in s.invocations]
        if s.output:
            out["output"] = [[k, e.to_json()] for k, e in s.output]
        return self.node(out, s.span, s.description)

    def guard(self, g: GuardCheck) -> dict[str, Any]:
        return self.node(
            {"name": g.name, "reason": g.reason, "expression": g.expression.to_json()}, g.span
        )

    def transition(self, t: Transition) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": t.id,
            "source": t.source,
            "kind": t.kind.value,
            "event": t.event,
            "targets": list(t.targets),
            "guards": [self.guard(g) for g in t.guards],
            "effects": [self.effect(e) for e in t.effects],
            "targets_history": t.targets_history,
            "domain": t.domain,
            "entry_set": None if t.entry_set is None else list(t.entry_set),
        }
        return self.node(out, t.span, t.description)

    def field(self, f: FieldDecl) -> dict[str, Any]:
        out: dict[str, Any] = {"name": f.name, **f.type.to_json(), "secret": f.secret}
        if f.has_default:
            out["default"] = f.default
        return self.node(out, f.span, f.description)

    def invariant(self, inv: Invariant) -> dict[str, Any]:
        if isinstance(inv, ExpressionInvariant):
            body: dict[str, Any] = {"name": inv.name, "assert": inv.expression.to_json()}
        else:
            body = {
                "name": inv.name,
                "when": list(inv.when),
                "require": list(inv.require),
                "forbid": list(inv.forbid),
            }
        return self.node(body, inv.span, inv.description)

    def migration(self, m: MigrationDecl) -> dict[str, Any]:
        body = {
            "from": m.from_version,
            "rename": dict(sorted(m.rename.items())),
            "context": {v.field: v.source for v in m.context},
        }
        if m.timers:  # absent when none: earlier charts keep their digests
            body["timers"] = {
                old: {"to": t.to, "due": t.due.value} for old, t in sorted(m.timers.items())
            }
        if m.enter:  # absent when none: earlier charts keep their digests
            body["enter"] = dict(sorted(m.enter.items()))
        return self.node(body, m.span, m.description)


def chart_to_json(chart: CompiledChart, *, positions: bool = True) -> dict[str, Any]:
    """The compiled chart as JSON-ready data; `positions=False` gives the digest's form."""
    w = _Writer(positions)
    out: dict[str, Any] = {
        "format": IR_FORMAT_VERSION,
        "statechart": chart.name,
        "version": chart.version,
        "states": [w.state(s) for s in chart.states],
        "transitions": [w.transition(t) for t in chart.transitions],
        "events": {
            name: w.node({"fields": [w.field(f) for f in e.fields]}, e.span)
            for name, e in chart.events.items()
        },
        "context": [w.field(f) for f in chart.context.values()],
        "guards": {
            name: w.node({"if": g.source, "else": g.reason}, g.span, g.description)
            for name, g in chart.guards.items()
        },
        "invariants": [w.invariant(i) for i in chart.invariants],
        "candidates": [
            {event: list(ids) for event, ids in table.items()} for table in chart.candidates
        ],
        "eventless": [list(ids) for ids in chart.eventless],
    }
    if chart.idempotency:  # absent when undeclared: older charts keep their digests
        out["idempotency"] = {event: list(keys) for event, keys in chart.idempotency.items()}
    if chart.migrations:  # absent when none: the digests of earlier charts stay as they were
        out["migrations"] = [w.migration(m) for m in chart.migrations]
    if chart.timers:  # absent without timers: charts without time keep their digests
        out["timers"] = [w.timer(t) for t in chart.timers]
    if chart.raises_evaluation_errors:  # absent by default: other charts keep their digests
        out["on_evaluation_error"] = "raise"
    if chart.tables:  # absent without tables: the reads' trees name a table, this gives it
        out["tables"] = {
            name: w.node(t.to_json(), t.span, t.description) for name, t in chart.tables.items()
        }
    if positions and chart.definitions:  # every use is inlined in its tree (the digest's form)
        out["define"] = {name: w.node(d.to_json(), d.span) for name, d in chart.definitions.items()}
    if positions:
        out["file"] = chart.file
        out["description"] = chart.description
        out["digest"] = chart.digest
        out.update(_concurrency(chart))
    return out


def _concurrency(chart: CompiledChart) -> dict[str, Any]:
    """`producers` and `races` (when declared): they change no answer, so they are not
    part of the digest's form."""
    out: dict[str, Any] = {}
    if chart.producers:
        out["producers"] = {
            p.name: (
                {"events": list(p.events), "unordered": True, "decision": p.decision}
                if p.unordered
                else list(p.events)
            )
            for p in chart.producers
        }
    if chart.races:
        out["races"] = {
            r.name: (
                {"precedes": [_side(s) for s in r.sides], "decision": r.decision}
                if r.precedes
                else {"events": [_side(s) for s in r.sides], "in": r.state, "decision": r.decision}
            )
            for r in chart.races
        }
    return out


def _side(side: RaceSide) -> str | list[str]:
    """A race side as the YAML writes it: a name, `"*"` or a list of names."""
    return list(side.events) if side.listed else side.text()


def chart_digest(chart: CompiledChart) -> str:
    """`sha256:<hex>` of the canonical, position-free form."""
    payload = canonical_json(chart_to_json(chart, positions=False)).encode("utf-8")
    return "sha256:" + hashlib.sha256(payload).hexdigest()
