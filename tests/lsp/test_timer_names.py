"""Named timers in the language server, over its wire protocol: completion of timer
names where a timer event is written (`races:` events, a migration's `timers:` keys and
`to:`), of full state paths in `enter:` and of delayed sends' ids in `cancel:`; hover
on a timer (its state, delay and target); go-to-definition from a race or a migration
to the `after` entry; rename of an `id:` (and of a state) with the timer events that
name it in the file; diagnostics on the migration key that is wrong."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lsp_client import ServerFailed
from lsp_session import Editor, Json

CHART = """\
statechart: sub
version: 2
migrations:
  - from: 1
    timers:
      "after(grace)@entitlement.grace": {due: recompute}
      "after(7d)@entitlement.grace": {to: "after(grace)@entitlement.grace"}
    enter: {billing: billing.open}
events: {LAPSE: {}, PAY: {}}
races:
  pay_vs_grace:
    events: [PAY, "after(grace)@grace"]
    decision: paying first keeps the entitlement
parallel: true
states:
  billing:
    initial: open
    states: {open: {after: {1d: open}}}
  entitlement:
    initial: active
    states:
      active: {on: {LAPSE: grace}, already: [PAY]}
      grace:
        on: {PAY: active}
        already: [LAPSE]
        after: [{id: grace, delay: 7d, to: active}]
