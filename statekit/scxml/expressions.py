"""The W3C tests' simple datamodel expressions, in statekit's expression language.

A small tokenizer, not an ECMAScript parser: numbers, quoted strings, names of
declared `<data>`, `true`/`false`/`null`, comparison, arithmetic and logical
operators, parentheses, and `In('state')`. Each is rewritten token for token
where the meaning is the same (`Var1` → `ctx.Var1`, `&&` → `and`, `===` →
`==`, `In('s1')` → `active('s1')`, python's `x is None` / `x is not None` as
statekit's null tests); anything else (`_event`, member access,
other calls, `typeof`, assignment) is refused by name. Types are then checked
by statekit's compiler like any expression of a chart.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from statekit.scxml.boolean_or import NotBooleanOr, boolean_ors
from statekit.scxml.event_binding import event_bound
from statekit.scxml.io_processors import IO_PROCESSORS, NoProcessorEntry, location_read
from statekit.scxml.raw_search import raw_searches
from statekit.scxml.text_calls import method_call_end, regex_search, string_method
from statekit.scxml.type_tests import hasattr_event

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<number>\d+(?:\.\d+)?)
      | (?P<string>'[^'\\]*'|"[^"\\]*")
      | (?P<name>[A-Za-z_$][A-Za-z0-9_$]*)
      | (?P<op>===|!==|==|!=|<=|>=|&&|\|\||[-+*/%<>!(),.\[\]{}=?:;|])
    )""",
    re.VERBOSE,
)
_OPERATORS = {"===": "==", "!==": "!=", "&&": "and", "||": "or", "!": "not"}
_PLAIN = {"==", "!=", "<=", ">=", "<", ">", "+", "-", "*", "/", "%", "(", ")", "[", "]", ","}
_LITERALS = {
    "true": "true",
    "false": "false",
    "null": "null",
    "True": "true",
    "False": "false",
    "None": "null",
}
_EQUALITY = {"==": "is None", "===": "is None", "!=": "is not None", "!==": "is not None"}
_EQUALITY_WORDS = {"==", "===", "!=", "!=="}
_KEYWORDS = {"and", "or", "not", "in"}  # the W3C suite's `python` datamodel writes these
CONTENT_FIELD = "content"
"""The payload field a `<send>`'s `<content>` is sent in: `_event.data` as a whole."""
_SYSTEM = {"_event", "_sessionid", "_name", "_ioprocessors", "_x"}


class UnsupportedExpression(ValueError):
    """An expression (or a part of it) that has no statekit equivalent; the message names it."""


def translate(
    text: str,
    data_names: frozenset[str],
    state_id: Callable[[str], str | None],
    system: Mapping[str, str] | None = None,
    boolean_data: frozenset[str] | None = None,
) -> str:
    """`text` in statekit's expression language; `state_id` checks `In('x')`'s argument
    (None: a state that is never active, a history pseudo-state: `In` is false);
    `system` gives the system variables that are constants (`_name`) as literals;
    `boolean_data`, the boolean `<data>` of a condition (None: `text` is no condition)."""
    constants = system or {}
    searched, computed = raw_searches(text)
    try:
        tokens = boolean_ors(_tokens(searched), boolean_data)
    except NotBooleanOr as error:
        raise UnsupportedExpression(str(error)) from None
    out: list[str] = []
    index = 0
    while index < len(tokens):
        kind, value = tokens[index]
        if kind == "string" and value in computed:  # statekit text already (raw_search)
            out.append(computed[value])
            index += 1
            continue
        if (method := string_method(tokens, index)) is not None:  # x.startswith(...
            out.append(f"{method[0]}({_word(kind, value, data_names)},")
            index = method[1]
            continue
        if kind == "name" and (search := regex_search(tokens, index, data_names)) is not None:
            out.append(search[0])
            index = search[1]
            continue
        if kind == "name" and value == "In":
            if [t[1] for t in tokens[index + 1 : index + 4 : 2]] != ["(", ")"] or (
                tokens[index + 2][0] != "string"
            ):
                raise UnsupportedExpression("In(...) with an argument other than one state id")
            state = state_id(tokens[index + 2][1][1:-1])
            out.append("false" if state is None else f"active('{state}')")
            index += 4
            continue
        if kind == "name" and (shape := hasattr_event(tokens, index)) is not None:
            out.append(shape)  # the fields of `_event` are SCXML's, known at import
            index += 6
            continue
        if kind == "name" and value in constants:
            out.append(constants[value])
            index += 1
            continue
        if kind == "name" and (bound := event_bound(tokens, index)) is not None:
            out.append(bound)  # `<if cond="_event">`: whether an event is bound yet
            index += 1
            continue
        if kind == "name" and value == "_event":
            index = _event_read(tokens, index, out, constants)
            continue
        if kind == "name" and value == IO_PROCESSORS:
            try:
                location, index = location_read(tokens, index)
            except NoProcessorEntry as error:
                raise UnsupportedExpression(str(error)) from None
            out.append(location)
            continue
        if kind == "name" and value in _SYSTEM:
            raise UnsupportedExpression(f"the system variable {value}")
        if kind == "name" and index + 1 < len(tokens) and tokens[index + 1][1] in ".[(":
            follow = tokens[index + 1][1]
            what = "a call" if follow == "(" else "member access"
            raise UnsupportedExpression(f"{what} ({value}{follow}...)")
        following = tokens[index + 1][1] if index + 1 < len(tokens) else ""
        if value in _EQUALITY and _LITERALS.get(following) == "null":
            out.append(_EQUALITY[value])  # `x == null`: statekit writes `x is None`
            index += 2
            continue
        if kind == "name" and value == "is":  # python's `x is None` / `x is not None`
            index = _null_test(tokens, index, out)
            continue
        if value == "!" and not _negates_one_operand(tokens, index):
            raise UnsupportedExpression("'!' before a comparison (write it with parentheses)")
        out.append(_word(kind, value, data_names))
        index += 1
    return " ".join(out)


