"""A positioned, hostile-safe reading of an SCXML file.

The parser is the standard library's expat (`xml.parsers.expat`) driven
directly, not `xml.etree`: its handlers see `CurrentLineNumber` and
`CurrentColumnNumber` at every start tag, which is what a positioned error
needs. Hostile input is refused rather than defused: any `<!DOCTYPE` is an
error (so no internal or external entity is ever declared, hence no billion
laughs and no external fetch), parameter-entity parsing is off, and the file
size, nesting depth and attribute length are bounded. Bytes that are not in
the declared encoding (UTF-8 by default) are expat's positioned error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from xml.parsers import expat

from statekit.compiler.source.files import describe_non_regular, read_chart_bytes

SCXML_NS = "http://www.w3.org/2005/07/scxml"
MAX_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64
MAX_ATTRIBUTE_CHARS = 64 * 1024


class ScxmlError(ValueError):
    """An SCXML file statekit cannot read or express, at file:line:col."""

    def __init__(self, path: str, line: int, column: int, message: str) -> None:
        super().__init__(f"{path}:{line}:{column}: error[scxml] {message}")
        self.path = path
        self.line = line
        self.column = column
        self.message = message


@dataclass
class Element:
    """One element: local tag name, attributes, children, 1-based line and column."""

    tag: str
    attrs: dict[str, str]
    line: int
    column: int
    namespace: str = ""
    children: list[Element] = field(default_factory=list)
    text: str = ""
    text_at: tuple[int, int] | None = None
    """Where `text` starts (line, column), for errors inside it (a `<script>`'s)."""

    def kids(self, *tags: str) -> list[Element]:
        """The children with one of `tags` (all children when none is given)."""
        return [c for c in self.children if not tags or c.tag in tags]


class _Builder:
    def __init__(self, path: str, parser: expat.XMLParserType) -> None:
        self.path = path
        self.parser = parser
        self.stack: list[Element] = []
        self.root: Element | None = None

    def where(self) -> tuple[int, int]:
        return self.parser.CurrentLineNumber, self.parser.CurrentColumnNumber + 1

    def fail(self, message: str) -> ScxmlError:
        line, column = self.where()
        return ScxmlError(self.path, line, column, message)

    def start(self, name: str, attrs: dict[str, str]) -> None:
        if len(self.stack) >= MAX_DEPTH:
            raise self.fail(f"elements nested deeper than {MAX_DEPTH} levels")
        for key, value in attrs.items():
            if len(value) > MAX_ATTRIBUTE_CHARS:
                raise self.fail(
                    f"attribute {key!r} is {len(value)} characters long "
                    f"(at most {MAX_ATTRIBUTE_CHARS})"
                )
        namespace, _, tag = name.rpartition(" ")
        line, column = self.where()
        plain = {k.rpartition(" ")[2]: v for k, v in attrs.items() if " " not in k}
        element = Element(tag, plain, line, column, namespace)
        if self.stack:
            self.stack[-1].children.append(element)
        else:
            self.root = element
        self.stack.append(element)

    def end(self, name: str) -> None:
        self.stack.pop()

    def text(self, data: str) -> None:
        if self.stack:
            if self.stack[-1].text_at is None:
                self.stack[-1].text_at = self.where()
            self.stack[-1].text += data

    def doctype(self, *args: object) -> None:
        raise self.fail("a <!DOCTYPE> is not accepted (no DTDs, no entity declarations)")


def read_scxml(path: str | Path) -> Element:
    """The `<scxml>` root of the file at `path`; `ScxmlError` for anything unreadable."""
    name = str(path)
    problem = describe_non_regular(path)  # never opens it: a FIFO cannot block the read
    if problem is not None:
        raise ScxmlError(name, 1, 1, problem)
    try:
        data = read_chart_bytes(path, MAX_BYTES + 1)
    except OSError as error:
        raise ScxmlError(name, 1, 1, f"cannot read the file: {error.strerror}") from None
    if len(data) > MAX_BYTES:
        raise ScxmlError(
            name, 1, 1, f"the file has {MAX_BYTES + 1} bytes or more, over the limit of {MAX_BYTES}"
        )
    return parse_scxml(data, name)


def parse_scxml(data: bytes, name: str) -> Element:
    """The `<scxml>` root of the document `data` (named `name` in errors)."""
    parser = expat.ParserCreate(namespace_separator=" ")
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    builder = _Builder(name, parser)
    parser.StartElementHandler = builder.start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.text
    parser.StartDoctypeDeclHandler = builder.doctype
    parser.EntityDeclHandler = builder.doctype
    try:
        parser.Parse(data, True)
    except expat.ExpatError as error:
        message = expat.ErrorString(error.code)
        raise ScxmlError(
            name, error.lineno, error.offset + 1, f"not well-formed XML: {message}"
        ) from None
    root = builder.root
    if root is None or root.tag != "scxml" or root.namespace not in ("", SCXML_NS):
        line, column = (root.line, root.column) if root else (1, 1)
        raise ScxmlError(name, line, column, f"the root element is not <scxml> in {SCXML_NS}")
    return root
