"""JSON Schema errors explained: one positioned `Diagnostic` each, in the DSL's terms.

Worded as the DSL speaks (state, transition, effect, field spec, guard,
invariant), never a schema dump. The wording comes from the schema itself: a
definition's `title` names the construct (object definitions end in
" mapping"), and the `$comment` of a name pattern says in words what the
pattern allows.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

from jsonschema.exceptions import ValidationError

from statekit.compiler.diagnostics import Diagnostic, Severity, SourceSpan
from statekit.compiler.rules import schema as schema_rule
from statekit.compiler.schema.document import Schema, schema
from statekit.compiler.source.nodes import MappingNode, Node, node_at
from statekit.compiler.source.yaml_hints import mapping_hint

JsonPath = tuple[str | int, ...]

_UNIONS = ("oneOf", "anyOf")
_TYPE_WORDS = {
    "object": "a mapping",
    "array": "a list",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "null": "null",
}


def explain_errors(
    errors: Iterable[ValidationError], root: Node, file: str
) -> tuple[Diagnostic, ...]:
    """One positioned `schema` diagnostic per problem the errors describe, sorted, no duplicates."""
    problems: list[_Problem] = []
    for error in errors:
        for leaf in _leaves(error):
            problems.extend(_explain(leaf, root))
    problems = _drop_noise(problems)
    found: dict[tuple[SourceSpan, str], Diagnostic] = {}
    for problem in problems:
        span = _span(problem.node, file)
        found.setdefault(
            (span, problem.message),
            Diagnostic(
                slug=schema_rule.SLUG,
                severity=Severity.ERROR,
                message=problem.message,
                span=span,
                notes=problem.notes,
            ),
        )
    return tuple(sorted(found.values(), key=Diagnostic.sort_key))


# --- choosing the errors to report ----------------------------------------------


def _leaves(error: ValidationError) -> Iterator[ValidationError]:
    """The errors worth reporting: inside a failed oneOf/anyOf, those of the branch meant.

    A branch is meant when the value has the branch's type (a mapping for a
    transition mapping, a string for a state reference); among several, the
    one whose keys fit best. When no branch has the value's type, the union
    error itself is reported, as "expected A, B or C, got D"; so it is when
    several mapping forms fit equally badly (an empty invariant), as "needs
    'when' (a state invariant) or 'assert' (an expression invariant)".
    """
    if error.validator not in _UNIONS or not error.context:
        yield error
        return
    branches: dict[int, list[ValidationError]] = {}
    for sub in error.context:
        branches.setdefault(cast(int, sub.relative_schema_path[0]), []).append(sub)
    viable = {
        index: subs
        for index, subs in branches.items()
        if not any(sub.validator == "type" and not sub.relative_path for sub in subs)
    }
    if not viable:
        yield error
        return
    options = cast(Sequence[Schema], error.validator_value)
    scores = {
        index: (_fit(error.instance, _resolve(options[index])), -len(subs))
        for index, subs in viable.items()
    }
    best = max(scores.values())
    chosen = [index for index, score in scores.items() if score == best]
    if len(chosen) > 1 and _forms(cast(Schema, error.schema)):
        yield error
        return
    for sub in viable[chosen[0]]:
        yield from _leaves(sub)


def _fit(instance: object, branch: Schema) -> float:
    """How well a mapping's keys fit an object branch: known keys count 1, near misses 0.5."""
    if not isinstance(instance, dict) or "properties" not in branch:
        return 0.0
    known = list(branch["properties"])
    return sum(
        1.0 if key in known else 0.5 if difflib.get_close_matches(key, known, n=1) else 0.0
        for key in instance
    )


# --- explaining one error -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Problem:
    """One explained error, before positions become spans and duplicates are dropped."""

    node: Node
    message: str
    notes: tuple[str, ...]
    path: JsonPath
    validator: str
    key: str = ""  # the unknown or missing key the problem is about
    suggestion: str = ""  # for an unknown key: the allowed key it is probably meant to be


