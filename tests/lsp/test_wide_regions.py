"""The language server answers on a chart of many independent parallel regions.

Twenty-two regions of three states make 3^22 configurations: explored as their
product, the analysis never ended (the editor got no analysis at all). Explored
compositionally (`statekit.analysis.compositional`), its findings arrive.
"""

from __future__ import annotations

from pathlib import Path

from lsp_session import Editor

REGIONS = 22


def wide_chart(regions: int) -> str:
    """A parallel root of `regions` independent three-state cycles; region r3 also has a
    state nothing leads to, and every region rejects what it does not take."""
    lines = ["statechart: wide", "version: 1", "events:"]
    lines += [f"  GO_{r}: {{}}" for r in range(regions)]
    lines += ["parallel: true", "states:"]
    for r in range(regions):
        lines += [f"  r{r}:", "    initial: a", "    reject: {'*': NOT_HERE}", "    states:"]
        lines += [
            f"      a: {{on: {{GO_{r}: b}}}}",
            f"      b: {{on: {{GO_{r}: c}}}}",
            f"      c: {{on: {{GO_{r}: a}}}}",
        ]
        if r == 3:
            lines.append(f"      orphan: {{on: {{GO_{r}: a}}}}")
    return "\n".join(lines) + "\n"


def test_the_analysis_of_twenty_two_independent_regions_arrives(tmp_path: Path) -> None:
    text = wide_chart(REGIONS)
    path = tmp_path / "wide.yaml"
    editor = Editor(tmp_path)
    try:
        uri = editor.open(path, text)
        assert editor.published(uri, 1) == []  # the compile stage: nothing wrong
        found = editor.analysed(uri)
    finally:
        editor.close()
    orphan = text.splitlines().index(next(x for x in text.splitlines() if "orphan:" in x))
    unreachable = [d for d in found if d["code"] == "unreachable-state"]
    assert [d["range"]["start"]["line"] for d in unreachable] == [orphan]
    assert "analysis-limit" not in {d["code"] for d in found}
