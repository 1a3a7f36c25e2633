"""Fuzzing the whole compiler: it returns a chart or diagnostics, never an exception.

Inputs are mutations of the reference machines (lines dropped, duplicated,
re-indented; words swapped for other words of the file) and random YAML
documents built from DSL keys, so that most inputs get past the parser and
exercise the schema, the resolver and the type checker.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from statekit.compiler.diagnostics import Severity
from statekit.compiler.pipeline import CompileResult, compile_source

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "machines").glob("*.yaml"))]
SOURCES.append((ROOT / "tests/compiler/fixtures/full_chart.yaml").read_text(encoding="utf-8"))
WORDS = sorted({w for text in SOURCES for w in re.findall(r"[A-Za-z_.*']+|\d+|[{}\[\]:,\-]", text)})
DSL_KEYS = [
    "statechart",
    "version",
    "initial",
    "states",
    "parallel",
    "final",
    "history",
    "default",
    "on",
    "always",
    "done",
    "entry",
    "exit",
    "already",
    "reject",
    "to",
    "guard",
    "if",
    "else",
    "do",
    "assign",
    "emit",
    "raise",
    "events",
    "context",
    "guards",
    "invariants",
    "when",
    "require",
    "assert",
    "type",
    "payload",
    "event",
    "lint",
    "ignore",
    "severity",
]


def _check(result: CompileResult) -> None:
    errors = [d for d in result.diagnostics if d.severity is Severity.ERROR]
    assert (result.chart is None) == bool(errors)
    for d in result.diagnostics:
        assert d.span.line >= 1 and d.span.column >= 1
        assert d.message


@st.composite
def mutated_machine(draw: st.DrawFn) -> str:
    lines = draw(st.sampled_from(SOURCES)).splitlines()
    for _ in range(draw(st.integers(1, 6))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["drop", "dup", "indent", "dedent", "word", "cut"]))
        if action == "drop":
            del lines[i]
        elif action == "dup":
            lines.insert(i, lines[i])
        elif action == "indent":
            lines[i] = "  " + lines[i]
        elif action == "dedent":
            lines[i] = lines[i][2:]
        elif action == "word":
            words = re.findall(r"[A-Za-z_.*']+|\d+", lines[i])
            if words:
                old = draw(st.sampled_from(words))
                lines[i] = lines[i].replace(old, draw(st.sampled_from(WORDS)), 1)
        else:
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
    return "\n".join(lines) + "\n"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_machine())
def test_mutated_machines_never_crash_the_compiler(text: str) -> None:
    _check(compile_source(text, "mutant.yaml"))


scalars = st.one_of(
    st.sampled_from(WORDS),
    st.integers(-3, 3),
    st.booleans(),
    st.none(),
    st.sampled_from(["event.amount > 0", "ctx.attempt + 1", "active('running')", "1 +", "x.y"]),
)
documents = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.sampled_from(DSL_KEYS + WORDS[:40]), children, max_size=5),
    ),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(DSL_KEYS), documents, max_size=8))
def test_random_dsl_shaped_documents_never_crash_the_compiler(doc: dict[str, object]) -> None:
    doc.setdefault("statechart", "fuzz")
    text = yaml.safe_dump(doc, sort_keys=False)
    _check(compile_source(text, "random.yaml"))


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_never_crash_the_compiler(data: bytes) -> None:
    _check(compile_source(data, "bytes.yaml"))
