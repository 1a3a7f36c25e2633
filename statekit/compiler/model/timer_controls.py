"""The names `pause:` and `resume:` take, checked against the chart's named timers.

`pause: NAME` and `resume: NAME` act on the timers named NAME: a delayed `send`'s
`id:` and every `after` timer declared with `id: NAME` (in any state). A name that is
neither is an `unknown-timer-id` error at the name, with the closest names as a hint.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.ir import TimerDecl, TimerKind
from statekit.compiler.model.timers import timer_event_name
from statekit.compiler.rules import unknown_timer_id
from statekit.compiler.source.nodes import MappingNode, Node, ScalarNode, SequenceNode


def timer_names(sent_ids: Iterable[str], timers: Iterable[TimerDecl]) -> frozenset[str]:
    """The names a `pause:`/`resume:` may take: the `id:` of every `send` and of every
    named `after` timer."""
    return frozenset(sent_ids) | {t.label for t in timers if t.label is not None}


def timer_labels(after: Node | None, path: str) -> Iterator[tuple[str, str]]:
    """(`id:`, timer event name) of each entry of the `after:` list of the state at `path`,
    whether or not the rest of the entry has errors (those are reported at the entry: a
    `pause:`, race or migration naming the timer is not)."""
    items = after.items if isinstance(after, SequenceNode) else ()
    for item in items:
        label = item.get("id") if isinstance(item, MappingNode) else None
        if isinstance(item, MappingNode) and isinstance(label, ScalarNode):
            kind = TimerKind.AFTER if item.get("at") is None else TimerKind.AT
            yield str(label.value), timer_event_name(kind, str(label.value), path)


def unknown_controlled_names(
    uses: Iterable[tuple[str, str, SourceSpan]],
    sent_ids: Iterable[str],
    timers: Iterable[TimerDecl],
) -> Iterator[Diagnostic]:
    """An `unknown-timer-id` error for each (verb, name, span) whose name no timer has."""
    known = timer_names(sent_ids, timers)
    for verb, name, span in uses:
        if name in known:
            continue
        folded = {k.lower(): k for k in sorted(known)}  # `SLA` is close to `sla`
        close = [folded[c] for c in difflib.get_close_matches(name.lower(), list(folded), n=3)]
        notes = [f"did you mean {' or '.join(repr(c) for c in close)}?"] if close else []
        notes.append(
            "named timers: "
            + (", ".join(sorted(known)) or "none")
            + " (an `after` entry's `id:` or a delayed send's `id:`)"
        )
        yield Diagnostic(
            slug=unknown_timer_id.SLUG,
            severity=Severity.ERROR,
            message=f"{verb} of '{name}': no named timer or send in the chart has this id",
            span=span,
            notes=tuple(notes),
        )