"""
GRACE = "after(grace)@entitlement.grace"
TIMERS = [GRACE, "after(1d)@billing.open"]


def _find(text: str, marker: str, offset: int | None = None, nth: int = 0) -> Json:
    index = -1
    for _ in range(nth + 1):
        index = text.index(marker, index + 1)
    index += len(marker) if offset is None else offset
    line = text.count("\n", 0, index)
    return {"line": line, "character": index - (text.rfind("\n", 0, index) + 1)}


def _range(text: str, marker: str, offset: int, length: int, nth: int = 0) -> Json:
    start = _find(text, marker, offset, nth)
    end = {"line": start["line"], "character": start["character"] + length}
    return {"start": start, "end": end}


ID = _range(CHART, "{id: grace", 5, 5)
"""The `id:` value that declares the timer `after(grace)@entitlement.grace`."""


@pytest.fixture(scope="module")
def editor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Editor]:
    session = Editor(tmp_path_factory.mktemp("timers"))
    yield session
    session.close()


@pytest.fixture
def uri(editor: Editor, tmp_path: Path) -> Iterator[str]:
    opened = editor.open(tmp_path / "sub.yaml", CHART)
    assert editor.published(opened, 1) == []  # the chart compiles clean
    yield opened
    editor.close_document(opened)
    editor.published(opened)


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        # a race's events: the events, the timer events and `"*"` (any event)
        (("[PAY, ", 6, 0), [*TIMERS, "LAPSE", "PAY", '"*"']),
        # a migration's `timers:` key and `to:`
        (('      "after(7d)', 7, 0), TIMERS),
        (('{to: "after', 6, 0), TIMERS),
        # `enter:`: full state paths
        (("enter: {billing", 8, 0), ["billing", "billing.open", "entitlement",
                                      "entitlement.active", "entitlement.grace"]),
    ],
    ids=["races-events", "migration-key", "migration-to", "enter"],
)  # fmt: skip
def test_completion_offers_timer_names_where_a_timer_event_is_written(
    editor: Editor, uri: str, where: tuple[str, int, int], expected: list[str]
) -> None:
    marker, offset, nth = where
    position = _find(CHART, marker, offset, nth)
    found = editor.request("textDocument/completion", uri, position=position)
    assert sorted(item["label"] for item in found["items"]) == sorted(expected)
    timer = next((i for i in found["items"] if i["label"] == GRACE), None)
    if timer is not None:  # it replaces the whole name being typed, brackets and all
        edit = timer["textEdit"]
        assert edit["newText"] == GRACE and edit["range"]["start"] == position


def test_hover_on_a_timer_says_its_state_delay_and_target(editor: Editor, uri: str) -> None:
    for position in (_find(CHART, '"after(grace)@grace', 3), ID["start"]):
        hovered = editor.request("textDocument/hover", uri, position=position)
        text = hovered["contents"]["value"]
        assert GRACE in text and "`entitlement.grace`" in text, text
        assert "after 7d" in text and "entitlement.active" in text, text


@pytest.mark.parametrize(
    "marker",
    ['"after(grace)@grace', '      "after(grace)@entitlement', '{to: "after(grace)'],
    ids=["race", "migration-key", "migration-to"],
)
def test_definition_of_a_timer_event_is_its_after_entry(
    editor: Editor, uri: str, marker: str
) -> None:
    position = _find(CHART, marker, len(marker) - 3)
    found = editor.request("textDocument/definition", uri, position=position)
    assert found == [{"uri": uri, "range": ID}]


def test_an_unkept_timer_of_the_old_version_has_no_definition(editor: Editor, uri: str) -> None:
    position = _find(CHART, '"after(7d)@entitlement', 3)
    assert editor.request("textDocument/definition", uri, position=position) == []


def test_renaming_a_timer_id_rewrites_its_races_and_migration_targets(
    editor: Editor, uri: str
) -> None:
    in_race = _find(CHART, '"after(grace)@grace', 8)
    prepared = editor.request("textDocument/prepareRename", uri, position=in_race)
    assert prepared == _range(CHART, '"after(grace)@grace', 7, 5)
    renamed = editor.request("textDocument/rename", uri, position=in_race, newName="lapse")
    edits = renamed["changes"][uri]
    assert [e["newText"] for e in edits] == ["lapse"] * 3
    assert [e["range"] for e in edits] == [
        _range(CHART, '{to: "after(grace)', 12, 5),  # the migration's `to:`
        _range(CHART, '"after(grace)@grace', 7, 5),  # the race
        ID,
    ]  # not the migration's keys: they name the timers of version 1


def test_a_timer_rename_is_refused_when_unnamed_colliding_or_not_an_id(
    editor: Editor, uri: str, tmp_path: Path
) -> None:
    unnamed = _find(CHART, "{after: {1d", 9)
    assert editor.request("textDocument/prepareRename", uri, position=unnamed) is None
    with pytest.raises(ServerFailed, match="id:"):
        editor.request("textDocument/rename", uri, position=unnamed, newName="reminder")
    with pytest.raises(ServerFailed, match="not a timer id"):
        editor.request("textDocument/rename", uri, position=ID["start"], newName="two words")
    twice = CHART.replace(
        "after: [{id: grace, delay: 7d, to: active}]",
        "after: [{id: grace, delay: 7d, to: active}, {id: nudge, delay: 1d, to: active}]",
    )
    other = editor.open(tmp_path / "twice.yaml", twice)
    editor.published(other, 1)
    with pytest.raises(ServerFailed, match="already exists"):
        editor.request("textDocument/rename", other, position=ID["start"], newName="nudge")
    editor.close_document(other)


@pytest.mark.parametrize(
    ("old", "new", "at"),
    [
        ('{to: "after(grace)@entitlement.grace"}', '{to: "after(late)@entitlement.grace"}',
         "{to: "),
        ("enter: {billing: billing.open}", "enter: {billing: entitlement.active}",
         "enter: {billing: "),
        ("enter: {billing: billing.open}", "enter: {bill: billing.open}", "enter: {"),
    ],
    ids=["timer-to", "enter-target", "enter-key"],
)  # fmt: skip
def test_a_wrong_migration_entry_is_reported_on_its_key(
    editor: Editor, tmp_path: Path, old: str, new: str, at: str
) -> None:
    text = CHART.replace(old, new)
    opened = editor.open(tmp_path / "wrong.yaml", text)
    found = editor.published(opened, 1)
    editor.close_document(opened)
    assert [d["code"] for d in found] == ["invalid-migration"], found
    assert found[0]["range"]["start"] == _find(text, at), found


def _applied(text: str, edits: list[Json]) -> str:
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)

    def offset(p: Json) -> int:
        return starts[int(p["line"])] + int(p["character"])

    ordered = sorted(edits, key=lambda e: offset(e["range"]["start"]), reverse=True)
    for edit in ordered:
        rng = edit["range"]
        text = text[: offset(rng["start"])] + edit["newText"] + text[offset(rng["end"]) :]
    return text


def test_renaming_a_state_moves_the_timer_events_that_name_its_timers(
    editor: Editor, uri: str, tmp_path: Path
) -> None:
    at_grace = _find(CHART, "      grace:", 7)
    renamed = editor.request("textDocument/rename", uri, position=at_grace, newName="lapsed")
    text = _applied(CHART, renamed["changes"][uri])
    # the race and the migration's `to:` follow, as written (a suffix stays a suffix); the
    # migration's keys name version 1's timers and stay
    assert '[PAY, "after(grace)@lapsed"]' in text
    assert '{to: "after(grace)@entitlement.lapsed"}' in text
    assert '      "after(grace)@entitlement.grace": {due: recompute}' in text
    opened = editor.open(tmp_path / "renamed.yaml", text)
    assert editor.published(opened, 1) == []  # it compiles clean
    editor.close_document(opened)


def test_completion_of_cancel_offers_the_ids_of_delayed_sends(
    editor: Editor, tmp_path: Path
) -> None:
    text = CHART.replace(
        "      active: {on: {LAPSE: grace}, already: [PAY]}",
        "      active:\n"
        "        on: {LAPSE: grace}\n"
        "        already: [PAY]\n"
        "        entry: [{send: {event: PAY, delay: 1h, id: nudge}}]\n"
        "        exit: [{cancel: nudge}]",
    )
    opened = editor.open(tmp_path / "sends.yaml", text)
    editor.published(opened, 1)
    position = _find(text, "{cancel: ")
    found = editor.request("textDocument/completion", opened, position=position)
    editor.close_document(opened)
    assert [item["label"] for item in found["items"]] == ["nudge"]
