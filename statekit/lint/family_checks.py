"""What the family rules see: one chart, its exploration, and the chart set it is linted in.

The family rules (`STAGE = "family"`, `check(chart, family)`) check what one
chart cannot say alone: that an invoke names a chart of the set, that the
types agree across an invocation, that the parent classifies what a child
sends it, that a `send` names a chart of the set. `FamilyView` is their one
input; `key_span` finds the position of a key the IR does not keep (an
invoke's `chart:`) in the chart's text.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from statekit.analysis.facts import ChartFacts
from statekit.compiler.chart_set import ChartSet
from statekit.compiler.diagnostics import SourceSpan
from statekit.compiler.source.loader import load_yaml
from statekit.compiler.source.nodes import MappingNode, Node, SequenceNode


@dataclass(frozen=True, slots=True)
class FamilyView:
    """One chart as the family rules read it: its exploration's facts, the chart set it
    is linted in, and its text (None when unknown: positions fall back to the IR's)."""

    facts: ChartFacts
    chart_set: ChartSet
    source: str | None = None
    _tree: list[Node | None] = field(default_factory=list, repr=False, compare=False)

    def key_span(self, mapping: SourceSpan, *keys: str) -> SourceSpan:
        """The span of the value at `keys` (each a key of the mapping the one before
        leads to) in the YAML mapping at `mapping` (an invoke's `chart:`, say; a send
        effect's `send`, `event`); `mapping` itself when the text does not have it."""
        if self.source is None:
            return mapping
        return key_span_in(self._root(mapping.file), mapping, *keys)

    def key_name_span(self, mapping: SourceSpan, key: str) -> SourceSpan:
        """The span of the key `key` itself in the YAML mapping at `mapping`; `mapping`
        when the text does not have it."""
        found = self._mapping(mapping)
        name = found.key_node(key) if found is not None else None
        return name.span if name is not None else mapping

    def _mapping(self, span: SourceSpan) -> MappingNode | None:
        if self.source is None:
            return None
        return _mapping_at(self._root(span.file), span)

    def _root(self, file: str) -> Node | None:
        assert self.source is not None
        if not self._tree:
            self._tree.append(load_yaml(self.source, file)[0])
        return self._tree[0]


def key_span_in(tree: Node | None, mapping: SourceSpan, *keys: str) -> SourceSpan:
    """The span of the value at `keys` under the mapping of `tree` that starts at
    `mapping` (see `FamilyView.key_span`); `mapping` when the tree does not have it."""
    node: Node | None = _mapping_at(tree, mapping)
    for key in keys:
        node = node.get(key) if isinstance(node, MappingNode) else None
    return node.span if node is not None else mapping


def _same_start(a: SourceSpan, b: SourceSpan) -> bool:
    return (a.line, a.column) == (b.line, b.column)


def _mapping_at(root: Node | None, span: SourceSpan) -> MappingNode | None:
    """The mapping of the tree that starts where `span` does (depth first, a stack)."""
    stack = [root] if root is not None else []
    while stack:
        node = stack.pop()
        if isinstance(node, MappingNode):
            if _same_start(node.span, span):
                return node
            stack.extend(value for _, value in node.items)
        elif isinstance(node, SequenceNode):
            stack.extend(node.items)
    return None
