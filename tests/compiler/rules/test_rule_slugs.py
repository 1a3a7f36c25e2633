"""Every slug the compiler reports is a constant owned by a registered compile-stage rule.

The compiler cites `<rule module>.SLUG`, never a string: a static walk over
`statekit/compiler/**` finds any slug written as a literal where a diagnostic
is made, and every fixture's compile diagnostics must carry a registered slug.
"""

from __future__ import annotations

import ast
import pkgutil
from collections.abc import Iterator
from pathlib import Path

import statekit.compiler
import statekit.compiler.rules
from statekit.compiler.pipeline import compile_file
from statekit.lint.registry import RULE_MODULES, RULES

COMPILER = Path(statekit.compiler.__file__ or "").parent
RULES_FOLDER = COMPILER / "rules"
FIXTURES = Path(__file__).parents[2] / "lint" / "fixtures" / "rules"
COMPILE_SLUGS = {slug for slug, rule in RULES.items() if rule.stage == "compile"}


def _compiler_modules() -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted(COMPILER.rglob("*.py")):
        if RULES_FOLDER not in path.parents:
            yield path, ast.parse(path.read_text(encoding="utf-8"))


def _literal_slugs(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """String literals that sit where a slug goes: a `Diagnostic(...)` slug or any call argument."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            args = [*node.args, *(k.value for k in node.keywords)]
            name = node.func.id if isinstance(node.func, ast.Name) else None
            first = node.args[0] if node.args else None
            slug_kw = [k.value for k in node.keywords if k.arg == "slug"]
            if name == "Diagnostic":
                for value in [first, *slug_kw]:
                    if isinstance(value, ast.Constant) and isinstance(value.value, str):
                        yield value.lineno, value.value
            for arg in args:
                for inner in ast.walk(arg):
                    if isinstance(inner, ast.Constant) and inner.value in COMPILE_SLUGS:
                        yield inner.lineno, str(inner.value)
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if node.value is not None and any(
                isinstance(t, ast.Name) and "slug" in t.id.lower() for t in targets
            ):
                yield from _values(node.value)


def _values(node: ast.expr) -> Iterator[tuple[int, str]]:
    """The string literals an expression can evaluate to (through conditionals)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.lineno, node.value
    elif isinstance(node, ast.IfExp):
        yield from _values(node.body)
        yield from _values(node.orelse)
    elif isinstance(node, ast.BoolOp):
        for value in node.values:
            yield from _values(value)


def test_no_diagnostic_in_the_compiler_is_made_with_a_literal_slug() -> None:
    found = [
        f"{path.relative_to(COMPILER)}:{line}: {slug!r}"
        for path, tree in _compiler_modules()
        for line, slug in _literal_slugs(tree)
    ]
    assert found == []


def test_the_static_check_recognises_a_literal_slug() -> None:
    tree = ast.parse(
        'Diagnostic("whatever", Severity.ERROR, "m", span)\n'
        '_diag("yaml-syntax", "m", span)\n'
        'slug = "a" if x else "b"\n'
    )
    assert sorted(_literal_slugs(tree)) == [(1, "whatever"), (2, "yaml-syntax"), (3, "a"), (3, "b")]


def test_every_compiler_rule_module_is_a_registered_compile_stage_rule() -> None:
    names = {m.name for m in pkgutil.iter_modules(statekit.compiler.rules.__path__)}
    compiler_rules = [m for m in RULE_MODULES if m.__name__.startswith("statekit.compiler.rules.")]
    assert {m.__name__.rsplit(".", 1)[1] for m in compiler_rules} == names
    assert {m.SLUG for m in compiler_rules} == COMPILE_SLUGS
    assert all(m.STAGE == "compile" for m in compiler_rules)


def test_every_cited_slug_constant_belongs_to_a_compiler_rule() -> None:
    """`x.SLUG` in the compiler names a module imported from `statekit.compiler.rules`."""
    for path, tree in _compiler_modules():
        rule_names = {
            alias.asname or alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module == "statekit.compiler.rules"
            for alias in node.names
        }
        cited = {
            node.value.id
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute)
            and node.attr == "SLUG"
            and isinstance(node.value, ast.Name)
        }
        assert cited <= rule_names, path


def test_the_compiler_never_imports_lint() -> None:
    for path, tree in _compiler_modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                assert not (node.module or "").startswith("statekit.lint"), path
            if isinstance(node, ast.Import):
                assert not any(a.name.startswith("statekit.lint") for a in node.names), path


def test_every_slug_the_compiler_reports_on_the_fixtures_is_a_compile_stage_rule() -> None:
    seen: set[str] = set()
    for path in sorted(FIXTURES.glob("*.yaml")):
        seen.update(d.slug for d in compile_file(path).diagnostics)
    assert seen <= COMPILE_SLUGS
    assert len(seen) > 5