_EVENT_FIELDS = {"name", "type", "origin", "invokeid", "sendid", "origintype"}


def _event_read(
    tokens: list[tuple[str, str]], index: int, out: list[str], system: Mapping[str, str]
) -> int:
    """`_event.name` / `.type` / `.origin` / `.invokeid` / `.data.<field>` as statekit's
    `_event` reads them (an event name compared with a literal is written as statekit
    names the event: `foo.bar` → `foo__bar`); the index after it."""
    words = [t[1] for t in tokens[index + 1 : index + 5]]
    if words[:1] != ["."] or len(words) < 2 or not re.match(r"^[A-Za-z_]", words[1]):
        raise UnsupportedExpression("the system variable _event's value as a whole")
    if words[1] == "raw":  # the raw HTTP request (statekit.scxml.http_sends)
        out.append("_event.data.raw")
        return index + 3
    if words[1] in _EVENT_FIELDS:
        out.append(system.get(f"_event.{words[1]}", f"_event.{words[1]}"))  # generated ids
        index += 3
        if words[1] == "name" and len(words) >= 4 and words[2] in _EQUALITY_WORDS:
            literal = tokens[index + 1]
            if literal[0] == "string":
                out.append(_OPERATORS.get(words[2], words[2]))
                out.append(literal[1].replace(".", "__"))
                return index + 2
        return index
    call = [t[1] for t in tokens[index + 5 : index + 8]]
    if words[1:4] == ["data", ".", "get"] and len(call) == 3 and call[0] == "(":
        name = call[1][1:-1]
        if tokens[index + 6][0] == "string" and call[2] == ")" and name.isidentifier():
            out.append(f"_event.data.{name}")  # python's data.get('x')
            return index + 8
    if words[1:3] == ["data", "["] and _subscript(tokens, index + 4):  # data['x']: a field
        out.append(f"_event.data.{tokens[index + 4][1][1:-1]}")
        return index + 6
    if words[1] == "data" and words[2:3] != ["."]:  # the data as a whole: a <content>
        out.append(f"_event.data.{CONTENT_FIELD}")
        return index + 3
    if words[1] == "data" and words[2:3] == ["."] and len(words) == 4:
        field = words[3]
        follow = tokens[index + 5][1] if index + 5 < len(tokens) else ""
        if re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", field) and follow not in (".", "[", "("):
            out.append(f"_event.data.{field}")
            return index + 5
    raise UnsupportedExpression(f"the system variable _event's {words[1]}{''.join(words[2:3])}...")


def _null_test(tokens: list[tuple[str, str]], index: int, out: list[str]) -> int:
    """`is None` / `is not None` (the `python` datamodel's null tests) as statekit's
    `is None` / `is not None`; `is` before anything else is refused. The index after it."""
    words = [t[1] for t in tokens[index + 1 : index + 3]]
    negated = words[:1] == ["not"]
    if _LITERALS.get(words[1 if negated else 0] if len(words) > negated else "") != "null":
        raise UnsupportedExpression("'is' other than 'is None' / 'is not None'")
    out.append("is not None" if negated else "is None")
    return index + (3 if negated else 2)


def _subscript(tokens: list[tuple[str, str]], at: int) -> bool:
    """Whether `tokens[at]` is a string naming a field, closed by `]`."""
    return (
        at + 1 < len(tokens)
        and tokens[at][0] == "string"
        and tokens[at][1][1:-1].isidentifier()
        and tokens[at + 1][1] == "]"
    )


def _negates_one_operand(tokens: list[tuple[str, str]], index: int) -> bool:
    """`!` means Python's `not` only before parentheses or one operand that ends the
    clause (`!a == b` is `(!a) == b` in ECMAScript, `not (a == b)` in Python)."""
    rest = [value for _, value in tokens[index + 1 :]]
    if rest[:2] == ["In", "("] and rest[3:4] == [")"]:
        rest = ["In()", *rest[4:]]  # one operand: `!In('s1') && ...`
    if (end := method_call_end(rest)) is not None:
        rest = ["x.method()", *rest[end:]]  # one operand: `!ref.endsWith('x') && ...`
    if rest[:2] == ["_event", "."]:
        rest = ["_event.x", *rest[3:]]  # one operand: `!_event.origin`
    return bool(rest) and (rest[0] == "(" or len(rest) == 1 or rest[1] in ("&&", "||", ")"))


def _word(kind: str, value: str, data_names: frozenset[str]) -> str:
    if kind in ("number", "string"):
        return value
    if kind == "name":
        if value in _LITERALS:
            return _LITERALS[value]
        if value in _KEYWORDS:
            return value
        if value in data_names:
            return f"ctx.{value}"
        raise UnsupportedExpression(f"the name {value!r} (not a declared <data>)")
    if value in _OPERATORS:
        return _OPERATORS[value]
    if value in _PLAIN:
        return value
    raise UnsupportedExpression(f"the operator {value!r}")


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    position = 0
    stripped = text.rstrip()
    while position < len(stripped):
        match = _TOKEN.match(stripped, position)
        if match is None or match.end() == position:
            raise UnsupportedExpression(f"the text {stripped[position : position + 12]!r}")
        kind = match.lastgroup or ""
        tokens.append((kind, match.group(kind)))
        position = match.end()
    if not tokens:
        raise UnsupportedExpression("an empty expression")
    return tokens
