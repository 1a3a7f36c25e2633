"""The `races:` entry that decides a race, as text a user pastes into the chart.

A race name must match the schema's `raceName` (letters, digits, `_` and `-`,
starting with a letter or `_`), and a timer event's name
(`after(30d)@billing.cancelled`) has characters no race name may hold, so the
suggested name keeps each event's word characters and joins the rest with
`_`: `PAYMENT_METHOD_ATTACHED_vs_after_30d_billing_cancelled`. A name the
chart already uses gets a numeric suffix. Event names that are not plain
words are written as JSON strings (a JSON string is a YAML flow scalar), so
the entry is valid YAML as written.

Where the two events are both sent by one producer (and race all the same,
because one of them is also listed under another producer), declaring that
producer `unordered: true` decides every race among its events: `race_fixes`
suggests that form too, as the `producers:` entry that replaces its list.
"""

from __future__ import annotations

import json
import re

from statekit.compiler.ir import CompiledChart

_NOT_NAME = re.compile(r"[^A-Za-z0-9_]+")
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def race_name(chart: CompiledChart, a: str, b: str) -> str:
    """A race name for the pair `a`, `b` that the schema accepts and the chart does not use."""
    words = [_NOT_NAME.sub("_", event).strip("_") or "event" for event in (a, b)]
    base = f"{words[0]}_vs_{words[1]}"
    if not base[0].isalpha() and base[0] != "_":
        base = f"_{base}"
    used = {decision.name for decision in chart.races}
    name, n = base, 2
    while name in used:
        name, n = f"{base}_{n}", n + 1
    return name


def flow_scalar(text: str) -> str:
    """`text` as a YAML flow scalar: plain when it is a plain word, else a JSON string."""
    return text if _PLAIN.fullmatch(text) else json.dumps(text)


def race_entry(chart: CompiledChart, a: str, b: str, decision: str) -> str:
    """The `races:` entry deciding `a` against `b`, as one YAML flow mapping."""
    events = f"[{flow_scalar(a)}, {flow_scalar(b)}]"
    return f"{{{race_name(chart, a, b)}: {{events: {events}, decision: {decision}}}}}"


def unordered_producer_entry(chart: CompiledChart, a: str, b: str, decision: str) -> str | None:
    """The `producers:` entry declaring unordered the ordered producer that sends both `a`
    and `b`, as one YAML flow mapping (it replaces that producer's list); None when no
    ordered producer sends both."""
    for producer in chart.producers:
        if not producer.unordered and a in producer.events and b in producer.events:
            events = ", ".join(flow_scalar(event) for event in producer.events)
            return (
                f"{{{producer.name}: {{events: [{events}], unordered: true, "
                f"decision: {decision}}}}}"
            )
    return None


def race_fixes(chart: CompiledChart, a: str, b: str, decision: str) -> tuple[str, ...]:
    """The notes suggesting fixes besides the `races:` entry (`race_entry`), each with
    its YAML valid as written: the unordered form of a producer that sends both events."""
    entry = unordered_producer_entry(chart, a, b, decision)
    if entry is None:
        return ()
    return (f"or declare their producer unordered: producers: {entry} (in place of its list)",)
