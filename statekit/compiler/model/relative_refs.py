"""Relative state references: a transition's target named from the state it leaves.

A target (and a history state's `default:`) has a source state, so it may be
written relative to it:

- `.child` (or `.child.grandchild`) names a state below the source;
- `^sibling` names a child of the source's parent, `^^name` a child of its
  grandparent, one `^` per level up;
- a bare name or dotted suffix (`met`, `pending.met`) is looked for among the
  source's siblings first, then among the children of each ancestor outward,
  and only then as a unique dotted suffix of any path (the global form).

A state name has no `.` and does not start with `^` (the schema's state-name
pattern), so neither form can be read as a name. A bare reference that named one
state globally before names that same state here: a nearer match ends with the
reference too, so it is the only one. The functions work on state paths: the
compiler's `StateIndex` and the language server's index share them.
"""

from __future__ import annotations

from collections.abc import Callable, Container

UP = "^"
"""One level up from the source state: `^name` is a sibling."""
DOWN = "."
"""Below the source state: `.name` is a child."""


def is_explicit(ref: str) -> bool:
    """Whether `ref` is written in an explicit relative form (`.child`, `^sibling`)."""
    return ref.startswith((DOWN, UP))


def _join(anchor: str, rest: str) -> str:
    return f"{anchor}.{rest}" if anchor else rest


def explicit_anchor(ref: str, source: str) -> tuple[str | None, str]:
    """The state an explicit reference starts from (None: above the root) and the dotted
    path it names below that state."""
    if ref.startswith(DOWN):
        return source, ref[len(DOWN) :]
    ups = len(ref) - len(ref.lstrip(UP))
    parts = source.split(".") if source else []
    if ups > len(parts):
        return None, ref[ups:]
    return ".".join(parts[: len(parts) - ups]), ref[ups:]


def enclosing_scopes(source: str) -> list[str]:
    """The states whose children a bare target is looked for in, nearest first: the
    source's parent, its grandparent, ... the root (`""`)."""
    if not source:
        return []
    parts = source.split(".")
    return [".".join(parts[:end]) for end in range(len(parts) - 1, -1, -1)]


def resolve_relative(ref: str, source: str, paths: Container[str]) -> str | None:
    """The path `ref` names from `source` without the global fallback, or None.

    An explicit form names exactly one path; a bare name or dotted suffix is the
    first of `<scope>.<ref>` that exists, scopes nearest first.
    """
    if is_explicit(ref):
        anchor, rest = explicit_anchor(ref, source)
        if anchor is None or not rest:
            return None
        path = _join(anchor, rest)
        return path if path in paths else None
    for scope in enclosing_scopes(source):
        path = _join(scope, ref)
        if path in paths:
            return path
    return None


def relative_form(target: str, source: str) -> str:
    """The explicit relative reference naming `target` from `source` (`.x`, `^x`, `^^x.y`)."""
    own = source.split(".") if source else []
    wanted = target.split(".")
    common = 0
    while common < min(len(own), len(wanted)) and own[common] == wanted[common]:
        common += 1
    if common == len(own) and len(wanted) > len(own):
        return DOWN + ".".join(wanted[common:])
    if common == len(wanted):  # the source itself or an ancestor: name it from its parent
        common -= 1
    return UP * (len(own) - common) + ".".join(wanted[common:])


def shortest_target_text(target: str, source: str, resolves: Callable[[str], str | None]) -> str:
    """The shortest text naming `target` from `source`: a bare suffix when one resolves
    to it (`resolves` applies the full rules, global fallback included), else the
    explicit relative form."""
    parts = target.split(".")
    for count in range(1, len(parts) + 1):
        suffix = ".".join(parts[len(parts) - count :])
        if resolves(suffix) == target:
            return suffix
    return relative_form(target, source)
