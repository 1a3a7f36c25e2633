"""Safe YAML loading into the positioned tree, with bounded cost for any input.

`load_yaml` turns a statechart file into positioned nodes (`source.nodes`) that keep their
`SourceSpan`, or into diagnostics; it never raises for any input. Why it is
more than `yaml.safe_load`:

- **One checked pass over the event stream, no composer.** PyYAML's composer
  builds a whole node graph before anything can be checked (and its C version
  recurses once per level). We read the parser's events instead (libyaml's C
  parser when present, the pure-Python one otherwise) and build our nodes with
  an explicit stack, checking depth, alias count and expanded size at every
  event: the first event past a limit abandons the document.
- **Aliases are counted as if expanded.** A billion-laughs file has few
  aliases but an astronomical expansion, which later stages (JSON Schema,
  `to_plain`) would walk. We record the expanded size of each anchored node
  and add it at each alias, so such a file is refused after a few thousand
  events. Aliases within the limits become shared nodes, never copies.
- **The C parser is shielded.** Some libyaml builds segfault (uncatchable)
  around 25,000 levels of nesting, so a cheap pre-scan bounds the nesting from
  above before any parser sees the text, and refuses absurd files outright.
- **YAML 1.1 surprises are off.** Only true/false (three spellings each) are
  booleans, so `on:`/`yes:` stay strings; timestamps stay strings; mapping keys
  are their source text; duplicate keys, merge keys (`<<`), complex keys and
  tags beyond the core schema are diagnostics.

Spans are 1-based with an exclusive end; a block collection ends where its
last child ends (not at the next token, which may be lines later). A block
scalar (`|` or `>`) whose content is one line, right after the indicator line,
spans that content line (so that positions inside an expression written as
`if: >-` map onto the file); other block scalars span from their indicator.
A parser error is never placed past the end of the text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final, Protocol

import yaml
from yaml.constructor import SafeConstructor
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
from statekit.compiler.rules import schema as schema_rule
from statekit.compiler.source.limits import (
    DEFAULT_LIMITS,
    INTEGER_BOUND,
    MAX_INTEGER_DIGITS,
    Limits,
    Refused,
    decode,
    prescan,
)
from statekit.compiler.source.marks import YAML_BREAK, event_span, new_span, yaml_error_diagnostic
from statekit.compiler.source.nodes import MappingNode, Node, Scalar, ScalarNode, SequenceNode
from statekit.compiler.source.yaml_hints import duplicate_key_hint, tag_hint

try:
    from yaml._yaml import CParser as _CParser
except ImportError:  # pragma: no cover - libyaml missing: the pure-Python parser is used
    _CParser = None  # type: ignore[assignment,misc]

__all__ = ["load_yaml"]

_TAG: Final = "tag:yaml.org,2002:"
_STR, _INT, _FLOAT, _BOOL, _NULL, _MERGE, _MAP, _SEQ = (
    _TAG + name for name in ("str", "int", "float", "bool", "null", "merge", "map", "seq")
)
_SCALAR_TAGS: Final = frozenset({_STR, _INT, _FLOAT, _BOOL, _NULL})
_BOOL_RE: Final = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")

# Plain-scalar resolution: PyYAML's own YAML 1.1 int, float, null and merge
# resolvers, with our narrow booleans first; no timestamps, no `=` value tag.
_IMPLICIT: Final[dict[str, list[tuple[str, re.Pattern[str]]]]] = {
    first: [(tag, rx) for tag, rx in resolvers if tag in {_INT, _FLOAT, _NULL, _MERGE}]
    for first, resolvers in yaml.resolver.Resolver.yaml_implicit_resolvers.items()
}
for _first in "tTfF":
    _IMPLICIT.setdefault(_first, []).insert(0, (_BOOL, _BOOL_RE))
_CONSTRUCTOR: Final = SafeConstructor()

_EXPECT_KEY: Final = object()  # mapping state: the next node is a key
_SKIP: Final = object()  # mapping state: drop the next value (its key was refused)


def load_yaml(
    source: bytes | str, file: str, limits: Limits = DEFAULT_LIMITS
) -> tuple[Node | None, tuple[Diagnostic, ...]]:
    """Read one statechart document into a positioned tree; every problem is a diagnostic.

    The tree is None when the file cannot be read as one YAML mapping within
    `limits`. Recoverable problems (a duplicate key: the first is kept; an
    unsupported tag; a merge or complex key: dropped) come with the tree, so
    later stages can report more in the same run; any ERROR means failure.
    """
    diagnostics: list[Diagnostic] = []
    root: Node | None = None
    text, data = "", b""
    try:
        text, data = decode(source, file, limits)
        prescan(text, file)
        parser: _Parser = _CParser(data) if _CParser is not None else yaml.SafeLoader(text)
        try:
            root = _check_root(_Builder(file, limits, diagnostics, text).build(parser), file)
        finally:
            parser.dispose()
    except Refused as refused:
        diagnostics.append(refused.diagnostic)
    except yaml.YAMLError as error:
        diagnostics.append(yaml_error_diagnostic(error, file, text, data, _CParser is not None))
    return root, tuple(sorted(diagnostics, key=Diagnostic.sort_key))


class _Parser(Protocol):
    def get_event(self) -> Event | None: ...
    def dispose(self) -> None: ...


def _diag(slug: str, message: str, span: SourceSpan, notes: tuple[str, ...] = ()) -> Diagnostic:
    return Diagnostic(slug, Severity.ERROR, message, span, notes)


_RAISE_NODES: Final = (
    "split the chart, or raise the limit from Python: statekit.load(path, "
    "limits=Limits(max_expanded_nodes=N)), Limits from statekit.compiler.source.limits"
)


def _short_tag(tag: str) -> str:
    return "!!" + tag.removeprefix(_TAG) if tag.startswith(_TAG) else tag


def _unsupported(tag: str) -> str:
    allowed = "!!str, !!int, !!float, !!bool, !!null, !!map, !!seq"
    return f"the tag {_short_tag(tag)} is not supported (allowed: {allowed})"


class _Frame:
    """A mapping or sequence whose events are being read."""

    __slots__ = ("anchor", "end", "flow", "items", "key", "pairs", "seen", "size", "start")

    def __init__(self, event: CollectionStartEvent, start: tuple[int, int], is_map: bool) -> None:
        self.flow = event.flow_style is True
        self.anchor = event.anchor
        self.start = start  # 1-based (line, column)
        self.end = start
        self.size = 1  # nodes with aliases expanded, this collection included
        self.items: list[Node] = []  # a sequence's items
        self.pairs: list[tuple[ScalarNode, Node]] = []  # a mapping's entries
        self.key: object = _EXPECT_KEY if is_map else None  # None: a sequence
        self.seen: dict[str, int] = {}  # key text -> line of its first definition


class _Builder:
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

    def build(self, parser: _Parser) -> Node | None:
        # One look-up by the event's class instead of a chain of isinstance tests; with
        # the spans made by `new_span`, and none for a collection's start alone, the
        # loader of bench/lsp_latency.py's 500-state chart went from 42 to 38 ms
        # (libyaml's events alone take 8-12 ms; the rest is one node per event).
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
        while (event := get_event()) is not None:
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
        if tag is not None and tag != "!" and tag not in _SCALAR_TAGS:
            self.diagnostics.append(_diag(yaml_syntax.SLUG, _unsupported(tag), span, tag_hint(tag)))
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
            resolvers = _IMPLICIT.get(value[:1])
            if not resolvers:
                return value
            tag = next((t for t, rx in resolvers if rx.match(value)), _STR)
        try:
            if tag == _NULL:
                return None
            if tag == _BOOL:
                if _BOOL_RE.match(value):
                    return value.lower() == "true"
                raise ValueError("only true and false (any case) are booleans")
            if tag == _INT:
                return _integer(value)
            if tag == _FLOAT:
                return _CONSTRUCTOR.construct_yaml_float(yaml.ScalarNode(tag, value))
        except (ValueError, OverflowError, IndexError) as error:  # IndexError: belt and braces
            shown = value if len(value) <= 40 else value[:37] + "..."
            message = f"{shown!r} is not a valid {_short_tag(tag)}: {str(error)[:100]}"
            self.diagnostics.append(_diag(yaml_syntax.SLUG, message, span))
        return value  # a string, `!`-tagged, `<<` as a value, or an invalid typed value

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
            or event.tag not in (None, "!", _MAP if is_map else _SEQ)
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
        if event.tag not in (None, "!", _MAP if is_map else _SEQ):
            self.diagnostics.append(_diag(yaml_syntax.SLUG, _unsupported(event.tag or ""), span))

    def _end(self, event: CollectionEndEvent) -> None:
        frame = self.stack.pop()
        if frame.flow:
            closing = event_span(self.file, event)
            frame.end = (closing.end_line, closing.end_column)
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


_TOO_MANY_DIGITS: Final = f"more than {MAX_INTEGER_DIGITS} digits (the limit for chart integers)"


def _integer(value: str) -> int:
    """The integer of a `!!int` scalar in any YAML 1.1 notation, within `INTEGER_BOUND`;
    ValueError otherwise. The literal's own digits are counted before anything is
    built (a long sexagesimal literal would cost quadratic time), the value after."""
    body = value.lstrip("+-").replace("_", "")
    if not body:
        raise ValueError("no digits")
    if len(body) - 2 * (body[:2].lower() in ("0x", "0o", "0b")) > MAX_INTEGER_DIGITS:
        raise ValueError(_TOO_MANY_DIGITS)
    number = _CONSTRUCTOR.construct_yaml_int(yaml.ScalarNode(_INT, value))
    if not isinstance(number, int) or not -INTEGER_BOUND < number < INTEGER_BOUND:
        raise ValueError(_TOO_MANY_DIGITS)
    return number


def _check_root(root: Node | None, file: str) -> Node:
    if root is None or (
        isinstance(root, ScalarNode)
        and root.value is None
        and (root.span.line, root.span.column) == (root.span.end_line, root.span.end_column)
    ):
        message = "the file is empty: a statechart needs at least `statechart:` and `states:`"
        raise Refused(_diag(schema_rule.SLUG, message, SourceSpan.start_of(file)))
    if not isinstance(root, MappingNode):
        what = "a list" if isinstance(root, SequenceNode) else f"the scalar {root.value!r}"
        message = f"the top level must be a mapping (`statechart: ...`, `states: ...`), not {what}"
        raise Refused(_diag(schema_rule.SLUG, message, root.span))
    return root
