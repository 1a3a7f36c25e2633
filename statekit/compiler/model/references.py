"""The state references of pass 2: `initial:` (a path below its state), a history
state's `default:` and transition targets (relative to their source state, see
`statekit.compiler.model.relative_refs`), and references without a source state
(invariants, `active()`, `races: in:`), which are global.
"""

from __future__ import annotations

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.ir import StateKind
from statekit.compiler.model.declarations import scalar_list
from statekit.compiler.model.numbering import StateDraft
from statekit.compiler.model.state_index import StateIndex
from statekit.compiler.rules import invalid_initial, invalid_target, unknown_state
from statekit.compiler.source.nodes import ScalarNode


class StateReferences:
    """Resolves the state references of one chart's numbered states into `problems`."""

    def __init__(self, drafts: tuple[StateDraft, ...], problems: list[Diagnostic]) -> None:
        self.drafts = drafts
        self.problems = problems
        self.index = StateIndex((d.id, d.path) for d in drafts)

    def _error(self, slug: str, message: str, span: SourceSpan, *notes: str) -> None:
        self.problems.append(
            Diagnostic(slug=slug, severity=Severity.ERROR, message=message, span=span, notes=notes)
        )

    def resolve_target(self, ref: str, source: StateDraft, span: SourceSpan) -> int | None:
        """Resolve a reference relative to `source` (a target, a history default),
        reporting a diagnostic when it fails."""
        found = self.index.resolve_from(ref, source.path, span)
        if isinstance(found, Diagnostic):
            self.problems.append(found)
            return None
        return found

    def resolve_activatable(self, ref: str, span: SourceSpan) -> int | Diagnostic:
        """Resolve a reference that must name a state able to be active (not history)."""
        found = self.index.resolve(ref, span)
        if isinstance(found, int) and self.drafts[found].kind is StateKind.HISTORY:
            parent = self.drafts[self.drafts[found].parent or 0].path
            return Diagnostic(
                slug=unknown_state.SLUG,
                severity=Severity.ERROR,
                message=f"'{ref}' is a history pseudo-state, which is never active",
                span=span,
                notes=(f"name a real state, e.g. its parent '{parent}'",),
            )
        return found

    def _resolve_child_path(self, draft: StateDraft, ref: ScalarNode) -> int | None:
        """`initial:` names a path below its state: `b.c`, or `.b.c` as a target would."""
        current = draft
        path = str(ref.value)
        for part in (path[1:] if path.startswith(".") else path).split("."):
            match = [
                c
                for c in current.children + current.history_children
                if self.drafts[c].name == part
            ]
            if not match:
                return None
            current = self.drafts[match[0]]
        return current.id

    def resolve_initial(self, draft: StateDraft) -> None:
        node = draft.node.get("initial")
        where = draft.path or "the root"
        if draft.kind is StateKind.COMPOUND:
            if not isinstance(node, ScalarNode) or node.value is None:
                names = ", ".join(self.drafts[c].name for c in draft.children)
                self._error(
                    invalid_initial.SLUG,
                    f"compound state '{where}' needs 'initial': one of {names}",
                    draft.span,
                )
                return
            target = self._resolve_child_path(draft, node)
            if target is None:
                names = ", ".join(self.drafts[c].name for c in draft.children)
                self._error(
                    invalid_initial.SLUG,
                    f"initial '{node.value}' of '{where}' is not a child or descendant "
                    f"(children: {names})",
                    node.span,
                )
            elif self.drafts[target].kind is StateKind.HISTORY:
                self._error(
                    invalid_initial.SLUG,
                    f"initial '{node.value}' of '{where}' is a history state",
                    node.span,
                )
            else:
                draft.initial = (target,)
        elif draft.kind is not StateKind.PARALLEL and node is not None:
            key = draft.node.key_node("initial")
            assert key is not None
            self._error(
                invalid_initial.SLUG,
                f"'{where}' has no child states, so 'initial' means nothing",
                key.span,
            )

    def resolve_history_default(self, draft: StateDraft) -> None:
        parent = self.drafts[draft.parent or 0]
        refs = scalar_list(draft.node.get("default"))
        if not refs:
            draft.history_default = parent.initial or tuple(parent.children)
            return
        targets: list[int] = []
        for ref in refs:
            target = self.resolve_target(str(ref.value), draft, ref.span)
            if target is None:
                continue
            if not (parent.id < target <= self._last_descendant(parent.id)):
                self._error(
                    invalid_initial.SLUG,
                    f"history default '{ref.value}' must be inside '{parent.path}'",
                    ref.span,
                )
            elif self.drafts[target].kind is StateKind.HISTORY:
                self._error(
                    invalid_initial.SLUG,
                    f"history default '{ref.value}' is a history state",
                    ref.span,
                )
            else:
                targets.append(target)
        draft.history_default = tuple(targets)

    def _last_descendant(self, state_id: int) -> int:
        last = state_id
        draft = self.drafts[state_id]
        for child in draft.children + draft.history_children:
            last = max(last, self._last_descendant(child))
        return last

    def check_targets(self, targets: list[int], refs: list[ScalarNode]) -> None:
        for i, a in enumerate(targets):
            for b in targets[i + 1 :]:
                ok = (
                    a != b
                    and not (self._is_ancestor(a, b) or self._is_ancestor(b, a))
                    and self._in_orthogonal_regions(a, b)
                )
                if not ok:
                    self._error(
                        invalid_target.SLUG,
                        f"targets '{self.drafts[a].path}' and '{self.drafts[b].path}' cannot "
                        "be active together: a transition with several targets needs one per "
                        "region of a parallel state",
                        refs[0].span,
                    )
                    return

    def _is_ancestor(self, a: int, b: int) -> bool:
        return a < b <= self._last_descendant(a)

    def _in_orthogonal_regions(self, a: int, b: int) -> bool:
        # The nearest common ancestor must be a parallel state (or the parallel root).
        anc = self.drafts[a].parent
        while anc is not None and not self._is_ancestor(anc, b):
            anc = self.drafts[anc].parent
        return anc is not None and self.drafts[anc].kind is StateKind.PARALLEL
