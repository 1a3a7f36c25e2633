"""Safe YAML loading into the positioned tree, with bounded cost for any input.

`load_yaml` turns a statechart file into `yamltree` nodes that keep their
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

import codecs
import re
from dataclasses import dataclass
from typing import Final, Protocol

import yaml
from yaml.constructor import SafeConstructor
from yaml.events import (
    AliasEvent,
    CollectionEndEvent,
    CollectionStartEvent,
    DocumentStartEvent,
    Event,
    MappingStartEvent,
    ScalarEvent,
)

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.rules import duplicate_key, yaml_limits, yaml_syntax
from statekit.compiler.rules import schema as schema_rule
from statekit.compiler.source.nodes import MappingNode, Node, Scalar, ScalarNode, SequenceNode

try:
    from yaml._yaml import CParser as _CParser
except ImportError:  # pragma: no cover - libyaml missing: the pure-Python parser is used
    _CParser = None  # type: ignore[assignment,misc]

__all__ = ["DEFAULT_LIMITS", "Limits", "load_yaml"]

_DEEPEST_ALLOWED: Final = 500  # keeps recursive walkers such as `to_plain` clear of RecursionError
_PRESCAN_MAX_NESTING: Final = 5_000  # far below where libyaml crashes, above any allowed depth


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on what `load_yaml` accepts; a file beyond one gets a `yaml-limits` error.

    `max_expanded_nodes` counts the nodes the document would have if every
    alias were expanded. `max_depth` may not exceed 500 (ValueError otherwise).
    """

    max_bytes: int = 1 << 20
    max_depth: int = 100
    max_aliases: int = 100
    max_expanded_nodes: int = 100_000

    def __post_init__(self) -> None:
        if min(self.max_bytes, self.max_depth, self.max_aliases, self.max_expanded_nodes) < 0:
            raise ValueError(f"limits must not be negative: {self}")
        if self.max_depth > _DEEPEST_ALLOWED:
            raise ValueError(f"max_depth is at most {_DEEPEST_ALLOWED}, got {self.max_depth}")


DEFAULT_LIMITS: Final = Limits()

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

_LINE_PREFIX: Final = re.compile(r"^[ \t?:-]*", re.MULTILINE)
_YAML_BREAK: Final = re.compile("\r\n|[\r\n\x85\u2028\u2029]")  # line breaks as parsers count them
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
        text, data = _decode(source, file, limits)
        _prescan(text, file)
        parser: _Parser = _CParser(data) if _CParser is not None else yaml.SafeLoader(text)
        try:
            root = _check_root(_Builder(file, limits, diagnostics, text).build(parser), file)
        finally:
            parser.dispose()
    except _Refused as refused:
        diagnostics.append(refused.diagnostic)
    except yaml.YAMLError as error:
        diagnostics.append(_from_yaml_error(error, file, text, data))
    return root, tuple(sorted(diagnostics, key=Diagnostic.sort_key))


class _Parser(Protocol):
    def get_event(self) -> Event | None: ...
    def dispose(self) -> None: ...


