"""What the loader accepts: its `Limits`, and the checks on the raw text before any parser.

The size and encoding are checked first, then a cheap pre-scan bounds the
nesting from above (some libyaml builds crash, uncatchably, around 25,000
levels). A check that fails raises `Refused`, which carries the diagnostic.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import Final

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.rules import yaml_limits, yaml_syntax

MAX_INTEGER_DIGITS: Final = 4300
"""An integer the loader builds, in any notation (decimal, hex, octal, binary,
sexagesimal), has at most this many decimal digits: Python's own bound on
converting an integer to text, which the digest and the JSON encoder do."""
INTEGER_BOUND: Final = 10**MAX_INTEGER_DIGITS
"""Every integer the loader builds is strictly between -INTEGER_BOUND and INTEGER_BOUND."""

_DEEPEST_ALLOWED: Final = 500  # keeps recursive walkers such as `to_plain` clear of RecursionError
_PRESCAN_MAX_NESTING: Final = 5_000  # far below where libyaml crashes, above any allowed depth


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on what `load_yaml` accepts; a file beyond one gets a `yaml-limits` error.

    `max_expanded_nodes` counts the nodes the document would have if every
    alias were expanded. `max_depth` may not exceed 500 (ValueError otherwise).

    The node count is what bounds memory and time (every node is kept with its
    position and checked against the schema); the byte count only keeps the
    read bounded. A generated chart of 5,000 states and 25,000 transitions
    (1.3 MB, 183,000 nodes) fits both defaults; a file of the same size made of
    the smallest nodes (`0,` in a flow list: two bytes a node) is refused by
    the node count long before its end.
    """

    max_bytes: int = 4 << 20
    max_depth: int = 100
    max_aliases: int = 100
    max_expanded_nodes: int = 250_000

    def __post_init__(self) -> None:
        if min(self.max_bytes, self.max_depth, self.max_aliases, self.max_expanded_nodes) < 0:
            raise ValueError(f"limits must not be negative: {self}")
        if self.max_depth > _DEEPEST_ALLOWED:
            raise ValueError(f"max_depth is at most {_DEEPEST_ALLOWED}, got {self.max_depth}")


DEFAULT_LIMITS: Final = Limits()

_LINE_PREFIX: Final = re.compile(r"^[ \t?:-]*", re.MULTILINE)


class Refused(Exception):
    """Abandons the document; carries the one diagnostic that explains why."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def _diag(slug: str, message: str, span: SourceSpan) -> Diagnostic:
    return Diagnostic(slug=slug, severity=Severity.ERROR, message=message, span=span)


def point(file: str, line: int, column: int) -> SourceSpan:
    """The empty span at a 1-based line and column."""
    return SourceSpan(file=file, line=line, column=column, end_line=line, end_column=column)


def char_position(text: str, offset: int) -> tuple[int, int]:
    """The 1-based line and column of a character offset into `text`."""
    return text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset)


def byte_position(data: bytes, offset: int) -> tuple[int, int]:
    """The 1-based line and (character) column of a byte offset into UTF-8 `data`."""
    line_start = data.rfind(b"\n", 0, offset) + 1
    column = len(data[line_start:offset].decode("utf-8", "replace")) + 1
    return data.count(b"\n", 0, offset) + 1, column


def decode(source: bytes | str, file: str, limits: Limits) -> tuple[str, bytes]:
    """The text and its UTF-8 bytes without a BOM, after the size and encoding checks."""
    check_size(len(source), file, limits)  # a str has at least as many bytes as characters
    if isinstance(source, str):
        text = source.removeprefix("\ufeff")
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError as error:  # lone surrogates in a str
            where = point(file, *char_position(text, error.start))
            raise Refused(_diag(yaml_syntax.SLUG, "the text is not valid Unicode", where)) from None
        check_size(len(data), file, limits)
        return text, data
    data = source.removeprefix(codecs.BOM_UTF8)
    other = _other_encoding(data)
    if other is not None:
        message = f"the file is {other}, not UTF-8: save it as UTF-8"
        raise Refused(_diag(yaml_syntax.SLUG, message, SourceSpan.start_of(file)))
    try:
        return data.decode("utf-8"), data
    except UnicodeDecodeError as error:
        message = f"the file is not valid UTF-8: byte 0x{data[error.start]:02x}"
        where = point(file, *byte_position(data, error.start))
        raise Refused(_diag(yaml_syntax.SLUG, message, where)) from None


# Byte-order marks, UTF-32 first (its little-endian mark starts with UTF-16's).
_BOMS: Final = (
    (codecs.BOM_UTF32_LE, "UTF-32 (little-endian, with a byte-order mark)"),
    (codecs.BOM_UTF32_BE, "UTF-32 (big-endian, with a byte-order mark)"),
    (codecs.BOM_UTF16_LE, "UTF-16 (little-endian, with a byte-order mark)"),
    (codecs.BOM_UTF16_BE, "UTF-16 (big-endian, with a byte-order mark)"),
)


def _other_encoding(data: bytes) -> str | None:
    """The encoding the bytes are evidently in when it is not UTF-8: a byte-order mark
    of UTF-16 or UTF-32, or the zero bytes that those put around an ASCII first
    character (a YAML file never starts with U+0000)."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name
    head = data[:4]
    if len(head) < 4 or b"\0" not in head:
        return None
    ascii_first = (head[0] != 0 and head[1:] == b"\0\0\0", head[:3] == b"\0\0\0" and head[3] != 0)
    if any(ascii_first):
        return f"UTF-32 ({'little' if ascii_first[0] else 'big'}-endian)"
    if head[0] != 0 and head[1] == 0 and head[2] != 0 and head[3] == 0:
        return "UTF-16 (little-endian)"
    if head[0] == 0 and head[1] != 0 and head[2] == 0 and head[3] != 0:
        return "UTF-16 (big-endian)"
    return None


def check_size(size: int, file: str, limits: Limits) -> None:
    """Refuse a text of more than `limits.max_bytes` bytes."""
    if size > limits.max_bytes:
        message = f"the file has {size} bytes or more, over the limit of {limits.max_bytes}"
        raise Refused(_diag(yaml_limits.SLUG, message, SourceSpan.start_of(file)))


def prescan(text: str, file: str) -> None:
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
        where = point(file, prefixes.index(longest) + 1, 1)
        raise Refused(_diag(yaml_limits.SLUG, f"indentation {longest} deep: {message}", where))
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
            where = point(file, *char_position(text, match.start()))
            raise Refused(_diag(yaml_limits.SLUG, f"brackets nested: {message}", where))