def _explain(error: ValidationError, root: Node) -> Iterator[_Problem]:
    path = cast(JsonPath, tuple(error.absolute_path))
    node = node_at(root, path)
    keyword = str(error.validator)
    where = _Where(error)
    here = cast(Schema, error.schema)

    def problem(message: str, *notes: str, at: Node = node, **about: str) -> _Problem:
        return _Problem(at, message, tuple(notes), path, keyword, **about)

    if keyword == "additionalProperties" and isinstance(error.instance, dict):
        allowed = list(here.get("properties", {}))
        for key in error.instance:
            if key in allowed:
                continue
            matches = _close(key, allowed)
            notes = [f"did you mean {match!r}?" for match in matches]
            if path and key in schema()["properties"]:
                notes.append(f"{key!r} is a chart key: it is allowed only at the top of the file")
            yield problem(
                f"unknown key {key!r} in {_construct(here, path)} (allowed: {', '.join(allowed)})",
                *notes,
                at=_key_node(node, key),
                key=key,
                suggestion=matches[0] if matches else "",
            )
    elif keyword == "required" and isinstance(error.instance, dict):
        for key in cast(list[str], error.validator_value):
            if key in error.instance:
                continue
            described = _describe_property(here, key)
            location = "" if not path else f" in {_construct(here, path)}"
            yield problem(
                f"missing required key {key!r}{location}",
                *([f"{key}: {described}"] if described else []),
                key=key,
            )
    elif keyword in _UNIONS and isinstance(error.instance, dict) and (forms := _forms(here)):
        yield problem(f"{where.subject()} needs {forms}")
    elif keyword == "type" or keyword in _UNIONS:
        expected = _expected(here)
        hints = _type_hints(here, error.instance)
        got = _kind(error.instance)
        if not path and error.instance is None:
            yield problem(f"the document is empty: expected {expected}", *hints)
        elif not path:
            yield problem(f"expected {expected}, got {got}", *hints)
        else:
            yield problem(f"expected {expected} for {where.subject()}, got {got}", *hints)
    elif keyword == "pattern":
        if where.in_property_names:
            node = _key_node(node, str(error.instance))
        rule = here.get("$comment", f"must match {here['pattern']}")
        yield problem(
            f"invalid {here.get('title', 'value')} {error.instance!r}: {rule}",
            at=node,
        )
    elif keyword == "not" and isinstance(error.instance, dict) and _exclusive(here):
        keys = cast(list[str], cast(Schema, here["not"])["required"])
        yield problem(
            f"{where.subject()} has both {' and '.join(repr(k) for k in keys)}: give only one",
            f"{_article(_noun(here))} takes {' or '.join(repr(k) for k in keys)}, not both",
            at=_key_node(node, keys[-1]),
        )
    elif keyword == "enum":
        values = [str(v) for v in cast(list[object], error.validator_value)]
        what = (
            f"{here['title']} {error.instance!r}"
            if "title" in here
            else f"value {error.instance!r} for {where.subject()}"
        )
        near = _close(str(error.instance), values) if isinstance(error.instance, str) else []
        yield problem(
            f"invalid {what}: expected one of {', '.join(values)}",
            *(f"did you mean {match!r}?" for match in near),
        )
    elif keyword == "const":
        constant = json.dumps(error.validator_value)
        yield problem(
            f"{where.subject()} can only be {constant}, got {json.dumps(error.instance)}",
            f"omit {where.subject()} unless it is {constant}",
        )
    elif keyword in ("minimum", "maximum"):
        bound = "at least" if keyword == "minimum" else "at most"
        got = str(error.instance)
        got = got if len(got) <= 40 else f"{got[:37]}... ({len(got)} characters)"
        yield problem(f"{where.subject()} must be {bound} {error.validator_value}, got {got}")
    elif keyword in ("minItems", "maxItems") and here.get("minItems") == here.get("maxItems"):
        count = len(error.instance) if isinstance(error.instance, list) else 0
        yield problem(f"{where.subject()} lists exactly {here['minItems']} items, got {count}")
    elif keyword in ("minLength", "minItems"):
        yield problem(f"{where.subject()} must not be empty")
    elif keyword in ("minProperties", "maxProperties"):
        yield problem(_count_message(here, error.instance, where, path))
    elif keyword == "uniqueItems" and isinstance(error.instance, list):
        seen: list[object] = []
        duplicate: object = None
        for item in error.instance:
            if item in seen:
                duplicate = item
                break
            seen.append(item)
        yield problem(f"{where.subject()} lists {duplicate!r} more than once")
    else:
        yield problem(f"{where.subject()}: {error.message}")


