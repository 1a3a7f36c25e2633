"""The shipped JSON Schema document: valid draft-07, self-describing, and equal to the docs."""

from __future__ import annotations

import re

from jsonschema import Draft7Validator
from schema_helpers import (
    DRAFT7_KEYWORDS,
    DSL_DOC,
    SCHEMA_FILE,
    loaded_schema,
    walk,
)

from statekit.compiler.schema import document

# --- the schema document ----------------------------------------------------------


def test_schema_is_valid_draft7() -> None:
    document = loaded_schema()
    assert document["$schema"] == "http://json-schema.org/draft-07/schema#"
    Draft7Validator.check_schema(document)


def test_schema_text_is_the_shipped_file() -> None:
    assert document.schema_text() == SCHEMA_FILE.read_text(encoding="utf-8")
    assert document.schema() == loaded_schema()


def test_schema_uses_only_draft7_keywords() -> None:
    for path, node in walk(loaded_schema()):
        unknown = set(node) - DRAFT7_KEYWORDS
        assert not unknown, f"{'/'.join(map(str, path))}: {unknown}"


def test_every_definition_and_property_has_a_description() -> None:
    document = loaded_schema()
    assert document["description"]
    missing = [
        "/".join(map(str, path))
        for path, node in walk(document)
        if len(path) >= 2
        and path[-2] in ("definitions", "properties")
        and not node.get("description")
    ]
    assert not missing


def test_descriptions_are_one_sentence() -> None:
    for path, node in walk(loaded_schema()):
        text = node.get("description")
        if isinstance(text, str) and not _is_union_branch(path):
            assert text.endswith("."), path
            assert "\n" not in text, path


def _is_union_branch(path: tuple[str | int, ...]) -> bool:
    return len(path) >= 2 and path[-2] in ("oneOf", "anyOf")


def test_union_branches_leave_the_hover_to_the_property() -> None:
    # An editor shows the first description among the schemas a value matched, the
    # matched branch before the property: a branch's empty description lets the
    # property's own text show (tests/editor drives yaml-language-server to check it).
    branches = [(path, node) for path, node in walk(loaded_schema()) if _is_union_branch(path)]
    assert branches
    for path, node in branches:
        assert node.get("description") == "", path


def test_a_property_documents_itself_beside_its_ref() -> None:
    # `description` beside `$ref` (not `allOf: [{$ref}]`, whose definition text an editor
    # shows first); every other keyword beside a `$ref` would be ignored by draft-07.
    for path, node in walk(loaded_schema()):
        if "$ref" in node:
            assert set(node) <= {"$ref", "description", "markdownDescription"}, path
        assert "allOf" not in node, path


def markdown_of(text: str) -> str:
    """`text` as Markdown that shows it: code spans kept, other Markdown punctuation escaped."""
    parts = re.split(r"(`[^`]*`)", text)
    return "".join(
        part if i % 2 else re.sub(r"([\\*_\[\]<>#|])", r"\\\1", part)
        for i, part in enumerate(parts)
    )


def test_every_description_has_its_markdown_beside_it() -> None:
    # editors (yaml-language-server, VS Code) render `markdownDescription` and show a plain
    # `description` escaped, backticks and all; and a definition's markdownDescription is
    # merged into a `$ref` beside which there is none, standing in for the property's own
    # text: so every description, empty ones included, has its Markdown beside it
    documented = 0
    for path, node in walk(loaded_schema()):
        text = node.get("description")
        if isinstance(text, str):
            documented += 1
            assert node.get("markdownDescription") == markdown_of(text), path
        else:
            assert "markdownDescription" not in node, path
    assert documented > 200


def test_every_closed_mapping_has_a_title_naming_the_construct() -> None:
    for path, node in walk(loaded_schema()):
        if node.get("additionalProperties") is False:
            assert str(node.get("title", "")).endswith(" mapping"), path


def test_every_pattern_explains_itself() -> None:
    for path, node in walk(loaded_schema()):
        if "pattern" in node:
            assert node.get("title") and node.get("$comment"), path


