"""Messages that say what happened: the encoding a file is in, the limit a chart hit.

The families: every UTF-16 and UTF-32 form (each byte order, with and without
a byte-order mark) named as itself, never one for the other; and the node
limit reached with and without aliases, each named, with how to raise it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import statekit
from statekit import CompileError
from statekit.compiler.source.limits import Limits

TEXT = "statechart: cafe\ndescription: café\ninitial: a\nstates:\n  a: {}\n"

ENCODINGS = [
    ("utf-16", "UTF-16 (little-endian, with a byte-order mark)"),
    ("utf-16-le", "UTF-16 (little-endian)"),
    ("utf-16-be", "UTF-16 (big-endian)"),
    ("utf-32", "UTF-32 (little-endian, with a byte-order mark)"),
    ("utf-32-le", "UTF-32 (little-endian)"),
    ("utf-32-be", "UTF-32 (big-endian)"),
]


def _bom(encoding: str) -> bytes:
    return "\ufeff".encode(encoding)


@pytest.mark.parametrize(("encoding", "named"), ENCODINGS)
@pytest.mark.parametrize("with_bom", [False, True])
def test_a_file_in_utf16_or_utf32_is_named_as_such(
    tmp_path: Path, encoding: str, named: str, with_bom: bool
) -> None:
    data = TEXT.encode(encoding)
    if with_bom and encoding[-3:] in ("-le", "-be"):
        data = _bom(encoding) + data
        named = named.replace(")", ", with a byte-order mark)")
    path = tmp_path / "chart.yaml"
    path.write_bytes(data)
    with pytest.raises(CompileError) as raised:
        statekit.load(path)
    (diagnostic,) = raised.value.diagnostics
    assert diagnostic.message == f"the file is {named}, not UTF-8: save it as UTF-8"
    other = "UTF-16" if "UTF-32" in named else "UTF-32"
    assert other not in diagnostic.message
    assert (diagnostic.span.line, diagnostic.span.column) == (1, 1)


def test_utf8_with_or_without_a_bom_still_loads(tmp_path: Path) -> None:
    for data in (TEXT.encode("utf-8"), TEXT.encode("utf-8-sig")):
        path = tmp_path / "chart.yaml"
        path.write_bytes(data)
        assert statekit.load(path).ir.description == "café"


def _states(count: int) -> str:
    return "statechart: big\nevents: {GO: {}}\ninitial: s0\nstates:\n" + "".join(
        f"  s{i}: {{on: {{GO: s{(i + 1) % count}}}}}\n" for i in range(count)
    )


def test_a_large_chart_without_aliases_names_the_node_limit(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text(_states(50_000), encoding="utf-8")
    with pytest.raises(CompileError) as raised:
        statekit.load(path)
    (diagnostic,) = raised.value.diagnostics
    assert diagnostic.slug == "yaml-limits"
    assert "more than 250000 nodes (mappings, lists and scalars)" in diagnostic.message
    assert "alias" not in diagnostic.message
    assert "`max_expanded_nodes`" in diagnostic.message
    assert any("max_expanded_nodes=" in note for note in diagnostic.notes)


def test_the_note_says_how_to_raise_the_limit_and_raising_it_works(tmp_path: Path) -> None:
    path = tmp_path / "chart.yaml"
    path.write_text(_states(50), encoding="utf-8")
    small = Limits(max_expanded_nodes=100)
    with pytest.raises(CompileError) as raised:
        statekit.load(path, limits=small)
    assert "more than 100 nodes" in raised.value.diagnostics[0].message
    assert statekit.load(path, limits=Limits(max_expanded_nodes=1000)).name == "big"
    assert statekit.compile_chart(path, limits=Limits(max_expanded_nodes=1000)).name == "big"