def _exclusive(here: Schema) -> bool:
    """`not: {required: [a, b]}`: keys of which a mapping may have one, not all."""
    excluded = here.get("not")
    return isinstance(excluded, dict) and set(excluded) == {"required"}


def _count_message(here: Schema, instance: object, where: _Where, path: JsonPath) -> str:
    keys = list(here.get("properties", {}))
    if here.get("minProperties") == here.get("maxProperties") == 1 and keys:
        construct = _construct(here, path)
        options = _join(keys)
        if isinstance(instance, dict) and instance:
            given = ", ".join(repr(k) for k in instance)
            return f"{_article(construct)} has exactly one key ({options}), got {given}"
        return f"{_article(construct)} has exactly one key ({options}), got none"
    return f"{where.subject()} must not be empty"


def _type_hints(here: Schema, instance: object) -> tuple[str, ...]:
    title = _resolve(here).get("title")
    if title == "state mapping" and instance is None:
        return ("write {} for a state without keys",)
    if title == "list of effects" and isinstance(instance, dict):
        return ("effects are a list: write each one as an item (- assign: ...)",)
    if title == "delay" and isinstance(instance, int | float):
        return (
            "a delay is a string: a delay literal (250ms, 30s, 15m, 2h, 7d, 1h30m) or an "
            "expression in milliseconds",
        )
    if title == "expression" and isinstance(instance, int | float):
        return (f"an expression is a string: write '{json.dumps(instance)}' for this literal",)
    return mapping_hint(instance) if _resolve(here).get("type") == "object" else ()


def _drop_noise(problems: list[_Problem]) -> list[_Problem]:
    """Drop errors that an unknown key at the same mapping already explains.

    `{asign: ...}` as an effect is one problem (a misspelt key), not also "an
    effect has exactly one key"; `{evnt: X}` is not also "missing key 'event'",
    and a timer `{delai: 5s}` is not also "needs 'delay' or 'at'".
    """
    unknown = {p.path for p in problems if p.validator == "additionalProperties"}
    meant = {(p.path, p.suggestion) for p in problems if p.suggestion}
    misspelt = {path for path, _ in meant}
    return [
        p
        for p in problems
        if not (p.validator in ("minProperties", "maxProperties") and p.path in unknown)
        and not (p.validator == "required" and (p.path, p.key) in meant)
        and not (p.validator in _UNIONS and p.path in misspelt)  # `{delai: 5s}` needs 'delay'
    ]


def _forms(union: Schema) -> str:
    """For a mapping that fits no form of a union: `'when' (a state invariant) or 'assert' (...)`.

    Empty when some branch has no required keys (then the ordinary errors say more).
    """
    forms: list[str] = []
    target_union = _resolve(union)
    branches = [b for keyword in _UNIONS for b in target_union.get(keyword, [])]
    for branch in branches:
        target = _resolve(branch)
        if target.get("type") != "object":
            continue
        if not target.get("required"):
            return ""
        keys = " and ".join(repr(k) for k in target["required"])
        forms.append(f"{keys} ({_article(_noun(target))})")
    return " or ".join(forms) if len(forms) > 1 else ""


# --- words ------------------------------------------------------------------------