# --- the vocabulary is defined once; this keeps the docs equal --------------------


def doc_section(title: str) -> str:
    text = DSL_DOC.read_text(encoding="utf-8")
    match = re.search(rf"^#+ {re.escape(title)}\n(.*?)(?=^#+ |\Z)", text, re.M | re.S)
    assert match, title
    return match.group(1)


def table_rows(section: str) -> list[tuple[str, str]]:
    """(first cell, second cell) of each body row of the section's table."""
    rows = [line for line in section.splitlines() if line.startswith("|")]
    out = []
    for line in rows[2:]:
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]]
        out.append((cells[0], cells[1]))
    return out


def first_column_keys(section: str) -> set[str]:
    """`parallel: true` → parallel; `entry`, `exit` → entry, exit."""
    return {
        code.split(":")[0].strip()
        for first, _ in table_rows(section)
        for code in re.findall(r"`([^`]+)`", first)
    }


def state_keys_from_doc() -> set[str]:
    return first_column_keys(doc_section("State keys"))


def split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in text:
        depth += char in "[{"
        depth -= char in "]}"
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [*parts, current]


def brace_keys(section: str, starts_with: str) -> set[str]:
    """Keys of the first `{...}` in `section` whose text begins with `{starts_with`."""
    flat = " ".join(section.split())
    start = flat.index("{" + starts_with)
    depth = 0
    for end in range(start, len(flat)):
        depth += flat[end] == "{"
        depth -= flat[end] == "}"
        if depth == 0:
            break
    inner = flat[start + 1 : end]
    return {part.split(":")[0].strip() for part in split_top_level(inner)}


def properties(definition: str | None) -> set[str]:
    document = loaded_schema()
    node = document if definition is None else document["definitions"][definition]
    return set(node["properties"])


def test_state_keys_equal_the_docs() -> None:
    assert properties("state") == state_keys_from_doc()


def test_root_keys_equal_the_docs() -> None:
    chart_keys = first_column_keys(doc_section("Chart keys (root only)"))
    assert properties(None) == chart_keys | state_keys_from_doc()


def test_root_state_keys_mean_the_same_as_in_a_state() -> None:
    document = loaded_schema()
    for key, sub in document["definitions"]["state"]["properties"].items():
        root_sub = dict(document["properties"][key])
        if key == "description":  # the chart's prose vs the state's: same type, own hover text
            root_sub["description"] = sub["description"]
            root_sub["markdownDescription"] = sub["markdownDescription"]
        assert root_sub == sub, key


def test_transition_keys_equal_the_docs() -> None:
    section = doc_section("Transitions")
    assert properties("transitionMapping") == brace_keys(section, "to")
    bullets = set(re.findall(r"^- `(\w+)`", section, re.M))
    assert bullets <= properties("transitionMapping")


def test_field_spec_keys_equal_the_docs() -> None:
    assert properties("fieldSpecMapping") == brace_keys(doc_section("Field specs"), "type")
    assert set(loaded_schema()["definitions"]["fieldType"]["enum"]) == {
        "integer",
        "number",
        "string",
        "boolean",
        "list",
        "record",
    }


def test_effect_keys_equal_the_docs() -> None:
    section = doc_section("Effects")
    assert properties("effect") == set(re.findall(r"^- `(\w+):", section, re.M))
    assert properties("emitMapping") == brace_keys(section, "type")
    assert properties("raiseMapping") == brace_keys(section, "event")


def test_guard_invariant_and_lint_keys_equal_the_docs() -> None:
    chart = doc_section("Chart keys (root only)")
    assert properties("guardMapping") == brace_keys(chart, "if")
    assert properties("lintSettings") == brace_keys(chart, "ignore")
    invariants = doc_section("Invariants")
    assert properties("stateInvariant") == brace_keys(invariants, "when")
    assert properties("expressionInvariant") == brace_keys(invariants, "assert")
