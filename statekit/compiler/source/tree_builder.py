"""Parser events into the positioned tree, every limit checked at every event.

`TreeBuilder.build` reads a parser's events (libyaml's C parser or PyYAML's
pure-Python one) and builds the nodes of `source.nodes` with an explicit stack:
depth, alias count and expanded size are checked at every event, and the first
event past a limit abandons the document (`Refused`). Aliases are counted as if
expanded (the expanded size of each anchored node is added at each alias) and
become shared nodes, never copies. Recoverable problems (a duplicate key: the
first is kept; an unsupported tag; a merge or complex key: dropped) are
diagnostics next to the tree. See `loader` for the spans' conventions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, Protocol

from yaml.events import (
    AliasEvent,
    CollectionEndEvent,
    CollectionStartEvent,
    DocumentStartEvent,
    Event,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.rules import duplicate_key, yaml_limits, yaml_syntax
from statekit.compiler.source.limits import Limits, Refused
from statekit.compiler.source.marks import YAML_BREAK, event_span, new_span
from statekit.compiler.source.nodes import MappingNode, Node, Scalar, ScalarNode, SequenceNode
from statekit.compiler.source.scalars import (
    IMPLICIT,
    MAP,
    SCALAR_TAGS,
    SEQ,
    STR,
    implicit_tag,
    short_tag,
    typed_value,
    unsupported,
)
from statekit.compiler.source.yaml_hints import duplicate_key_hint, tag_hint

__all__ = ["EventSource", "TreeBuilder"]

_EXPECT_KEY: Final = object()  # mapping state: the next node is a key
_SKIP: Final = object()  # mapping state: drop the next value (its key was refused)
_RAISE_NODES: Final = (
    "split the chart, or raise the limit from Python: statekit.load(path, "
    "limits=Limits(max_expanded_nodes=N)), Limits from statekit.compiler.source.limits"
)


class EventSource(Protocol):
    """A YAML parser as the builder reads it."""

    def get_event(self) -> Event | None: ...
    def dispose(self) -> None: ...


def _diag(slug: str, message: str, span: SourceSpan, notes: tuple[str, ...] = ()) -> Diagnostic:
    return Diagnostic(slug, Severity.ERROR, message, span, notes)


class _Frame:
    """A mapping or sequence whose events are being read."""

    __slots__ = ("anchor", "end", "flow", "items", "key", "pairs", "seen", "size", "start")

    def __init__(self, event: CollectionStartEvent, start: tuple[int, int], is_map: bool) -> None:
        self.flow = event.flow_style is True
        self.anchor = event.anchor
        self.start = start  # 1-based (line, column)
        self.end = start
        self.size = 1  # nodes with aliases expanded, this collection included
        self.items: list[Node]  # a sequence's items
        self.pairs: list[tuple[ScalarNode, Node]]  # a mapping's entries
        self.seen: dict[str, int]  # a mapping's key texts -> line of their first definition
        self.key: object  # a mapping's next key, or _EXPECT_KEY or _SKIP; None: a sequence
        if is_map:
            self.key, self.pairs, self.seen = _EXPECT_KEY, [], {}
        else:
            self.key, self.items = None, []


class TreeBuilder:
    """Builds the tree from parser events, enforcing the limits at every event."""

    def __init__(
        self, file: str, limits: Limits, diagnostics: list[Diagnostic], text: str = ""
    ) -> None:
        self.file = file
        self.text = text
        self._lines: list[str] | None = None  # `text` split at YAML line breaks, when needed
        self.limits = limits
        self.diagnostics = diagnostics
        self.stack: list[_Frame] = []
        # anchor -> (node, expanded size, source text if a scalar); None while being built
        self.anchors: dict[str, tuple[Node, int, str | None] | None] = {}
        self.aliases = 0
        self.expanded = 0
        self.documents = 0
        self.root: Node | None = None

    def build(self, parser: EventSource) -> Node | None:
        """Read every event of `parser`; the root node (None: no document)."""
        # A plain scalar without tag or anchor inside a collection (most events of a
        # chart) is handled right here, its key or value kept without a method call;
        # any other event is dispatched by a look-up of its class (a chain of
        # isinstance tests cost more). On bench/lsp_latency.py's 500-state chart the
        # loader went from 42 to 38 ms with the dispatch and `new_span`; this path took
        # it from 40.6 to 36.6 ms CPU more (medians, interleaved, load average 16), of
        # which libyaml's events alone are 7-8 ms.
        handlers: dict[type, Callable[[Any], None]] = {
            ScalarEvent: self._scalar,
            MappingStartEvent: self._start,
            SequenceStartEvent: self._start,
            AliasEvent: self._alias,
            MappingEndEvent: self._end,
            SequenceEndEvent: self._end,
            DocumentStartEvent: self._document,
        }
        get_event = parser.get_event
        file, stack, limit = self.file, self.stack, self.limits.max_expanded_nodes
        make_span, expect_key, implicit = new_span, _EXPECT_KEY, IMPLICIT
        while (event := get_event()) is not None:
            if (
                event.__class__ is ScalarEvent
                and not event.style  # plain: None from PyYAML's parser, "" from libyaml's
                and event.tag is None
                and not event.anchor
                and event.implicit[0]
                and stack
                and self.expanded < limit
            ):
                top = stack[-1]
                key, value = top.key, event.value
                start, end = event.start_mark, event.end_mark
                if (
                    start is None  # never from a parser (see `event_span`)
                    or end is None
                    or (key is expect_key and (value == "<<" or value in top.seen))
                ):
                    self._scalar(event)  # a merge key or a duplicate: reported there
                    continue
                line, end_line, end_column = start.line + 1, end.line + 1, end.column + 1
                span = make_span(file, line, start.column + 1, end_line, end_column)
                self.expanded += 1
                top.size += 1
                top.end = (end_line, end_column)
                if key is expect_key:
                    top.seen[value] = line
                    top.key = ScalarNode(value, span)
                    continue
                node = ScalarNode(
                    self._value(event, None, span) if value[:1] in implicit else value, span
                )
                if key is None:
                    top.items.append(node)
                else:
                    if key.__class__ is ScalarNode:
                        top.pairs.append((key, node))
                    top.key = expect_key
                continue
            handler = handlers.get(event.__class__)
            if handler is None:
                handler = self._other
            handler(event)
        return self.root

    def _other(self, event: Event) -> None:
        """An event of a class not in `build`'s table (a subclass): dispatched by kind;
        stream and document ends need nothing."""
        if isinstance(event, ScalarEvent):
            self._scalar(event)
        elif isinstance(event, CollectionStartEvent):
            self._start(event)
        elif isinstance(event, AliasEvent):
            self._alias(event)
        elif isinstance(event, CollectionEndEvent):
            self._end(event)
        elif isinstance(event, DocumentStartEvent):
            self._document(event)

    def _document(self, event: DocumentStartEvent) -> None:
        self.documents += 1
        if self.documents > 1:
            message = "a second YAML document (`---`): one statechart per file"
            raise Refused(_diag(yaml_syntax.SLUG, message, event_span(self.file, event)))

    def _grow(self, size: int, span: SourceSpan) -> None:
        # Our own bound on the expanded size, checked before the node is kept.
        self.expanded += size
        if self.expanded > self.limits.max_expanded_nodes:
            self._refuse_size(span)

    def _refuse_size(self, span: SourceSpan) -> None:
        """Refuse the document: its expanded size went past the limit at `span`."""
        limit = self.limits.max_expanded_nodes
        if self.aliases:
            what = f"more than {limit} nodes once its aliases are expanded"
        else:
            what = f"more than {limit} nodes (mappings, lists and scalars)"
        message = f"the document has {what}: over the limit `max_expanded_nodes`"
        raise Refused(_diag(yaml_limits.SLUG, message, span, (_RAISE_NODES,)))

    def _scalar(self, event: ScalarEvent) -> None:
        start, end = event.start_mark, event.end_mark
        if start is None or end is None:  # never from a parser (see `event_span`)
            span = event_span(self.file, event)
        else:  # `event_span` inlined: a chart's scalars are most of its events
            span = new_span(
                self.file, start.line + 1, start.column + 1, end.line + 1, end.column + 1
            )
        if event.style in ("|", ">"):
            span = self._block_span(event, span)
        self.expanded += 1
        if self.expanded > self.limits.max_expanded_nodes:
            self._refuse_size(span)
        tag = event.tag
        if tag is not None and tag != "!" and tag not in SCALAR_TAGS:
            self.diagnostics.append(_diag(yaml_syntax.SLUG, unsupported(tag), span, tag_hint(tag)))
            tag = "!"
        top = self.stack[-1] if self.stack else None
        if top is not None and top.key is _EXPECT_KEY:
            merge = tag is None and event.implicit[0] and event.value == "<<"
            self._key(top, ScalarNode(event.value, span), merge)
            if not event.anchor:
                return
            node = ScalarNode(self._value(event, tag, span), span)
        else:
            node = ScalarNode(self._value(event, tag, span), span)
            self._add(node, 1, span)
        if event.anchor:
            self.anchors[event.anchor] = (node, 1, event.value)

    def _block_span(self, event: ScalarEvent, span: SourceSpan) -> SourceSpan:
        """The span of a block scalar's content when it is the one line after the
        indicator line (checked against the text), else `span` (from the indicator)."""
        value = event.value
        if "\n" in value.rstrip("\n"):
            return span
        if self._lines is None:
            self._lines = YAML_BREAK.split(self.text)
        index = span.line  # 0-based index of the line after the indicator's
        if index >= len(self._lines):
            return span
        line = self._lines[index]
        content = line.lstrip(" ")
        if not content or content != value.rstrip("\n"):
            return span
        column = len(line) - len(content) + 1
        return SourceSpan(self.file, index + 1, column, index + 1, column + len(content))

    def _value(self, event: ScalarEvent, tag: str | None, span: SourceSpan) -> Scalar:
        value = event.value
        if tag is None:
            if not event.implicit[0]:
                return value  # quoted or block: a string
            tag = implicit_tag(value)
            if tag == STR:
                return value
        try:
            return typed_value(tag, value)
        except (ValueError, OverflowError, IndexError) as error:  # IndexError: belt and braces
            shown = value if len(value) <= 40 else value[:37] + "..."
            message = f"{shown!r} is not a valid {short_tag(tag)}: {str(error)[:100]}"
            self.diagnostics.append(_diag(yaml_syntax.SLUG, message, span))
        return value  # an invalid typed value stays its text

    def _alias(self, event: AliasEvent) -> None:
        span = event_span(self.file, event)
        name = event.anchor or ""
        entry = self.anchors.get(name)
        if entry is None:  # our own check: PyYAML would build a cyclic graph
            problem = "points into its own node" if name in self.anchors else "is not defined"
            raise Refused(_diag(yaml_syntax.SLUG, f"the alias *{name} {problem}", span))
        self.aliases += 1
        if self.aliases > self.limits.max_aliases:
            message = f"more than {self.limits.max_aliases} aliases (`*name`) in one file"
            raise Refused(_diag(yaml_limits.SLUG, message, span))
        node, size, text = entry
        self._grow(size, span)
        top = self.stack[-1] if self.stack else None
        if top is not None and top.key is _EXPECT_KEY and text is not None:
            self._key(top, ScalarNode(text, span), merge=False)
        else:
            self._add(node, size, span)

    def _key(self, frame: _Frame, key: ScalarNode, merge: bool) -> None:
        frame.size += 1
        frame.end = (key.span.end_line, key.span.end_column)
        text = str(key.value)
        first = frame.seen.get(text)
        if merge:
            message = "merge keys (`<<`) are not supported: write the keys out in full"
            self.diagnostics.append(_diag(yaml_syntax.SLUG, message, key.span))
            frame.key = _SKIP
        elif first is not None:
            message = f"duplicate key {text!r} (first defined at line {first})"
            owner = self.stack[-2].key if len(self.stack) > 1 else None
            notes = duplicate_key_hint(
                text, str(owner.value) if isinstance(owner, ScalarNode) else None
            )
            self.diagnostics.append(_diag(duplicate_key.SLUG, message, key.span, notes))
            frame.key = _SKIP
        else:
            frame.seen[text] = key.span.line
            frame.key = key

    def _start(self, event: CollectionStartEvent) -> None:
        is_map = isinstance(event, MappingStartEvent)
        mark = event.start_mark
        if (
            mark is None
            or len(self.stack) >= self.limits.max_depth
            or self.expanded >= self.limits.max_expanded_nodes
            or event.tag not in (None, "!", MAP if is_map else SEQ)
        ):
            self._checked_start(event, is_map)
        else:  # within every limit: no span is made for the start alone
            self.expanded += 1
        if event.anchor:
            self.anchors[event.anchor] = None
        start = (1, 1) if mark is None else (mark.line + 1, mark.column + 1)
        self.stack.append(_Frame(event, start, is_map))

    def _checked_start(self, event: CollectionStartEvent, is_map: bool) -> None:
        """The checks of a collection's start that may report, with its span."""
        span = event_span(self.file, event)
        if len(self.stack) >= self.limits.max_depth:
            message = f"nesting deeper than {self.limits.max_depth} levels"
            raise Refused(_diag(yaml_limits.SLUG, message, span))
        self._grow(1, span)
        if event.tag not in (None, "!", MAP if is_map else SEQ):
            self.diagnostics.append(_diag(yaml_syntax.SLUG, unsupported(event.tag or ""), span))

    def _end(self, event: CollectionEndEvent) -> None:
        frame = self.stack.pop()
        if frame.flow:
            closing = event.end_mark
            frame.end = (1, 1) if closing is None else (closing.line + 1, closing.column + 1)
        span = new_span(self.file, *frame.start, *frame.end)
        node: Node
        if frame.key is None:
            node = SequenceNode(tuple(frame.items), span)
        else:
            node = MappingNode(tuple(frame.pairs), span)
        if frame.anchor:
            self.anchors[frame.anchor] = (node, frame.size, None)
        self._add(node, frame.size, span)

    def _add(self, node: Node, size: int, span: SourceSpan) -> None:
        if not self.stack:
            self.root = node
            return
        top = self.stack[-1]
        top.size += size
        top.end = (span.end_line, span.end_column)
        key = top.key
        if key is None:
            top.items.append(node)
        elif key is _EXPECT_KEY:  # a collection where a key should be
            message = "a mapping key must be a scalar (a name), not a list or a mapping"
            self.diagnostics.append(_diag(yaml_syntax.SLUG, message, span))
            top.key = _SKIP
        else:
            if isinstance(key, ScalarNode):
                top.pairs.append((key, node))
            top.key = _EXPECT_KEY
