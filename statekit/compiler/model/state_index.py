"""State references: a unique name, or the shortest unique dotted suffix of a path."""

from __future__ import annotations

import difflib
from collections import defaultdict
from collections.abc import Iterable

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.rules import ambiguous_state, unknown_state


class StateIndex:
    """Every dotted suffix of every state path, for resolving references."""

    def __init__(self, paths: Iterable[tuple[int, str]]) -> None:
        self._by_suffix: dict[str, list[int]] = defaultdict(list)
        self._paths: dict[int, str] = {}
        for state_id, path in paths:
            if not path:
                continue
            self._paths[state_id] = path
            parts = path.split(".")
            for start in range(len(parts)):
                self._by_suffix[".".join(parts[start:])].append(state_id)

    def resolve(self, ref: str, span: SourceSpan) -> int | Diagnostic:
        """The state id for `ref`, or an `unknown-state`/`ambiguous-state` diagnostic."""
        found = self._by_suffix.get(ref, [])
        if len(found) == 1:
            return found[0]
        if found:
            candidates = sorted(self._paths[s] for s in found)
            return Diagnostic(
                slug=ambiguous_state.SLUG,
                severity=Severity.ERROR,
                message=f"state reference '{ref}' is ambiguous: it matches {len(found)} states",
                span=span,
                notes=(
                    *(f"candidate: {c}" for c in candidates),
                    "use a longer dotted suffix to pick one",
                ),
            )
        close = difflib.get_close_matches(ref, list(self._by_suffix), n=3)
        notes = (f"did you mean {' or '.join(repr(c) for c in close)}?",) if close else ()
        return Diagnostic(
            slug=unknown_state.SLUG,
            severity=Severity.ERROR,
            message=f"unknown state '{ref}'",
            span=span,
            notes=notes,
        )

    def shortest_reference(self, state_id: int) -> str:
        """The shortest unique dotted suffix that names this state."""
        parts = self._paths[state_id].split(".")
        for start in range(len(parts) - 1, -1, -1):
            suffix = ".".join(parts[start:])
            if len(self._by_suffix[suffix]) == 1:
                return suffix
        return self._paths[state_id]
