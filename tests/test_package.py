"""The package as a whole: its import graph points one way, and its public names all resolve.

The import graph is read from the source with `ast` (every `import` statement,
those under `if TYPE_CHECKING:` and inside functions included), so a cycle
that only type checkers or a late call would follow still fails here.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import statekit
import statekit._version as version_module

PACKAGE_ROOT = Path(statekit.__file__).resolve().parent

# What each part of statekit may import (besides itself and `statekit._version`). The layers:
# compiler ← engine ← analysis ← lint; compiler ← diagrams; engine ← runner ← relay, aio, http;
# runner, analysis, diagrams ← inspect (the web inspector); compiler ← scxml; all ← cli.
ALLOWED: dict[str, set[str]] = {
    "compiler": set(),
    "engine": {"compiler"},
    "analysis": {"compiler", "engine"},
    "lint": {"compiler", "engine", "analysis"},
    "diagrams": {"compiler"},
    "runner": {"compiler", "engine"},
    "relay": {"compiler", "engine", "runner"},
    "aio": {"compiler", "engine", "runner"},
    "http": {"compiler", "engine", "runner"},  # events over HTTP: the poster and the intake
    "testing": {"compiler", "engine", "runner", "analysis", "diagrams", "http"},
    "api": {"compiler", "engine"},
    "lsp": {"compiler", "engine", "analysis", "lint"},
    "inspect": {"compiler", "engine", "analysis", "lint", "diagrams", "runner"},
    "scxml": {"compiler"},  # SCXML in and out: chart files and the IR, as the compiler has them
    "cli": {
        "compiler",
        "engine",
        "analysis",
        "lint",
        "diagrams",
        "runner",
        "api",
        "testing",
        "lsp",
        "relay",
        "inspect",
        "scxml",
    },
    "__main__": {"cli"},  # `python -m statekit`
}
# The package root (`statekit/__init__.py`) names every public entry point lazily.
ROOT_MODULE = "statekit"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE_ROOT.rglob("*.py"))}


def _imported(tree: ast.Module, module: str, is_package: bool) -> Iterator[str]:
    """Every module name an import statement of `tree` names (relative ones made absolute)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                anchor = anchor if is_package else anchor[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


def import_graph() -> dict[str, set[str]]:
    """Module → the statekit modules it imports (a `from m import name` counts as m)."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        targets = _imported(tree, name, path.name == "__init__.py")
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def _part(module: str) -> str | None:
    """The part of statekit a module belongs to (`statekit.engine.step` → `engine`)."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] == "_version":
        return None
    return parts[1]


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_import_graph_has_no_cycle_not_even_a_type_only_one() -> None:
    assert _cycles(import_graph()) == []


def test_every_import_points_down_the_layers() -> None:
    upward = []
    for module, targets in import_graph().items():
        source = _part(module)
        if module == ROOT_MODULE or source is None:
            continue
        assert source in ALLOWED, f"{module}: a new part of statekit; add it to ALLOWED"
        for target in targets:
            part = _part(target)
            if part is not None and part != source and part not in ALLOWED[source]:
                upward.append(f"{module} imports {target}")
    assert upward == []


def test_the_graph_reader_sees_type_only_and_function_local_imports() -> None:
    # the test above is only as good as the reader: it must see every kind of import statement
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from statekit.engine.chart import Chart\n"
        "def late():\n"
        "    import statekit.runner.runner\n"
        "from . import tables\n"
        "from .. import api\n"
    )
    found = set(_imported(ast.parse(source), "statekit.engine.step", is_package=False))
    assert {"statekit.engine.chart", "statekit.runner.runner", "statekit.engine.tables"} <= found
    assert "statekit.api" in found
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _type_checking_exports() -> dict[str, str]:
    """Name → module of the names statekit/__init__.py defines under `if TYPE_CHECKING:`."""
    tree = ast.parse((PACKAGE_ROOT / "__init__.py").read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.Assign):  # `alias = name`, for an entry of _ALIASES
                    (target,) = statement.targets
                    assert isinstance(target, ast.Name) and isinstance(statement.value, ast.Name)
                    assert statekit._ALIASES[target.id] == statement.value.id
                    found[target.id] = found[statement.value.id]
                    continue
                assert isinstance(statement, ast.ImportFrom) and statement.module
                for alias in statement.names:
                    assert alias.asname == alias.name, f"{alias.name}: re-export it as itself"
                    found[alias.name] = statement.module
    return found


def test_the_type_checking_re_exports_are_the_lazy_table() -> None:
    assert _type_checking_exports() == statekit._LAZY
    assert sorted(statekit.__all__) == sorted(["__version__", *statekit._LAZY])


@pytest.mark.parametrize("name", sorted(statekit._LAZY))
def test_every_public_name_resolves_to_its_module_object(name: str) -> None:
    module = importlib.import_module(statekit._LAZY[name])
    assert getattr(statekit, name) is getattr(module, statekit._ALIASES.get(name, name))


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        _ = statekit.nothing_here


def test_the_version_is_one_value() -> None:
    assert statekit.__version__ == version_module.__version__


def test_importing_statekit_imports_no_part_of_it_until_a_name_is_used() -> None:
    code = (
        "import sys, statekit; print(sorted(m for m in sys.modules if m.startswith('statekit.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['statekit._version']"


_HELP_PROBE = """
import json, pydoc, re, statekit
before = sorted(set(statekit._LAZY) & set(vars(statekit)))
listed = dir(statekit)
text = pydoc.render_doc(statekit, renderer=pydoc.plaintext)
print(json.dumps({"before": before, "dir": listed, "help": text}))
"""


def test_dir_and_help_list_every_public_name_before_any_is_used() -> None:
    # a fresh interpreter: no public name has been used (so imported) yet
    done = subprocess.run(
        [sys.executable, "-c", _HELP_PROBE], capture_output=True, text=True, check=True
    )
    seen = json.loads(done.stdout)
    assert seen["before"] == []
    assert set(statekit.__all__) <= set(seen["dir"])
    assert seen["dir"] == sorted(seen["dir"])
    listing = seen["help"].split("\nCLASSES\n", 1)[-1]  # past the docstring
    for name in statekit._LAZY:
        if name in statekit._ALIASES:  # pydoc lists the object once, under its own name
            continue
        assert re.search(rf"^\s+(class )?{name}\b", listing, re.M), name
    assert "__version__" in seen["help"]


def test_the_module_docstring_names_every_public_name() -> None:
    doc = statekit.__doc__ or ""
    assert [name for name in statekit._LAZY if f"`{name}`" not in doc] == []


def _fresh_help() -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", _HELP_PROBE], capture_output=True, text=True, check=True
    )
    seen: dict[str, Any] = json.loads(done.stdout)
    return seen


def test_dir_lists_the_public_names_and_dunders_only() -> None:
    listed = _fresh_help()["dir"]
    hidden = [n for n in listed if not (n in statekit.__all__ or n.startswith("__"))]
    assert hidden == []
    assert "__dir__" not in listed and "__getattr__" not in listed


def test_help_shows_no_module_hooks_and_no_forward_references() -> None:
    text = _fresh_help()["help"]
    functions = text.split("\nFUNCTIONS\n", 1)[1].split("\nDATA\n", 1)[0]
    assert "__dir__" not in functions and "__getattr__" not in functions
    assert "ForwardRef" not in text
    # the named tuples' signatures read as written
    mapping = "payload: collections.abc.Mapping[str, typing.Any]"
    assert f"ArmedTimer(id: str, event: str, {mapping}" in text
    assert f"SentEvent(event: str, {mapping}, id: str | None = None)" in text
