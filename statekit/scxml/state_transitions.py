"""A state's transitions in statekit's form: SCXML's event descriptors matched by
prefix against every event the document names (`foo` matches `foo.bar`), internal
transitions to descendants written on each child, and the descriptors statekit cannot
answer refused at their element.

`done.state.<id>` is statekit's event `done.state.<path>` (the state's dotted path): a
state's transitions on its own done event are its `done:`, those on another state's
are an `on:` entry any state may have (statekit.compiler.model.done_events), handled by
whatever configuration is active when the event is dequeued, as in SCXML."""

from __future__ import annotations

from typing import Any

from statekit.compiler.model.evaluation_errors import ERROR_EXECUTION
from statekit.scxml.context import ImportContext, event_name
from statekit.scxml.document import Element
from statekit.scxml.effects import content_of
from statekit.scxml.send_targets import ERROR_COMMUNICATION

_DONE = "done.state."


def pushed_down(
    element: Element, path: tuple[str, ...], context: ImportContext
) -> tuple[Element, ...]:
    """A compound state's internal transitions whose targets are all its descendants.
    SCXML takes them without leaving the state; statekit's transitions are external, so
    each is written on every child instead (a transition from the child to a target in
    another child has the state as its domain, as SCXML's internal one does; one to a
    target in the same child exits and re-enters the child, as the internal one does
    too). The child's own transitions keep their priority over it, as the state's
    descendants' do in SCXML; the state's earlier transitions on the same events would
    lose theirs, so they are refused."""
    pushed: list[Element] = []
    earlier: list[Element] = []
    for transition in element.kids("transition"):
        if _internal_below(transition, path, context):
            descriptors = transition.attrs.get("event", "").split()
            if any(d == "*" or d.startswith("done") for d in descriptors):
                raise context.refuse(transition, "an internal transition on '*' or done.*")
            if any(_overlap(transition, other, context) for other in earlier):
                raise context.refuse(
                    transition, "an internal transition after another on the same event"
                )
            pushed.append(transition)
        earlier.append(transition)
    return tuple(pushed)


def _internal_below(transition: Element, path: tuple[str, ...], c: ImportContext) -> bool:
    targets = [c.state_ref(transition, t) for t in transition.attrs.get("target", "").split()]
    below = all(c.ids[t][: len(path)] == path and len(c.ids[t]) > len(path) for t in targets)
    return transition.attrs.get("type") == "internal" and bool(targets) and below


def _overlap(a: Element, b: Element, c: ImportContext) -> bool:
    first, second = a.attrs.get("event", "").split(), b.attrs.get("event", "").split()
    if not first or not second:
        return not first and not second
    return any(
        any(_matches(d, e) for d in first) and any(_matches(d, e) for d in second) for e in c.events
    )


def state_transitions(
    element: Element,
    path: tuple[str, ...],
    compound: bool,
    inherited: tuple[Element, ...],
    context: ImportContext,
) -> dict[str, Any]:
    done_name = _DONE + element.attrs.get("id", "")
    done_events = done_state_events(context)
    universe = [
        *context.events,
        *done_events,
        *(f"done.invoke.{n}" for n in context.invokes if n not in context.never_started),
        ERROR_EXECUTION,
    ]
    on: dict[str, list[dict[str, Any]]] = {}
    always: list[dict[str, Any]] = []
    done: list[dict[str, Any]] = []
    own = [(t, False) for t in element.kids("transition")]
    for transition, pushed in [*own, *((t, True) for t in inherited)]:
        if not pushed and compound and _internal_below(transition, path, context):
            continue  # written on each child
        alternative = _alternative(transition, context)
        descriptors = transition.attrs.get("event", "").split()
        if not descriptors:
            always.append(alternative)
        for descriptor in descriptors:
            _check_descriptor(transition, descriptor, done_events, context)
        for event in universe:
            if any(_matches(d, event) for d in descriptors):
                raw = event.startswith("done.invoke.") or event == ERROR_EXECUTION
                key = done_events.get(event) or (event if raw else event_name(event))
                target = done if event == done_name else on.setdefault(key, [])
                target.append(alternative)
    out: dict[str, Any] = {}
    if on:
        out["on"] = on
    if always:
        out["always"] = always
    if done:
        out["done"] = done
    return out


def done_state_events(c: ImportContext) -> dict[str, str]:
    """SCXML's `done.state.<id>` of every state with child states (compound or parallel)
    → statekit's name for it, `done.state.<dotted path>`."""
    having = {path[:-1] for path in c.ids.values() if len(path) > 1}
    return {
        _DONE + state: _DONE + ".".join(path)
        for state, path in c.ids.items()
        if path in having and state not in c.histories
    }


def _check_descriptor(
    transition: Element, descriptor: str, done_events: dict[str, str], c: ImportContext
) -> None:
    raised = [ERROR_EXECUTION, *(e for e in c.events if e == ERROR_COMMUNICATION)]
    if descriptor.startswith("error.") and not any(_matches(descriptor, e) for e in raised):
        raise c.refuse(transition, f"event {descriptor!r}: statekit raises only error.execution")
    if descriptor.startswith("done.invoke") and not c.invokes:
        raise c.refuse(transition, f"event {descriptor!r}: the document has no <invoke>")
    if descriptor.startswith(_DONE) and not any(_matches(descriptor, e) for e in done_events):
        raise c.refuse(
            transition, f"event {descriptor!r}: no compound or parallel state has that id"
        )


def _matches(descriptor: str, event: str) -> bool:
    stem = descriptor.removesuffix(".*").removesuffix(".")
    return stem == "*" or event == stem or event.startswith(stem + ".")


def _alternative(transition: Element, c: ImportContext) -> dict[str, Any]:
    out: dict[str, Any] = {}
    targets = [c.state_ref(transition, t) for t in transition.attrs.get("target", "").split()]
    if targets:
        out["to"] = targets[0] if len(targets) == 1 else targets
    if transition.attrs.get("cond", "").strip():  # an empty cond is none (as psm reads it)
        out["if"] = c.condition(transition)
    effects = content_of(transition, c)
    if effects:
        out["do"] = effects
    return out
