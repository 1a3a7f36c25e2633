"""`<script>` whose body is only assignments, as statekit `assign` effects.

statekit never executes code from a chart, and translating a script is not executing
it: its text is parsed with Python's `ast` (parse only: nothing is compiled or run),
and a body that is a sequence of `name = expr` and `name op= expr` statements (op one
of `+ - * / // %`) becomes one `assign` per statement, in order, each `expr`
translated as an `<assign expr>`'s is. Anything else (a `src` file, `def`, `class`,
`import`, a call, `if`, a loop, an assignment to a part of a value) is refused at the
first statement that is not such an assignment, at its line in the SCXML file.

- In executable content (`<onentry>`, `<onexit>`, a transition, `<if>`,
  `<foreach>`), the assigns stand where the `<script>` stands. A name no `<data>`
  declares is declared by the script (SCXML's scripts create variables): a nullable
  field, null until the script first runs, typed by what is assigned to it.
- A `<script>` child of `<scxml>` runs once, when the document starts, after every
  `<data>` is bound. A name it gives a first value to is declared with that value
  as its default (computed at import, as a `<data expr>`'s is); every other
  statement (a name already declared, an `op=`, anything after such a statement) is
  an assignment made by the chart's first microstep, with the start-bound `<data>`
  (`start_binding`). `op=` on a name nothing declares is SCXML's error.execution at
  the start, and the rest of that script does not run.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from statekit.scxml.context import SYSTEM_VARIABLES, ImportContext
from statekit.scxml.data_types import Write
from statekit.scxml.document import Element, ScxmlError

Refuse = Callable[[Element, str], ScxmlError]
_OPERATORS: dict[type[ast.operator], str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
}
_STATEMENTS: dict[type[ast.stmt], str] = {
    ast.FunctionDef: "a function definition",
    ast.AsyncFunctionDef: "a function definition",
    ast.ClassDef: "a class definition",
    ast.Import: "an import",
    ast.ImportFrom: "an import",
    ast.If: "an if statement",
    ast.For: "a loop",
    ast.While: "a loop",
    ast.AnnAssign: "an annotated assignment",
    ast.Delete: "a del statement",
    ast.Return: "a return statement",
}
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_OPAQUE = ("content", "donedata")
_SHOWN = 40


@dataclass(frozen=True)
class ScriptAssignment:
    """One statement `name = value` (`operator` None) or `name op= value`, at `at`
    (an element standing for the statement's position in the SCXML file)."""

    name: str
    operator: str | None
    value: str
    source: str
    at: Element
    grouped: bool = False
    """`op=`'s value needs parentheses after `name op` (`n -= 2 - 1`)."""

    def scxml_value(self) -> str:
        """The value assigned, as an SCXML expression (`name op (value)` for `op=`)."""
        if self.operator is None:
            return self.value
        return f"{self.name} {self.operator} {_grouped(self.value, self.grouped)}"


def script_assignments(script: Element, refuse: Refuse) -> tuple[ScriptAssignment, ...]:
    """The assignments `script`'s body is; a positioned refusal naming the first
    statement that is not one (or the `src` the script would load)."""
    if "src" in script.attrs:
        raise refuse(
            script,
            f"<script src={script.attrs['src']!r}>: a script from a file is not translated "
            "(only a <script> whose body is assignments is)",
        )
    code, margin = _dedented(script.text)
    try:
        module = ast.parse(code, mode="exec")
    except SyntaxError as error:
        at = _position(script, code, margin, error.lineno or 1, (error.offset or 1) - 1)
        raise refuse(at, f"<script>: not Python statements ({error.msg}); {_ONLY}") from None
    return tuple(_assignment(statement, script, code, margin, refuse) for statement in module.body)


def script_effects(script: Element, c: ImportContext) -> list[dict[str, Any]]:
    """A `<script>` in executable content: one `assign` per statement, in order."""
    effects: list[dict[str, Any]] = []
    for assignment in script_assignments(script, c.refuse):
        _check_writable(assignment, c)
        effects.append({"assign": {assignment.name: _statekit_value(assignment, c)}})
    return effects


def declare_script_names(root: Element, c: ImportContext) -> None:
    """After every `<data>` is collected: the names the document's scripts declare,
    the writes they make (for the types of `<data>` without a value), and the top-level
    scripts' assignments at the start (`ImportContext.start_assigns`)."""
    _top_level(root, c)
    for script in _nested_scripts(root):
        for assignment in script_assignments(script, c.refuse):
            _check_writable(assignment, c)
            if assignment.name not in c.data_names():
                at = assignment.at
                c.data.append((Element("data", {"id": assignment.name}, at.line, at.column), None))
            c.writes.append(Write(assignment.name, assignment.at, assignment.scxml_value()))


def script_names(root: Element) -> frozenset[str]:
    """Every name a `<script>` of the document assigns (those it can parse)."""
    names: set[str] = set()
    for script in (*root.kids("script"), *_nested_scripts(root)):
        try:
            module = ast.parse(_dedented(script.text)[0], mode="exec")
        except SyntaxError:
            continue
        for statement in module.body:
            targets = statement.targets if isinstance(statement, ast.Assign) else []
            if isinstance(statement, ast.AugAssign):
                targets = [statement.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return frozenset(names)


def _top_level(root: Element, c: ImportContext) -> None:
    at_start = False  # once one statement assigns at the start, every later one does
    for script in root.kids("script"):
        for assignment in script_assignments(script, c.refuse):
            _check_writable(assignment, c)
            value = _statekit_value(assignment, c)  # refused here when not expressible
            new = assignment.name not in c.data_names()
            if new and assignment.operator is not None:  # SCXML: error.execution
                c.failed_data.append(f"<script> {assignment.source}: {assignment.name} is unset")
                c.note(assignment.at, "the rest of the <script> does not run: it fails here")
                break
            if new:
                at = assignment.at
                data = {"id": assignment.name, "expr": assignment.value}
                c.data.append((Element("data", data, at.line, at.column), assignment.value))
            if not new or at_start:
                c.start_assigns.append({"assign": {assignment.name: value}})
                c.writes.append(Write(assignment.name, assignment.at, assignment.scxml_value()))
                at_start = True


def _statekit_value(assignment: ScriptAssignment, c: ImportContext) -> str:
    value = c.translated(assignment.at, assignment.value)
    if assignment.operator is None:
        return value
    return f"ctx.{assignment.name} {assignment.operator} {_grouped(value, assignment.grouped)}"


def _grouped(value: str, grouped: bool) -> str:
    return f"({value})" if grouped else value


def _check_writable(assignment: ScriptAssignment, c: ImportContext) -> None:
    name = assignment.name
    if name in SYSTEM_VARIABLES or name in c.system:
        raise c.refuse(
            assignment.at,
            f"<script> {assignment.source}: {name} is read-only here (a system variable, "
            "or a <foreach> item its body reads)",
        )


def _assignment(
    statement: ast.stmt, script: Element, code: str, margin: int, refuse: Refuse
) -> ScriptAssignment:
    at = _position(script, code, margin, statement.lineno, statement.col_offset)
    shown = _shown(ast.get_source_segment(code, statement) or "")
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target, operator = statement.targets[0], None
    elif isinstance(statement, ast.AugAssign) and type(statement.op) in _OPERATORS:
        target, operator = statement.target, _OPERATORS[type(statement.op)]
    else:
        raise refuse(at, f"<script> {shown}: {_kind(statement)} is not translated; {_ONLY}")
    if not isinstance(target, ast.Name) or not _NAME.match(target.id):
        raise refuse(at, f"<script> {shown}: an assignment to a part of a value; {_ONLY}")
    value = ast.get_source_segment(code, statement.value) or ""
    return ScriptAssignment(
        target.id, operator, value, shown, at, _needs_parentheses(statement, target.id)
    )


def _needs_parentheses(statement: ast.Assign | ast.AugAssign, name: str) -> bool:
    """Whether `name op value` (an `op=` written out) needs `value` in parentheses:
    Python's own unparsing says so (statekit's operators have Python's precedence)."""
    if not isinstance(statement, ast.AugAssign):
        return False
    plain = f"{name} {_OPERATORS[type(statement.op)]} {ast.unparse(statement.value)}"
    return ast.unparse(ast.BinOp(ast.Name(name), statement.op, statement.value)) != plain


_ONLY = (
    "a <script> is translated when it is only assignments to names "
    "(name = expr, name op= expr), and statekit never executes code from a chart"
)


def _kind(statement: ast.stmt) -> str:
    if isinstance(statement, ast.Assign):
        return "an assignment to several targets"
    if isinstance(statement, ast.AugAssign):
        return "an assignment with another operator"
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        return "a call"
    if isinstance(statement, ast.Expr):
        return "an expression statement"
    return _STATEMENTS.get(type(statement), f"a {type(statement).__name__.lower()} statement")


def _shown(source: str) -> str:
    """A statement as an error shows it: its first line, at most `_SHOWN` characters."""
    first = source.splitlines()[0] if source else ""
    cut = first if len(first) <= _SHOWN and first == source else first[:_SHOWN] + "..."
    return f"`{cut}`"


def _dedented(text: str) -> tuple[str, int]:
    """The script's text without the indentation every line has, and how many
    characters that is (a script is indented as the XML around it)."""
    code = textwrap.dedent(text)
    for before, after in zip(text.split("\n"), code.split("\n"), strict=True):
        if after.strip():
            return code, len(before) - len(after)
    return code, 0


def _position(script: Element, code: str, margin: int, line: int, offset: int) -> Element:
    """An element at the SCXML file's line and column of `code`'s line `line` (1-based)
    and UTF-8 byte offset `offset` in it."""
    lines = code.split("\n")
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    column = len(text.encode("utf-8")[:offset].decode("utf-8", "ignore")) + margin
    first_line, first_column = script.text_at or (script.line, script.column)
    if line == 1:
        return Element("script", {}, first_line, first_column + column)
    return Element("script", {}, first_line + line - 1, column + 1)


def _nested_scripts(root: Element) -> Iterator[Element]:
    """The `<script>`s in executable content (every one but the children of `<scxml>`)."""
    for child in root.children:
        if child.tag not in _OPAQUE:
            yield from _scripts_below(child)


def _scripts_below(element: Element) -> Iterator[Element]:
    for child in element.children:
        if child.tag == "script":
            yield child
        elif child.tag not in _OPAQUE:
            yield from _scripts_below(child)
