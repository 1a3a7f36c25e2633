"""Safe YAML loading into the positioned tree, with bounded cost for any input.

`load_yaml` turns a statechart file into positioned nodes (`source.nodes`) that keep their
`SourceSpan`, or into diagnostics; it never raises for any input. Why it is
more than `yaml.safe_load`:

- **One checked pass over the event stream, no composer.** PyYAML's composer
  builds a whole node graph before anything can be checked (and its C version
  recurses once per level). We read the parser's events instead (libyaml's C
  parser when present, the pure-Python one otherwise) and build our nodes with
  an explicit stack, checking depth, alias count and expanded size at every
  event: the first event past a limit abandons the document
  (`source.tree_builder`). It is no slower: on bench/lsp_latency.py's 500-state
  chart libyaml's events take 7 ms, while its C composer (`yaml.CSafeLoader`) takes
  12 ms for the node graph without resolving a tag (18 ms with PyYAML's resolver)
  and 28-34 ms once its nodes are turned into ours without any of our checks, about
  what the whole checked load from the events took (33 ms).
- **Aliases are counted as if expanded.** A billion-laughs file has few
  aliases but an astronomical expansion, which later stages (JSON Schema,
  `to_plain`) would walk. We record the expanded size of each anchored node
  and add it at each alias, so such a file is refused after a few thousand
  events. Aliases within the limits become shared nodes, never copies.
- **The C parser is shielded.** Some libyaml builds segfault (uncatchable)
  around 25,000 levels of nesting, so a cheap pre-scan bounds the nesting from
  above before any parser sees the text, and refuses absurd files outright.
- **YAML 1.1 surprises are off** (`source.scalars`). Only true/false (three
  spellings each) are booleans, so `on:`/`yes:` stay strings; timestamps stay
  strings; mapping keys are their source text; duplicate keys, merge keys (`<<`), complex keys and
  tags beyond the core schema are diagnostics.

Spans are 1-based with an exclusive end; a block collection ends where its
last child ends (not at the next token, which may be lines later). A block
scalar (`|` or `>`) whose content is one line, right after the indicator line,
spans that content line (so that positions inside an expression written as
`if: >-` map onto the file); other block scalars span from their indicator.
A parser error is never placed past the end of the text.
"""

from __future__ import annotations

import yaml

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.rules import schema as schema_rule
from statekit.compiler.source.limits import DEFAULT_LIMITS, Limits, Refused, decode, prescan
from statekit.compiler.source.marks import yaml_error_diagnostic
from statekit.compiler.source.nodes import MappingNode, Node, ScalarNode, SequenceNode
from statekit.compiler.source.tree_builder import EventSource, TreeBuilder

try:
    from yaml._yaml import CParser as _CParser
except ImportError:  # pragma: no cover - libyaml missing: the pure-Python parser is used
    _CParser = None  # type: ignore[assignment,misc]

__all__ = ["load_yaml"]


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
        parser: EventSource = _CParser(data) if _CParser is not None else yaml.SafeLoader(text)
        try:
            root = _check_root(TreeBuilder(file, limits, diagnostics, text).build(parser), file)
        finally:
            parser.dispose()
    except Refused as refused:
        diagnostics.append(refused.diagnostic)
    except yaml.YAMLError as error:
        diagnostics.append(yaml_error_diagnostic(error, file, text, data, _CParser is not None))
    return root, tuple(sorted(diagnostics, key=Diagnostic.sort_key))


def _check_root(root: Node | None, file: str) -> Node:
    if root is None or (
        isinstance(root, ScalarNode)
        and root.value is None
        and (root.span.line, root.span.column) == (root.span.end_line, root.span.end_column)
    ):
        message = "the file is empty: a statechart needs at least `statechart:` and `states:`"
        start = SourceSpan.start_of(file)
        raise Refused(Diagnostic(schema_rule.SLUG, Severity.ERROR, message, start))
    if not isinstance(root, MappingNode):
        what = "a list" if isinstance(root, SequenceNode) else f"the scalar {root.value!r}"
        message = f"the top level must be a mapping (`statechart: ...`, `states: ...`), not {what}"
        raise Refused(Diagnostic(schema_rule.SLUG, Severity.ERROR, message, root.span))
    return root
