"""The names `pause:` and `resume:` take, checked against the chart's named timers.

`pause: NAME` and `resume: NAME` act on the timers named NAME: a delayed `send`'s
`id:` and every `after` timer declared with `id: NAME` (in any state). A name that is
neither is an `unknown-timer-id` error at the name, with the closest names as a hint.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.ir import TimerDecl
from statekit.compiler.rules import unknown_timer_id
from statekit.compiler.source.nodes import MappingNode, Node, ScalarNode, SequenceNode


def timer_names(sent_ids: Iterable[str], timers: Iterable[TimerDecl]) -> frozenset[str]:
    """The names a `pause:`/`resume:` may take: the `id:` of every `send` and of every
    named `after` timer."""
    return frozenset(sent_ids) | {t.label for t in timers if t.label is not None}


def timer_labels(after: Node | None) -> Iterator[str]:
    """The `id:` of each entry of a state's `after:` list, whether or not the rest of the
    entry has errors (those are reported at the entry: a `pause:` of its name is not)."""
    items = after.items if isinstance(after, SequenceNode) else ()
    for item in items:
        label = item.get("id") if isinstance(item, MappingNode) else None
        if isinstance(label, ScalarNode) and label.value is not None:
            yield str(label.value)


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
