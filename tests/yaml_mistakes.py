"""Common YAML mistakes in a chart, each with where the error is reported and a phrase
of the hint that says what to do: one table for the compiler, `statekit lint` and the
language server, so that all three are proved to give the same advice."""

from __future__ import annotations

from typing import NamedTuple


class Mistake(NamedTuple):
    name: str
    text: str
    line: int
    column: int
    hint: str  # a phrase of the note that gives the hint
    slug: str = "yaml-syntax"


HEAD = "statechart: c\ninitial: idle\n"

# fmt: off
MISTAKES: tuple[Mistake, ...] = (
    Mistake(
        "colon-in-value",
        HEAD + "states:\n  idle:\n    description: wait: for it\n",
        5, 22, 'quote the whole value: `description: "wait: for it"`',
    ),
    Mistake(
        "colon-in-list-item",
        HEAD + "states:\n  idle:\n    entry:\n      - log: a: b\n",
        6, 15, '`- log: "a: b"`',
    ),
    Mistake(
        "colon-quoted-value-kept",
        HEAD + "states:\n  idle:\n    description: say \"a\": b\n",
        5, 25, "`description: 'say \"a\": b'`",
    ),
    Mistake(
        "tab-indentation",
        HEAD + "states:\n\tidle: {}\n",
        4, 1, "a tab in the indentation: YAML indents with spaces only",
    ),
    Mistake(
        "tab-nested-indentation",
        HEAD + "states:\n  idle:\n  \ton: {}\n",
        5, 3, "a tab in the indentation",
    ),
    Mistake(
        "key-under-scalar",
        "statechart: c\ninitial: idle\n  states:\n    idle: {}\n",
        3, 9, "`states:` is indented under line 2 (`initial: idle`), which already has a value",
    ),
    Mistake(
        "nested-key-under-scalar",
        HEAD + "states:\n  idle: {}\n  done: final\n    on: {}\n",
        6, 7, "start `on:` in column 3",
    ),
    Mistake(
        "colon-in-continued-text",
        HEAD + "description: waits for the order,\n  then ships: never before\n"
        "states:\n  idle: {}\n",
        4, 13, "a `: ` in text that goes on from line 3: quote the whole value",
    ),
    Mistake(
        "unclosed-double-quote",
        'statechart: c\ndescription: "hello\ninitial: idle\nstates:\n  idle: {}\n',
        6, 1, 'the " opened at line 2, column 14 is never closed: add the closing " at the '
        'end of the value (a " inside "..." is written \\")',
    ),
    Mistake(
        "unclosed-single-quote",
        "statechart: c\ndescription: 'it''s\ninitial: idle\nstates:\n  idle: {}\n",
        6, 1, "the ' opened at line 2, column 14 is never closed",
    ),
    Mistake(
        "unclosed-brace",
        HEAD + "states:\n  idle: {on: {GO: busy}\n  busy: {}\n",
        5, 3, "the `{` opened at line 4, column 9 is not closed: add `}`",
    ),
    Mistake(
        "unclosed-bracket",
        "statechart: c\nevents: [GO, STOP\ninitial: idle\nstates:\n  idle: {}\n",
        3, 8, "the `[` opened at line 2, column 9 is not closed: add `]`",
    ),
    Mistake(
        "colon-inside-braces",
        HEAD + "states: {idle: {description: a: b}}\n",
        3, 31, "inside `{...}` a `: ` separates a key from its value",
    ),
    Mistake(
        "list-item-among-keys",
        HEAD + "states:\n  idle: {}\n  - busy\n",
        5, 3, "a list item (`- `) among mapping keys",
    ),
    Mistake(
        "key-among-list-items",
        HEAD + "events:\n  - GO\n  STOP: {}\nstates:\n  idle: {}\n",
        5, 3, "a mapping key among list items (the list at line 4, column 3)",
    ),
    Mistake(
        "indentation-matches-nothing",
        HEAD + "states:\n    idle: {}\n  busy: {}\n",
        5, 3, "this line's indentation matches no mapping above it",
    ),
    Mistake(
        "star-starts-value",
        HEAD + "description: *bold* text\nstates:\n  idle: {}\n",
        3, 19, "'*' at the start of a value means an alias",
    ),
    Mistake(
        "ampersand-starts-value",
        HEAD + "description: & more\nstates:\n  idle: {}\n",
        3, 15, "'&' at the start of a value means an anchor",
    ),
    Mistake(
        "at-starts-value",
        HEAD + "description: @team\nstates:\n  idle: {}\n",
        3, 14, '`description: "@team"`',
    ),
    Mistake(
        "backtick-starts-value",
        HEAD + "description: `GO` starts it\nstates:\n  idle: {}\n",
        3, 14, '`description: "`GO` starts it"`',
    ),
    Mistake(
        "percent-starts-value",
        HEAD + "description: %50 off\nstates:\n  idle: {}\n",
        3, 14, '`description: "%50 off"`',
    ),
    Mistake(
        "question-starts-value",
        HEAD + "description: ? maybe\nstates:\n  idle: {}\n",
        3, 14, "'?' at the start of a value means a complex key",
    ),
    Mistake(
        "bang-negates-in-braces",
        HEAD + "events: {GO: {}}\nstates:\n  idle:\n    on:\n      GO: {to: idle, if: !ctx.done}\n",
        7, 35, "an expression negates with `not`: `not ctx.done`",
    ),
    Mistake(
        "bang-negates-a-guard",
        HEAD + "events: {GO: {}}\nstates:\n  idle:\n    on:\n      GO:\n        if: !ctx.done\n",
        8, 13, "an expression negates with `not`: `not ctx.done`",
    ),
    Mistake(
        "bang-starts-value",
        HEAD + "description: !urgent fix\nstates:\n  idle: {}\n",
        3, 14, "`!` at the start of a value is a YAML tag: quote the value",
    ),
    Mistake(
        "brace-starts-expression",
        HEAD + "states:\n  idle:\n    on:\n      GO: {to: idle, if: {n} > 1}\n",
        6, 30, "quote the value of `if`",
    ),
    Mistake(
        "brace-starts-value",
        HEAD + "description: {n} > 1\nstates:\n  idle: {}\n",
        3, 20, 'a value that starts with `{` is a YAML mapping: quote the whole value: '
        '`description: "{n} > 1"`',
    ),
    Mistake(
        "text-after-block-indicator",
        HEAD + "description: > n > 1\nstates:\n  idle: {}\n",
        3, 16, "`|` or `>` starts a block of text on the lines below it",
    ),
    Mistake(
        "text-after-closing-quote",
        HEAD + 'description: "GO" starts it\nstates:\n  idle: {}\n',
        3, 19, "text after a closing quote: quote the whole value",
    ),
    Mistake(
        "no-space-after-colon",
        HEAD + "states:\n  idle:{}\n",
        4, 3, "YAML needs a space after `:` to start a value: write `idle: {}`", "schema",
    ),
    Mistake(
        "no-space-after-event",
        HEAD + "events: {GO: {}}\nstates:\n  idle:\n    on:\n      GO:idle\n",
        7, 7, "write `GO: idle`", "schema",
    ),
    Mistake(
        "entries-level-with-their-key",
        HEAD + "context: {n: {type: integer, default: 0}}\nstates:\n  idle:\n    entry:\n"
        "      - assign:\n        n: 1\n",
        7, 16, "nothing is indented under it: indent its entries deeper than its key", "schema",
    ),
    Mistake(
        "event-written-twice",
        HEAD + "events: {GO: {}}\nstates:\n  idle:\n    on:\n      GO: idle\n      GO: done\n"
        "  done: {final: true}\n",
        8, 7, "list them under one key: `GO: [{to: a, if: ...}, {to: b}]`", "duplicate-key",
    ),
    Mistake(
        "duplicate-key",
        HEAD + "states:\n  idle: {}\n  idle: {}\n",
        5, 3, "duplicate key 'idle' (first defined at line 4)", "duplicate-key",
    ),
)
# fmt: on
