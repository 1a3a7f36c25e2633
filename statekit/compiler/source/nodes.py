"""The positioned YAML tree: what the loader produces and every later stage reads.

Each node keeps the `SourceSpan` of its text. Mapping keys are scalar nodes
whose value is always a string (YAML keys such as `1` or `true` are kept as
their source text), so that a state or event named `on` or `404` stays a name.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from statekit.compiler.diagnostics import SourceSpan

Scalar = str | int | float | bool | None
Plain = Scalar | list["Plain"] | dict[str, "Plain"]
_SCAN = 16
"""Mappings of at most this many keys are searched in order; larger ones through an index."""


@dataclass(frozen=True, slots=True)
class ScalarNode:
    """A scalar with its resolved value (YAML 1.1 yes/no/on/off stay strings)."""

    value: Scalar
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class SequenceNode:
    """A YAML sequence."""

    items: tuple[Node, ...]
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class MappingNode:
    """A YAML mapping; keys are unique (the loader refuses duplicates) and in source order."""

    items: tuple[tuple[ScalarNode, Node], ...]
    span: SourceSpan
    _index: dict[Scalar, Node] | None = field(default=None, init=False, repr=False, compare=False)
    """Key → value, built on the first look-up in a large mapping: explaining one schema
    error per key of a mapping of 100,000 keys would otherwise cost 100,000² comparisons."""

    def get(self, key: str) -> Node | None:
        """The value node for `key`, or None."""
        items = self.items
        if len(items) <= _SCAN:
            for k, v in items:
                if k.value == key:
                    return v
            return None
        index = self._index
        if index is None:
            index = {}
            for k, v in items:
                index.setdefault(k.value, v)
            object.__setattr__(self, "_index", index)
        return index.get(key)

    def key_node(self, key: str) -> ScalarNode | None:
        """The key node itself (to point a diagnostic at a misspelt key)."""
        for k, _ in self.items:
            if k.value == key:
                return k
        return None

    def keys(self) -> Iterator[str]:
        """Keys in source order."""
        for k, _ in self.items:
            yield str(k.value)


Node = ScalarNode | SequenceNode | MappingNode


def to_plain(node: Node) -> Plain:
    """The node as plain Python data (for JSON Schema validation)."""
    if isinstance(node, ScalarNode):
        return node.value
    if isinstance(node, SequenceNode):
        return [to_plain(item) for item in node.items]
    return {str(k.value): to_plain(v) for k, v in node.items}


def node_at(root: Node, path: tuple[str | int, ...]) -> Node:
    """The deepest node reachable along a JSON path (as jsonschema reports it)."""
    node = root
    for part in path:
        if isinstance(node, MappingNode) and isinstance(part, str):
            child = node.get(part)
            if child is None:
                return node
            node = child
        elif isinstance(node, SequenceNode) and isinstance(part, int) and part < len(node.items):
            node = node.items[part]
        else:
            return node
    return node
