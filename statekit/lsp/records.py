"""Plain frozen records the navigation functions return; the server converts them to LSP.

Lines and characters are 0-based as in LSP; a character is a code point of the
line (LSP's `utf-32` position encoding; a server speaking `utf-16` converts).
The enums carry LSP's numeric codes so the conversion is a lookup.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True, order=True)
class Position:
    """A place between two characters: 0-based line and character (code points)."""

    line: int
    character: int


@dataclass(frozen=True, slots=True, order=True)
class Range:
    """A stretch of the document; the end is exclusive."""

    start: Position
    end: Position

    def contains(self, position: Position) -> bool:
        """Whether `position` lies inside or at either end of the range."""
        return self.start <= position <= self.end


@dataclass(frozen=True, slots=True)
class TextEdit:
    """Replace the text of `range` with `new_text`."""

    range: Range
    new_text: str


class CompletionKind(enum.IntEnum):
    """LSP CompletionItemKind codes of the items statekit offers."""

    FIELD = 5
    VARIABLE = 6
    CLASS = 7
    FUNCTION = 3
    EVENT = 23
    CONSTANT = 21
    MODULE = 9
    UNIT = 11


@dataclass(frozen=True, slots=True)
class CompletionItem:
    """One completion: `label` shown, `edit` applied (replacing the word being typed)."""

    label: str
    kind: CompletionKind
    detail: str
    edit: TextEdit
    documentation: str | None = None


@dataclass(frozen=True, slots=True)
class Hover:
    """Markdown shown for the name under the cursor, and the range of that name."""

    markdown: str
    range: Range


class SymbolKind(enum.IntEnum):
    """LSP SymbolKind codes used in the outline."""

    MODULE = 2
    NAMESPACE = 3
    CLASS = 5
    FIELD = 8
    FUNCTION = 12
    EVENT = 24
    CONSTANT = 14


@dataclass(frozen=True, slots=True)
class DocumentSymbol:
    """One outline entry: `range` the whole construct, `selection_range` its name."""

    name: str
    kind: SymbolKind
    detail: str
    range: Range
    selection_range: Range
    children: tuple[DocumentSymbol, ...] = field(default=())


@dataclass(frozen=True, slots=True)
class RenameOutcome:
    """The edits of a rename, or why it is refused (`refusal` set, `edits` empty)."""

    edits: tuple[TextEdit, ...] = ()
    refusal: str | None = None


@dataclass(frozen=True, slots=True)
class CodeAction:
    """A quick fix: its title, the edits, and the slug of the finding it fixes."""

    title: str
    edits: tuple[TextEdit, ...]
    fixes: str
    preferred: bool = False