class _Refused(Exception):
    """Abandons the document; carries the one diagnostic that explains why."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def _diag(slug: str, message: str, span: SourceSpan) -> Diagnostic:
    return Diagnostic(slug, Severity.ERROR, message, span)


def _point(file: str, line: int, column: int) -> SourceSpan:
    return SourceSpan(file, line, column, line, column)


def _span(file: str, event: Event) -> SourceSpan:
    """The one place where 0-based YAML marks become a 1-based span."""
    start, end = event.start_mark, event.end_mark
    if start is None or end is None:  # parsers always set marks; this keeps the types honest
        return SourceSpan.start_of(file)
    return SourceSpan(file, start.line + 1, start.column + 1, end.line + 1, end.column + 1)


def _char_position(text: str, offset: int) -> tuple[int, int]:
    return text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset)


def _byte_position(data: bytes, offset: int) -> tuple[int, int]:
    line_start = data.rfind(b"\n", 0, offset) + 1
    column = len(data[line_start:offset].decode("utf-8", "replace")) + 1
    return data.count(b"\n", 0, offset) + 1, column


def _decode(source: bytes | str, file: str, limits: Limits) -> tuple[str, bytes]:
    """The text and its UTF-8 bytes without a BOM, after the size and encoding checks."""
    _check_size(len(source), file, limits)  # a str has at least as many bytes as characters
    if isinstance(source, str):
        text = source.removeprefix("\ufeff")
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError as error:  # lone surrogates in a str
            where = _point(file, *_char_position(text, error.start))
            raise _Refused(
                _diag(yaml_syntax.SLUG, "the text is not valid Unicode", where)
            ) from None
        _check_size(len(data), file, limits)
        return text, data
    data = source.removeprefix(codecs.BOM_UTF8)
    try:
        return data.decode("utf-8"), data
    except UnicodeDecodeError as error:
        utf16 = data[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
        hint = " (it looks like UTF-16: save it as UTF-8)" if utf16 else ""
        message = f"the file is not valid UTF-8: byte 0x{data[error.start]:02x}{hint}"
        where = _point(file, *_byte_position(data, error.start))
        raise _Refused(_diag(yaml_syntax.SLUG, message, where)) from None


def _check_size(size: int, file: str, limits: Limits) -> None:
    if size > limits.max_bytes:
        message = f"the file has {size} bytes or more, over the limit of {limits.max_bytes}"
        raise _Refused(_diag(yaml_limits.SLUG, message, SourceSpan.start_of(file)))


def _prescan(text: str, file: str) -> None:
    """Refuse text whose nesting could approach the depth where libyaml crashes.

    Our own safety check, before any parser sees the text. It is an upper bound,
    never an undercount: a block collection starts within the leading spaces and
    indicators (`- `, `? `, `: `) of a line, and at most two nested ones share a
    column, so block depth <= 2 * (longest such prefix + 1); flow depth is at
    most the nesting of every `[`/`{` in the text, inside strings or not.
    """
    prefixes = list(map(len, _LINE_PREFIX.findall(text)))
    longest = max(prefixes, default=0)
    budget = _PRESCAN_MAX_NESTING - 2 * (longest + 1)
    message = f"more than {_PRESCAN_MAX_NESTING} levels of nesting"
    if budget < 0:
        where = _point(file, prefixes.index(longest) + 1, 1)
        raise _Refused(_diag(yaml_limits.SLUG, f"indentation {longest} deep: {message}", where))
    depth = 0
    for char in re.sub(r"[^\[\]{}]+", "", text):  # C-speed filter: loop over brackets only
        depth = depth + 1 if char in "[{" else max(depth - 1, 0)
        if depth > budget:
            break
    else:
        return
    depth = 0  # refusing: find the offending bracket, counting the same way
    for match in re.finditer(r"[\[\]{}]", text):
        depth = depth + 1 if match.group() in "[{" else max(depth - 1, 0)
        if depth > budget:
            where = _point(file, *_char_position(text, match.start()))
            raise _Refused(_diag(yaml_limits.SLUG, f"brackets nested: {message}", where))


def _short_tag(tag: str) -> str:
    return "!!" + tag.removeprefix(_TAG) if tag.startswith(_TAG) else tag


def _unsupported(tag: str) -> str:
    allowed = "!!str, !!int, !!float, !!bool, !!null, !!map, !!seq"
    return f"the tag {_short_tag(tag)} is not supported (allowed: {allowed})"


class _Frame:
    """A mapping or sequence whose events are being read."""

    __slots__ = ("anchor", "end", "flow", "items", "key", "pairs", "seen", "size", "start")

    def __init__(self, event: CollectionStartEvent, span: SourceSpan, is_map: bool) -> None:
        self.flow = event.flow_style is True
        self.anchor = event.anchor
        self.start = span
        self.end = (span.line, span.column)
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
        get_event = parser.get_event
        while (event := get_event()) is not None:
            if isinstance(event, ScalarEvent):
                self._scalar(event)
            elif isinstance(event, CollectionStartEvent):
                self._start(event)
            elif isinstance(event, AliasEvent):
                self._alias(event)
            elif isinstance(event, CollectionEndEvent):
                self._end(event)
            elif isinstance(event, DocumentStartEvent):
                self.documents += 1
                if self.documents > 1:
                    message = "a second YAML document (`---`): one statechart per file"
                    raise _Refused(_diag(yaml_syntax.SLUG, message, _span(self.file, event)))
        return self.root

    def _grow(self, size: int, span: SourceSpan) -> None:
        # Our own bound on the expanded size, checked before the node is kept.
        self.expanded += size
        if self.expanded > self.limits.max_expanded_nodes:
            limit = self.limits.max_expanded_nodes
            message = f"the document has more than {limit} nodes once its aliases are expanded"
            raise _Refused(_diag(yaml_limits.SLUG, message, span))

    def _scalar(self, event: ScalarEvent) -> None:
        span = _span(self.file, event)
        if event.style in ("|", ">"):
            span = self._block_span(event, span)
        self._grow(1, span)
        tag = event.tag
        if tag is not None and tag != "!" and tag not in _SCALAR_TAGS:
            self.diagnostics.append(_diag(yaml_syntax.SLUG, _unsupported(tag), span))
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
            self._lines = _YAML_BREAK.split(self.text)
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
                if not value.lstrip("+-").strip("_"):
                    raise ValueError("no digits")
                return _CONSTRUCTOR.construct_yaml_int(yaml.ScalarNode(tag, value))
            if tag == _FLOAT:
                return _CONSTRUCTOR.construct_yaml_float(yaml.ScalarNode(tag, value))
        except (ValueError, OverflowError, IndexError) as error:  # IndexError: belt and braces
            shown = value if len(value) <= 40 else value[:37] + "..."
            message = f"{shown!r} is not a valid {_short_tag(tag)}: {str(error)[:100]}"
            self.diagnostics.append(_diag(yaml_syntax.SLUG, message, span))
        return value  # a string, `!`-tagged, `<<` as a value, or an invalid typed value

    def _alias(self, event: AliasEvent) -> None:
        span = _span(self.file, event)
        name = event.anchor or ""
        entry = self.anchors.get(name)
        if entry is None:  # our own check: PyYAML would build a cyclic graph
            problem = "points into its own node" if name in self.anchors else "is not defined"
            raise _Refused(_diag(yaml_syntax.SLUG, f"the alias *{name} {problem}", span))
        self.aliases += 1
        if self.aliases > self.limits.max_aliases:
            message = f"more than {self.limits.max_aliases} aliases (`*name`) in one file"
            raise _Refused(_diag(yaml_limits.SLUG, message, span))
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
            self.diagnostics.append(_diag(duplicate_key.SLUG, message, key.span))
            frame.key = _SKIP
        else:
            frame.seen[text] = key.span.line
            frame.key = key

    def _start(self, event: CollectionStartEvent) -> None:
        span = _span(self.file, event)
        if len(self.stack) >= self.limits.max_depth:
            message = f"nesting deeper than {self.limits.max_depth} levels"
            raise _Refused(_diag(yaml_limits.SLUG, message, span))
        self._grow(1, span)
        is_map = isinstance(event, MappingStartEvent)
        if event.tag not in (None, "!", _MAP if is_map else _SEQ):
            self.diagnostics.append(_diag(yaml_syntax.SLUG, _unsupported(event.tag or ""), span))
        if event.anchor:
            self.anchors[event.anchor] = None
        self.stack.append(_Frame(event, span, is_map))

    def _end(self, event: CollectionEndEvent) -> None:
        frame = self.stack.pop()
        start = frame.start
        if frame.flow:
            closing = _span(self.file, event)
            frame.end = (closing.end_line, closing.end_column)
        span = SourceSpan(self.file, start.line, start.column, *frame.end)
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


def _check_root(root: Node | None, file: str) -> Node:
    if root is None or (
        isinstance(root, ScalarNode)
        and root.value is None
        and (root.span.line, root.span.column) == (root.span.end_line, root.span.end_column)
    ):
        message = "the file is empty: a statechart needs at least `statechart:` and `states:`"
        raise _Refused(_diag(schema_rule.SLUG, message, SourceSpan.start_of(file)))
    if not isinstance(root, MappingNode):
        what = "a list" if isinstance(root, SequenceNode) else f"the scalar {root.value!r}"
        message = f"the top level must be a mapping (`statechart: ...`, `states: ...`), not {what}"
        raise _Refused(_diag(schema_rule.SLUG, message, root.span))
    return root


def _from_yaml_error(error: yaml.YAMLError, file: str, text: str, data: bytes) -> Diagnostic:
    """A parser's complaint as a diagnostic at its 1-based position."""
    if isinstance(error, yaml.reader.ReaderError):
        # The C reader reports a byte offset into `data`, the Python one a character offset.
        at = int(error.position)
        where = _byte_position(data, at) if _CParser is not None else _char_position(text, at)
        char = error.character
        shown = f" (U+{char:04X})" if isinstance(char, int) else ""
        return _diag(yaml_syntax.SLUG, f"{error.reason}{shown}", _point(file, *where))
    if not isinstance(error, yaml.MarkedYAMLError):
        return _diag(yaml_syntax.SLUG, str(error), SourceSpan.start_of(file))
    last = _end_of(text)
    mark = error.problem_mark or error.context_mark
    line, column = min((mark.line + 1, mark.column + 1), last) if mark is not None else (1, 1)
    problem = error.problem or error.context or "invalid YAML"
    # libyaml >= 0.2.6 has its own nesting limit (1000): report it as the limit it is.
    slug = yaml_limits.SLUG if "maximum nesting depth" in problem else yaml_syntax.SLUG
    notes: tuple[str, ...] = ()
    if error.problem and error.context and error.context_mark is not None:
        ctx_line, ctx_column = min(
            (error.context_mark.line + 1, error.context_mark.column + 1), last
        )
        notes = (f"{error.context} (line {ctx_line}, column {ctx_column})",)
    return Diagnostic(slug, Severity.ERROR, problem, _point(file, line, column), notes)


def _end_of(text: str) -> tuple[int, int]:
    """The 1-based position just after the last character (a parser may report one
    past it, such as the line after a last line without a line break)."""
    breaks = list(_YAML_BREAK.finditer(text))
    if not breaks:
        return 1, len(text) + 1
    return len(breaks) + 1, len(text) - breaks[-1].end() + 1
