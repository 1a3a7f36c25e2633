"""An expression's text parsed once: the duration literals found and Python's AST, kept by text.

Parsing depends on the text alone (not on the chart's declarations), so the parse of
a text that parses cleanly is kept and shared: by every expression of a chart with
the same text, and by the next compile of an edited chart, where almost every
expression is unchanged (the language server compiles the whole chart on each edit).
On bench/lsp_latency.py's 500-state chart finding the durations, parsing and bounding
the depth were about 13 µs of each expression's compile.

Only a clean parse is kept: a text with anything to report (a duration out of range,
a syntax error, nesting past `MAX_DEPTH`) gets None here, and the checker's own path
reports it at its columns, as before. The trees are shared: nothing may change them.
"""

from __future__ import annotations

import ast
import warnings
from functools import lru_cache
from typing import Final

from statekit.compiler.expressions.durations import DurationLiterals, find_durations
from statekit.compiler.expressions.language import MAX_DEPTH, MAX_SOURCE_LENGTH, depth_exceeds

KEPT_PARSES: Final = 4096
"""The most texts whose parse is kept (each at most `MAX_SOURCE_LENGTH` characters)."""


def python_parse(text: str) -> ast.Expression:
    """`ast.parse` in eval mode without the parser's warnings (e.g. "invalid decimal
    literal" for `1if x else 2`); raises what `ast.parse` raises."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return ast.parse(text, mode="eval")


@lru_cache(maxsize=KEPT_PARSES)
def clean_parse(text: str) -> tuple[DurationLiterals, ast.expr] | None:
    """The duration literals of `text` and the body of its AST, when both are found with
    nothing to report; None otherwise (the caller checks the text the long way)."""
    if len(text) > MAX_SOURCE_LENGTH:
        return None
    durations = find_durations(text)
    if durations.problems:
        return None
    try:
        tree = python_parse(durations.text)
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        return None
    if depth_exceeds(tree.body, MAX_DEPTH):
        return None
    return durations, tree.body