class _Where:
    """Names the value an error is about, from the schema path the validator followed."""

    def __init__(self, error: ValidationError) -> None:
        self.path = tuple(error.absolute_path)
        self.labels: list[str] = []
        self.in_property_names = False
        node: Any = schema()
        previous: object = None
        for part in error.absolute_schema_path:
            node = _resolve(node)
            if previous == "properties":
                self.labels.append(repr(part))
            elif part == "additionalProperties":
                self.labels.append(_name_label(node))
            elif part == "items":
                self.labels.append("item")
            elif part == "propertyNames":
                self.in_property_names = True
            previous = part
            try:
                node = node[part]
            except (KeyError, IndexError, TypeError):
                break

    def subject(self) -> str:
        """`'version'`, `state 'idle'`, `event 'GO'`, `item 2 of 'do'`, or `the chart`."""
        if len(self.labels) != len(self.path):
            return repr(self.path[-1]) if self.path else "the chart"
        return self._label(len(self.path) - 1)

    def _label(self, index: int) -> str:
        if index < 0:
            return "the chart"
        step = self.path[index]
        if isinstance(step, int):
            return f"item {step + 1} of {self._label(index - 1)}"
        return self.labels[index].format(name=step)


def _name_label(mapping: Any) -> str:
    names = _resolve(mapping.get("propertyNames", {})) if isinstance(mapping, dict) else {}
    title = str(names.get("title", ""))
    if title.endswith(" name"):
        return title.removesuffix(" name") + " {name!r}"
    return "{name!r}"


def _resolve(node: Any) -> Any:
    """Follow local `$ref`s (the schema only has `#/definitions/...` references)."""
    while isinstance(node, dict) and "$ref" in node:
        node = schema()["definitions"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def _construct(here: Schema, path: JsonPath) -> str:
    """The DSL construct of the mapping at `path`: `transition`, `state`, `statechart`."""
    return _noun(here) if path else "statechart"


def _noun(here: Schema) -> str:
    """A mapping definition's title without " mapping": `transition`, `state invariant`."""
    return str(_resolve(here).get("title", "mapping")).removesuffix(" mapping")


def _expected(here: Schema) -> str:
    """What a value should have been, in DSL words: `a state reference or a transition mapping`."""
    return _join(list(dict.fromkeys(_phrases(here))))


def _join(words: Sequence[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + f" or {words[-1]}"


def _phrases(node: Any) -> Iterator[str]:
    node = _resolve(node)
    for union in _UNIONS:
        if union in node:
            for branch in node[union]:
                yield from _phrases(branch)
            return
    types = node.get("type", [])
    words = [_TYPE_WORDS.get(name, name) for name in ([types] if isinstance(types, str) else types)]
    if "title" not in node:
        yield from words
    elif len(words) > 1:  # `a default value (a string, a number, a boolean or null)`
        yield f"{_article(str(node['title']))} ({_join(words)})"
    else:
        yield _article(str(node["title"]))


def _article(noun: str) -> str:
    return f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"


def _kind(instance: object) -> str:
    if instance is None:
        return "null"
    if isinstance(instance, bool):
        return "a boolean"
    if isinstance(instance, int):
        return "an integer"
    if isinstance(instance, float):
        return "a number"
    if isinstance(instance, str):
        return "a string"
    if isinstance(instance, list):
        return "a list"
    return "a mapping"


def _describe_property(here: Schema, key: str) -> str:
    prop = _resolve(here).get("properties", {}).get(key, {})
    return str(prop.get("description", ""))


def _close(word: str, candidates: Iterable[str]) -> list[str]:
    return difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)


# --- positions --------------------------------------------------------------------


def _key_node(node: Node, key: str) -> Node:
    """The key node itself when `node` is a mapping with that key, else `node`."""
    if isinstance(node, MappingNode):
        found = node.key_node(key)
        if found is not None:
            return found
    return node


def _span(node: Node, file: str) -> SourceSpan:
    return node.span if node.span.file == file else replace(node.span, file=file)
