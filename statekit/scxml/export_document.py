"""A compiled chart as an SCXML 1.0 document that python-statemachine (psm) loads and runs.

The document is built as an `xml.etree.ElementTree` tree and serialised by it, so
every name, expression and comment is escaped by the one XML writer. What is
written (docs/scxml.md, "SCXML out", is the reference):

- states, `parallel`, `final`, `history` (with its default as a transition),
  `initial`; the root as `<scxml>`, or as one state inside it when the root is
  parallel or has transitions or timers of its own (then its transitions are
  `type="internal"`, never leaving it, as statekit's root is never left);
- transitions: `on` (event), `always` (no event), `done` (`done.state.<id>`),
  guards and `if` joined with `and` into `cond`;
- `entry`/`exit` as `<onentry>`/`<onexit>`; `assign`, `raise` (with a payload:
  `<send target="#_internal">` with `<param>`s), `send` (delayed with a literal:
  `delay`; with `id:` after a `<cancel>` of that id, as statekit replaces an armed
  timer), `cancel`, `emit` as `<log label="emit:TYPE" expr="{payload}">`;
- `after` timers with a literal delay as a `<send>` at the end of `<onentry>`
  (id: the timer's name) and a `<cancel>` at the start of `<onexit>`;
- context defaults as `<data>`; expressions in psm's python datamodel
  (`export_expressions`).

`already`/`reject`, rejection reasons, payload types, invariants and
idempotency keys have no SCXML equivalent: each is an XML comment where it was.
Anything else that cannot be written faithfully is an `ScxmlError` at its span.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass

from statekit.compiler.diagnostics import SourceSpan
from statekit.compiler.expressions.expression import Expression
from statekit.compiler.invocations import Invocation
from statekit.compiler.ir import (
    Assign,
    Cancel,
    CompiledChart,
    Conditional,
    Effect,
    Emit,
    ExpressionInvariant,
    Foreach,
    Raise,
    Send,
    StateKind,
    StateNode,
    TimerKind,
    Transition,
    TransitionKind,
)
from statekit.scxml.document import ScxmlError
from statekit.scxml.export_expressions import (
    XML_FORBIDDEN,
    NotExportable,
    Spelling,
    check_xml_text,
    literal,
    python_expression,
)
from statekit.scxml.export_family import (
    ChartSet,
    check_done_invoke_read,
    check_family_read,
    done_invoke,
    family_event_note,
    send_target,
)
from statekit.scxml.export_names import ExportNames, export_names

SCXML_NAMESPACE = "http://www.w3.org/2005/07/scxml"
EMIT_LABEL = "emit:"
"""The `<log>` label prefix of an `emit` (psm prints `emit:TYPE: {payload}`)."""


@dataclass(frozen=True)
class ScxmlExport:
    """The document's text and the names it gives the chart's states, events and fields."""

    text: str
    names: ExportNames
    wrapper: bool


def export_scxml(
    chart: CompiledChart, *, host_timers: bool = False, charts: ChartSet | None = None
) -> ScxmlExport:
    """`chart` as SCXML text, or an `ScxmlError` at the first construct it cannot express.

    `host_timers`: a timer or delayed `send` whose due time is an expression (`delay:
    expr`, `at:`) is left to the host (a comment says when to send its event) instead of
    being refused; SCXML has no absolute time and psm's delays are literal strings.
    `charts`: the charts `chart` may invoke (each invoked one is written inline).
    """
    element, names, wrapper = _document(chart, host_timers, charts or ChartSet(), ())
    ET.indent(element, space="  ")
    text = ET.tostring(element, encoding="unicode")
    return ScxmlExport('<?xml version="1.0" encoding="UTF-8"?>\n' + text + "\n", names, wrapper)


def _document(
    chart: CompiledChart, host_timers: bool, charts: ChartSet, chain: tuple[str, ...]
) -> tuple[ET.Element, ExportNames, bool]:
    """The `<scxml>` element of `chart`, invoked by the charts named in `chain`."""
    root = chart.root
    wrapper = root.kind is StateKind.PARALLEL or bool(
        root.transitions or root.timers or root.invocations
    )
    try:
        names = export_names(chart, wrapper)
    except NotExportable as error:
        raise ScxmlError(chart.span.file, 1, 1, str(error)) from None
    writer = _Writer(chart, names, host_timers, charts, chain)
    return writer.document(wrapper), names, wrapper


def _refuse(span: SourceSpan, message: str) -> ScxmlError:
    return ScxmlError(span.file, span.line, span.column, message)


def _comment(parent: ET.Element, text: str) -> None:
    safe = XML_FORBIDDEN.sub("\ufffd", text).replace("--", "- -").rstrip("-")
    parent.append(ET.Comment(f" dropped: {safe} "))


class _Writer:
    def __init__(
        self,
        chart: CompiledChart,
        names: ExportNames,
        host_timers: bool,
        charts: ChartSet,
        chain: tuple[str, ...],
    ) -> None:
        self.chart = chart
        self.names = names
        self.host_timers = host_timers
        self.charts = charts
        self.chain = chain
        self.family = bool(chain or chart.invocations)
        self.done_invoke: str | None = None
        """The `done.invoke.<id>` of the transition being written (its payload is empty)."""
        done = tuple(
            f"done.state.{names.state_ids[s.id]}"
            for s in chart.states
            if s.kind in (StateKind.COMPOUND, StateKind.PARALLEL) and names.state_ids[s.id]
        )
        self.spelling = Spelling(names.state_ids.__getitem__, names.data, done)

    def document(self, wrapper: bool) -> ET.Element:
        chart, root = self.chart, self.chart.root
        scxml = ET.Element("scxml", {"xmlns": SCXML_NAMESPACE, "version": "1.0"})
        scxml.set("datamodel", "python")
        scxml.set("name", chart.name)
        self._chart_comments(scxml)
        if chart.context:
            model = ET.SubElement(scxml, "datamodel")
            for name, decl in chart.context.items():
                try:
                    value = literal(decl.default)
                except NotExportable as error:
                    raise _refuse(decl.span, str(error)) from None
                data = ET.SubElement(model, "data", {"id": self.names.data[name]})
                if decl.default is not None:  # no value: psm's None (import types it by use)
                    data.set("expr", value)
        if root.kind is StateKind.PARALLEL and (root.transitions or root.timers):
            raise _refuse(root.span, "transitions or timers of a parallel root")
        if wrapper:
            scxml.set("initial", self.names.state_ids[0])
            self._state(scxml, root)
        else:
            scxml.set("initial", self._ids(root.initial))
            self._state_body(scxml, root, blocks=False)
        return scxml

    def _chart_comments(self, scxml: ET.Element) -> None:
        for event in self.chart.events.values():
            if event.fields:
                fields = ", ".join(f"{f.name}: {f.type.describe()}" for f in event.fields)
                _comment(scxml, f"payload types of {event.name} ({fields}): not checked")
        for invariant in self.chart.invariants:
            what = (
                invariant.expression.source
                if isinstance(invariant, ExpressionInvariant)
                else "a state invariant"
            )
            _comment(scxml, f"invariant {invariant.name} ({what}) at {invariant.span}")
        for name, key in self.chart.idempotency.items():
            _comment(scxml, f"idempotency key of {name}: {', '.join(key)}")

    def _ids(self, states: Iterable[int]) -> str:
        return " ".join(self.names.state_ids[s] for s in states)

    def _state(self, parent: ET.Element, state: StateNode) -> None:
        tag = {
            StateKind.PARALLEL: "parallel",
            StateKind.FINAL: "final",
            StateKind.HISTORY: "history",
        }.get(state.kind, "state")
        element = ET.SubElement(parent, tag, {"id": self.names.state_ids[state.id]})
        if state.kind is StateKind.HISTORY:
            element.set("type", state.history.value if state.history else "shallow")
            default = state.history_default or self.chart.states[state.parent or 0].initial
            ET.SubElement(element, "transition", {"target": self._ids(default)})
            return
        if state.kind is StateKind.COMPOUND and state.initial:
            element.set("initial", self._ids(state.initial))
        self._state_body(element, state, blocks=True)
        if state.output:
            done = ET.SubElement(element, "donedata")
            for name, value in state.output:
                ET.SubElement(done, "param", {"name": name, "expr": self._expression(value)})
        for invocation in state.invocations:
            self._invoke(element, invocation)

    def _invoke(self, element: ET.Element, invocation: Invocation) -> None:
        """`<invoke>` with the child chart's document inline and its input as `<param>`s."""
        if invocation.finalize:  # (psm's <finalize> reads a field an event lacks otherwise)
            raise _refuse(
                invocation.span, f"the finalize of invoke {invocation.id!r}: not exported yet"
            )
        if invocation.forward:
            raise _refuse(invocation.span, "an invoke with `forward: true` (not exported yet)")
        try:
            child = self.charts.child(invocation, (*self.chain, self.chart.name))
        except NotExportable as error:
            raise _refuse(invocation.span, str(error)) from None
        document, names, _ = _document(
            child, self.host_timers, self.charts, (*self.chain, self.chart.name)
        )
        invoke = ET.SubElement(element, "invoke", {"id": invocation.id})
        for name, value in invocation.input:
            target = names.data.get(name, name)
            ET.SubElement(invoke, "param", {"name": target, "expr": self._expression(value)})
        ET.SubElement(invoke, "content").append(document)

    def _state_body(self, element: ET.Element, state: StateNode, *, blocks: bool) -> None:
        for entry in state.already:
            _comment(element, f"already: {entry.event} (ALREADY_APPLIED, no transition)")
        for entry in state.reject:
            _comment(element, f"reject: {entry.event}: {entry.reason} (no transition)")
        if blocks:
            self._on_entry(element, state)
            self._on_exit(element, state)
        for transition_id in state.transitions:
            self._transition(element, state, self.chart.transitions[transition_id])
        for child in sorted((*state.children, *state.history_children)):
            self._state(element, self.chart.states[child])

    def _on_entry(self, element: ET.Element, state: StateNode) -> None:
        block = ET.Element("onentry")
        self._effects(block, state.entry)
        for timer_id in state.timers:
            timer = self.chart.timers[timer_id]
            event = self.names.events[timer.name]
            if timer.kind is TimerKind.AFTER:
                attrs = {"event": event, "delay": f"{timer.delay_ms}ms", "id": timer.name}
                ET.SubElement(block, "send", attrs)
            elif self.host_timers:
                assert timer.expression is not None
                when = "at" if timer.kind is TimerKind.AT else "after"
                block.append(
                    ET.Comment(
                        f" the host sends {event} {when} {timer.expression.source} ms "
                        f"while this state is active ".replace("--", "- -")
                    )
                )
            else:
                raise _refuse(timer.span, f"the timer {timer.name!r}: {_EXPRESSION_DUE}")
        if len(block):
            element.append(block)

    def _on_exit(self, element: ET.Element, state: StateNode) -> None:
        block = ET.Element("onexit")
        for timer_id in state.timers:
            timer = self.chart.timers[timer_id]
            if timer.kind is TimerKind.AFTER:
                ET.SubElement(block, "cancel", {"sendid": timer.name})
        if state.exit and state.kind is StateKind.FINAL and state.parent == 0:  # psm: never run
            raise _refuse(state.span, "exit: of a top-level final state (psm does not run it)")
        self._effects(block, state.exit)
        if len(block):
            element.append(block)

    def _transition(self, parent: ET.Element, state: StateNode, transition: Transition) -> None:
        self.done_invoke = done_invoke(transition.event)
        self._transition_element(parent, state, transition)
        self.done_invoke = None

    def _transition_element(
        self, parent: ET.Element, state: StateNode, transition: Transition
    ) -> None:
        element = ET.SubElement(parent, "transition")
        note = family_event_note(transition.event)
        if note is not None:
            _comment(element, note)
        done_state = self.chart.path_index.get((transition.event or "")[len("done.state.") :])
        if transition.kind is TransitionKind.EVENT and transition.event not in self.names.events:
            element.set("event", f"done.state.{self.names.state_ids[done_state or 0]}")
        elif transition.kind is TransitionKind.EVENT:
            assert transition.event is not None
            element.set("event", self.names.events[transition.event])
        elif transition.kind is TransitionKind.DONE:
            element.set("event", f"done.state.{self.names.state_ids[state.id]}")
        conjunct = len(transition.guards) > 1 or state.id == 0
        conditions = [self._expression(g.expression, conjunct) for g in transition.guards]
        if state.id == 0:  # the root's own transitions: statekit's root is never left
            if transition.targets:  # (psm refuses the type on a targetless transition)
                element.set("type", "internal")
            conditions += [f"not In({literal(self.names.state_ids[f])})" for f in self._finals()]
        if conditions:
            element.set("cond", " and ".join(conditions))
        if transition.targets:
            element.set("target", self._ids(transition.targets))
        reasons = [g.reason for g in transition.guards]
        if reasons:
            _comment(element, f"rejection reasons: {', '.join(reasons)}")
        self._effects(element, transition.effects)

    def _finals(self) -> list[int]:
        root = self.chart.root
        return [c for c in root.children if self.chart.states[c].kind is StateKind.FINAL]

    def _expression(self, expression: Expression, conjunct: bool = False) -> str:
        try:
            if self.family:
                check_family_read(expression.tree)
            if self.done_invoke is not None:
                check_done_invoke_read(expression.tree, self.done_invoke)
            return python_expression(expression.tree, self.spelling, conjunct=conjunct)
        except NotExportable as error:
            raise _refuse(expression.span, f"{error} in {expression.source!r}") from None

    def _payload(
        self, element: ET.Element, event: str, payload: tuple[tuple[str, Expression], ...]
    ) -> None:
        """A `<param>` per payload field, the declared default of each one not given (psm
        fills no default: its `_event.data` has only what was sent)."""
        given = dict(payload)
        declared = self.chart.events.get(event)
        for item in declared.fields if declared is not None else ():
            if item.name not in given and item.has_default:
                ET.SubElement(element, "param", {"name": item.name, "expr": literal(item.default)})
        for name, value in payload:
            ET.SubElement(element, "param", {"name": name, "expr": self._expression(value)})

    def _effects(self, block: ET.Element, effects: tuple[Effect, ...]) -> None:
        for effect in effects:
            if isinstance(effect, Assign):
                for name, value in effect.assignments:
                    attrs = {"location": self.names.data[name], "expr": self._expression(value)}
                    ET.SubElement(block, "assign", attrs)
            elif isinstance(effect, Emit):
                fields = ", ".join(
                    f"{literal(k)}: {self._expression(v)}" for k, v in effect.payload
                )
                attrs = {"label": EMIT_LABEL + effect.type, "expr": "{" + fields + "}"}
                ET.SubElement(block, "log", attrs)
            elif isinstance(effect, Raise):
                event = self.names.events[effect.event]
                if not self._payload_fields(effect.event, effect.payload):
                    ET.SubElement(block, "raise", {"event": event})
                else:
                    send = ET.SubElement(block, "send", {"event": event, "target": "#_internal"})
                    self._payload(send, effect.event, effect.payload)
            elif isinstance(effect, Send):
                self._send(block, effect)
            elif isinstance(effect, Cancel):
                ET.SubElement(block, "cancel", {"sendid": effect.id})
            elif isinstance(effect, Conditional):
                self._conditional(block, effect)
            elif isinstance(effect, Foreach):
                raise _refuse(effect.span, "foreach: lists are not exported yet")
            else:
                kind = type(effect).__name__.lower()
                raise _refuse(effect.span, f"{kind}: SCXML has no paused timers")

    def _conditional(self, block: ET.Element, conditional: Conditional) -> None:
        """`if`/`elif`/`else` as `<if>`/`<elseif>`/`<else>`: the branches' effects are
        siblings after their condition element, as SCXML writes them."""
        first, *rest = conditional.branches
        element = ET.SubElement(block, "if", {"cond": self._expression(first.check.expression)})
        self._effects(element, first.effects)
        for branch in rest:
            ET.SubElement(element, "elseif", {"cond": self._expression(branch.check.expression)})
            self._effects(element, branch.effects)
        if conditional.otherwise:
            ET.SubElement(element, "else")
            self._effects(element, conditional.otherwise)

    def _send(self, block: ET.Element, send: Send) -> None:
        if send.to is not None:  # another chart's event: its name as that chart writes it
            self._send_to(block, send)
            return
        event = self.names.events[send.event]
        if send.delay is not None or send.at is not None:
            if not self.host_timers:
                raise _refuse(send.span, f"the send of {send.event!r}: {_EXPRESSION_DUE}")
            due = send.delay if send.delay is not None else send.at
            assert due is not None
            block.append(ET.Comment(f" the host sends {event} when due ({due.source}) "))
            return
        if send.id is not None and send.delay_ms:
            ET.SubElement(block, "cancel", {"sendid": send.id})
        element = ET.SubElement(block, "send", {"event": event})
        if send.delay_ms is not None:  # `delay: 0ms` too, as written (the same as none)
            element.set("delay", f"{send.delay_ms}ms")
        if send.id is not None:  # (undelayed: it arms nothing, in psm neither)
            element.set("id", send.id)
        self._payload(element, send.event, send.payload)

    def _send_to(self, block: ET.Element, send: Send) -> None:
        """A `send` to the parent or a child: `<send target>` with a `<param>` per field
        given (the receiver fills its own defaults); a delayed one is refused."""
        if send.delayed or send.id is not None:
            raise _refuse(send.span, "a delayed send to the parent or a child (not exported yet)")
        try:
            target = send_target(send.to)
            check_xml_text(send.event, f"the event name {send.event!r}")
        except NotExportable as error:
            raise _refuse(send.span, str(error)) from None
        assert target is not None
        element = ET.SubElement(block, "send", {"event": send.event, "target": target})
        for name, value in send.payload:
            ET.SubElement(element, "param", {"name": name, "expr": self._expression(value)})

    def _payload_fields(self, event: str, payload: tuple[tuple[str, Expression], ...]) -> bool:
        declared = self.chart.events.get(event)
        fields = declared.fields if declared is not None else ()
        return bool(payload) or any(f.has_default for f in fields)


_EXPRESSION_DUE = (
    "a due time given by an expression has no SCXML equivalent (psm's delay is a "
    "literal; SCXML has no absolute time): export with --host-timers to leave it to the host"
)
