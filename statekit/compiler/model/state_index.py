"""State references: a unique name, or the shortest unique dotted suffix of a path; a
transition's target also relative to its source (`statekit.compiler.model.relative_refs`)."""

from __future__ import annotations

import difflib
from collections import defaultdict
from collections.abc import Iterable

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.model.relative_refs import (
    explicit_anchor,
    is_explicit,
    relative_form,
    resolve_relative,
)
from statekit.compiler.rules import ambiguous_state, unknown_state

RELATIVE_FORMS = (
    "'.name' names a child of the state, '^name' a sibling, and '^^name' a sibling of its parent."
)


class StateIndex:
    """Every dotted suffix of every state path, for resolving references."""

    def __init__(self, paths: Iterable[tuple[int, str]]) -> None:
        self._by_suffix: dict[str, list[int]] = defaultdict(list)
        self._paths: dict[int, str] = {}
        self._ids: dict[str, int] = {}
        for state_id, path in paths:
            if not path:
                continue
            self._paths[state_id] = path
            self._ids[path] = state_id
            parts = path.split(".")
            for start in range(len(parts)):
                self._by_suffix[".".join(parts[start:])].append(state_id)

    def resolve(self, ref: str, span: SourceSpan) -> int | Diagnostic:
        """The state id for `ref` (global: no source state), or an
        `unknown-state`/`ambiguous-state` diagnostic."""
        if is_explicit(ref):
            return Diagnostic(
                slug=unknown_state.SLUG,
                severity=Severity.ERROR,
                message=f"'{ref}' is a relative reference, but it has no state to start from here",
                span=span,
                notes=(
                    "only transition targets and history defaults are relative to a state: "
                    "name the state by its path or a unique dotted suffix",
                ),
            )
        return self._global(ref, span, None)

    def resolve_from(self, ref: str, source: str, span: SourceSpan) -> int | Diagnostic:
        """The state id `ref` names from the state at path `source` (a transition's
        target): an explicit relative form, else the nearest enclosing match, else the
        global form."""
        found = resolve_relative(ref, source, self._ids)
        if found is not None:
            return self._ids[found]
        if not is_explicit(ref):
            return self._global(ref, span, source)
        anchor, rest = explicit_anchor(ref, source)
        where = f"'{source}'" if source else "the root"
        if anchor is None:
            message = f"'{ref}' goes above the root from {where}"
        else:
            named = f"{anchor}.{rest}" if anchor else rest
            message = f"'{ref}' from {where} names '{named}', which is not a state"
        return Diagnostic(
            slug=unknown_state.SLUG,
            severity=Severity.ERROR,
            message=message,
            span=span,
            notes=(*self._relative_guesses(rest, source), RELATIVE_FORMS),
        )

    def _relative_guesses(self, rest: str, source: str) -> tuple[str, ...]:
        """`did you mean` the relative form of each state whose path ends with `rest`."""
        found = sorted(self._paths[s] for s in self._by_suffix.get(rest, []))
        if not found:
            return ()
        forms = " or ".join(f"'{relative_form(p, source)}' ({p})" for p in found)
        return (f"did you mean {forms}?",)

    def _global(self, ref: str, span: SourceSpan, source: str | None) -> int | Diagnostic:
        found = self._by_suffix.get(ref, [])
        if len(found) == 1:
            return found[0]
        if found:
            found_paths = sorted(self._paths[s] for s in found)
            if source is None:
                picks = [f"candidate: {c}" for c in found_paths]
                hint = "use a longer dotted suffix to pick one"
            else:
                picks = [
                    f"candidate: {c} (from here: '{relative_form(c, source)}')" for c in found_paths
                ]
                hint = "use a longer dotted suffix or the relative form to pick one"
            return Diagnostic(
                slug=ambiguous_state.SLUG,
                severity=Severity.ERROR,
                message=f"state reference '{ref}' is ambiguous: it matches {len(found)} states",
                span=span,
                notes=(*picks, hint),
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
