"""What the commands print, made safe for whoever reads it: the one place for both forms.

Names, IDs, payloads and error texts come from charts and stores that anybody may
have written, and may hold characters a terminal acts on instead of showing: an
escape (U+001B) starts a control sequence, a C1 control (U+009B) is one to some
terminals, a bidirectional override (U+202E) reorders the rest of the line.

- Text lines go through `terminal_text`, which writes each such character as its
  Python escape (`\\x1b`, `\\u202e`).
- JSON keeps every other character as itself (`ensure_ascii=False`: readable
  names stay readable), but the standard library escapes only U+0000-U+001F, so
  `json_text` writes the rest of those characters (DEL, C1 controls, format
  characters, separators, lone surrogates, noncharacters) as JSON escapes
  (`\\u202e`). The value read back is the same string; only its spelling on the
  wire changes. A lone surrogate, which cannot be encoded as UTF-8 at all, is
  printed as its escape instead of failing the output.
"""

from __future__ import annotations

import json
from typing import Any

import click

from statekit.compiler.terminal_text import is_unsafe, terminal_text


def _json_escape(char: str) -> str:
    point = ord(char)
    if point < 0x10000:
        return f"\\u{point:04x}"
    point -= 0x10000  # a UTF-16 surrogate pair, as JSON spells a point past U+FFFF
    return f"\\u{0xD800 + (point >> 10):04x}\\u{0xDC00 + (point & 0x3FF):04x}"


def json_text(data: Any, *, indent: int | None = None, sort_keys: bool = False) -> str:
    """`data` as JSON with every character a reader could act on escaped (see the module
    docstring); other characters are written as themselves."""
    text = json.dumps(data, ensure_ascii=False, indent=indent, sort_keys=sort_keys)
    if text.isascii() and "\x7f" not in text:
        return text  # the common case: nothing past U+007E
    # Everything below U+0020 is already escaped inside strings, and outside them JSON
    # has only its own ASCII punctuation and white space, which must stay as it is.
    return "".join(_json_escape(c) if c >= "\x7f" and is_unsafe(c) else c for c in text)


def echo_json(data: Any, *, indent: int | None = None, sort_keys: bool = False) -> None:
    """Print `data` as one JSON document (`json_text`) on standard output."""
    click.echo(json_text(data, indent=indent, sort_keys=sort_keys))


def echo_text(line: str, *, err: bool = False) -> None:
    """Print one line of text with the characters a terminal could act on escaped."""
    click.echo(terminal_text(line), err=err)
