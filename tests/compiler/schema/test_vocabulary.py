"""The vocabulary the compiler reads from the schema equals the docs."""

from __future__ import annotations

import re

from schema_helpers import DSL_DOC, loaded_schema

from statekit.compiler.schema.vocabulary import HISTORY_STATE_KEYS


def test_history_state_keys_equal_the_docs_and_are_state_keys() -> None:
    sentence = re.search(r"^A history state may only have (.*)\.$", DSL_DOC.read_text(), re.M)
    assert sentence, "docs/dsl.md names the keys of a history state"
    documented = set(re.findall(r"`([a-z]+)`", sentence.group(1)))
    assert documented == HISTORY_STATE_KEYS
    assert set(loaded_schema()["definitions"]["state"]["properties"]) >= HISTORY_STATE_KEYS
