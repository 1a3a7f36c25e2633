"""Effects in words, as `statekit diff` compares and shows them (`assign total =
ctx.total + 1; emit Counted(total=ctx.total)`): two effects lists read the same exactly
when they do the same."""

from __future__ import annotations

from statekit.compiler.ir import (
    Assign,
    Cancel,
    Conditional,
    Effect,
    Emit,
    Foreach,
    Pause,
    Resume,
    Send,
)


def effects_in_words(effects: tuple[Effect, ...]) -> str:
    """Effects in words (`assign total = ctx.total + 1; emit Counted(total=ctx.total)`)."""
    out = []
    for effect in effects:
        if isinstance(effect, Assign):
            out.append("assign " + ", ".join(f"{k} = {e.source}" for k, e in effect.assignments))
            continue
        if isinstance(effect, Cancel):
            out.append(f"cancel {effect.id}")
            continue
        if isinstance(effect, Pause | Resume):
            out.append(f"{'pause' if isinstance(effect, Pause) else 'resume'} {effect.name}")
            continue
        if isinstance(effect, Conditional):
            out.append(_conditional(effect))
            continue
        if isinstance(effect, Foreach):
            index = f", {effect.index}" if effect.index is not None else ""
            head = f"foreach {effect.item}{index} in ({effect.array.source})"
            out.append(f"{head} {{{effects_in_words(effect.effects)}}}")
            continue
        if isinstance(effect, Send):  # its timing and id are part of what it does
            timing = [f"{k}={v}" for k, v in _send_timing(effect)]
            fields = ", ".join([*(f"{k}={e.source}" for k, e in effect.payload), *timing])
            out.append(f"send {effect.event}({fields})")
            continue
        name = effect.type if isinstance(effect, Emit) else f"raise {effect.event}"
        fields = ", ".join(f"{k}={e.source}" for k, e in effect.payload)
        out.append(f"{'emit ' if isinstance(effect, Emit) else ''}{name}({fields})")
    return "; ".join(out)


def _conditional(effect: Conditional) -> str:
    """`if (c) {a} elif (d) {b} else {e}`: every branch, its condition and its effects."""
    words = [
        f"{'if' if n == 0 else 'elif'} ({b.check.expression.source})"
        f" {{{effects_in_words(b.effects)}}}"
        for n, b in enumerate(effect.branches)
    ]
    if effect.otherwise:
        words.append(f"else {{{effects_in_words(effect.otherwise)}}}")
    return " ".join(words)


def _send_timing(effect: Send) -> list[tuple[str, str]]:
    out = []
    if effect.delay_ms is not None:
        out.append(("delay", f"{effect.delay_ms}ms"))
    if effect.delay is not None:
        out.append(("delay", effect.delay.source))
    if effect.at is not None:
        out.append(("at", effect.at.source))
    if effect.id is not None:
        out.append(("id", effect.id))
    return out
