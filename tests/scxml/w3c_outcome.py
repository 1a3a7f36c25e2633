"""One W3C SCXML conformance test through import-scxml and the engine.

A test passes when the chart reaches its top-level state `pass`; `fail` is any
other end; `refused` carries the first reason import or compile gave. A test whose
document invokes others runs as a family (`FamilySimulator`): the charts import-scxml
writes for it, the root started as `w3c`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from statekit.api import load
from statekit.compiler.diagnostics import CompileError
from statekit.scxml import ScxmlError, Translation, chart_of, chart_yaml, read_scxml
from statekit.scxml.http_sends import HTTP_MESSAGE
from statekit.testing import FamilySimulator, Simulator
from statekit.testing.http_loop import HttpLoop

ROOT = Path(__file__).resolve().parents[2]
W3C_DIR = ROOT / "build/w3c/python_statemachine-3.2.2/tests/scxml/w3c"
TEST_FILE = re.compile(r"^test(\d+[a-z]?)\.scxml$")
VIRTUAL_MINUTES_MS = 10 * 60_000


def w3c_files() -> dict[str, Path]:
    """Test number → file, for the 193 tests (not the `sub` files they invoke)."""
    found: dict[str, Path] = {}
    for group in ("mandatory", "optional"):
        for path in sorted((W3C_DIR / group).glob("test*.scxml")):
            match = TEST_FILE.match(path.name)
            if match:
                found[match.group(1)] = path
    return found


# A refusal's message → the SCXML feature it names, first match wins (a table row
# keeps the feature; docs/semantics.md counts them).
FEATURES: tuple[tuple[str, str], ...] = (
    (r"<finalize>", "<finalize>"),
    (r"'\+' needs numbers, but ctx\.\w+ may be null", "arithmetic on a <data> that may be unset"),
    (r"an XML \(DOM\) value", "XML values (a DOM) in <data> or <content>"),
    (r"expr='lambda", "a function as a value (lambda)"),
    (r"<donedata>", "<donedata>"),
    (r"autoforward", "<invoke autoforward='true'>"),
    (r"<invoke (typeexpr|srcexpr)=", "an <invoke> whose type or source is computed"),
    (r"not a constant", "computed eventexpr, delayexpr, sendidexpr, typeexpr or srcexpr"),
    (r"<send target=[^>]*> with a delay", "a delayed <send> to the parent or a child"),
    (r"<invoke>|'done\.invoke", "<invoke>"),
    (
        r"_event\.\w+ is not available here",
        "_event.data in <onentry>/<onexit> (the payload of whichever event entered)",
    ),
    (r"short name 'scxml'", "_event.origintype compared with psm's short name 'scxml'"),
    (
        r"system variable _event",
        "_event as a whole (a value compared or assigned)",
    ),
    (r"has only the SCXML one", "<send> to another target or processor"),
    (
        r"assign to ctx\.\w+: expected \w+, got",
        "a <data> given values of two types (a context field has one)",
    ),
    (
        r"system variable (_sessionid|_name|_ioprocessors)"
        r"|expr='?\W*_(sessionid|name|ioprocessors)|#_scxml_",
        "system variables (_sessionid, _name, _ioprocessors)",
    ),
    (
        r"posts HTTP messages after the step",
        "an event sent after an HTTP <send>, expected after it",
    ),
    (r"the regular expression", "a regular expression in _event.raw.search() (not plain text)"),
    (
        r"<send target=|targetexpr|typeexpr|<send> with type",
        "<send> to another target or processor",
    ),
    (r"structured <content>", "<send> with structured <content> (XML, JSON)"),
    (
        r"no (payload )?field 'content'",
        "_event.data as a whole of an event sent without <content>",
    ),
    (
        r"<send> with .*(<param>|<content>|namelist)",
        "<send> with data (<param>, <content>, namelist)",
    ),
    (
        r"<send> with (delayexpr|eventexpr|idlocation)|<send (delayexpr|eventexpr)=|sendidexpr=",
        "<send> with computed delay, event or id",
    ),
    (r"system variable \(read-only\) is assigned", "<assign> to a system variable"),
    (r"raises only error\.execution", "error.communication events"),
    (
        r"inside <(if|foreach)>: not expressible",
        "an element that always fails inside <if>/<foreach> (SCXML stops the block around it)",
    ),
    (r"joins two lists of one item type", "a list of two item types (a list has one type)"),
    (r"comparing list of .* can never be true", "a list compared with a number (never equal)"),
    (r"not a name statekit's context takes", "a <data> or <foreach> item that is no name"),
    (r"the text '", "an operator the translation does not know"),
    (r"<foreach", "<foreach>"),
    (r"<if ", "<if> / <elseif> / <else>"),
    (r"<script>", "a <script> other than assignments (a function, a class, a call)"),
    (r"with no value", "<data> without a value (undefined)"),
    (
        r"expr='\[|expr='lambda|string'|src or inline",
        "<data> that is not a literal (functions, src, inline)",
    ),
    (r"<data id=.* with expr=", "<data> computed from an expression"),
    (r"location='[^']*\.|location='_", "<assign> to a structured location"),
    (r"operator '='|names no <data>", "an invalid expression (meant to raise error.execution)"),
    (r"member access", "member access and methods in expressions"),
    (
        r"the name '[^']*' \(not a declared <data>\)",
        "an undeclared name in an expression (meant to raise error.execution)",
    ),
    (r"<assign> with inline content", "a document as a value (<assign> of inline <scxml>)"),
    (r"no state has the id", "a target no state has (a mistake in the test)"),
    (r"several states", "an initial of several states (parallel descendants)"),
    (r"internal transition", "an internal transition to a descendant"),
    (r"history|<initial> transition with content", "history as an initial, or history in In()"),
    (r"expected boolean", "typed conditions (a non-boolean cond)"),
    (
        r"not a declared <data>",
        "<assign> to an undeclared location (meant to raise error.execution)",
    ),
    (r"binding='late'", "binding='late'"),
    (r"a call \(", "function calls other than In()"),
    (r"no compound or parallel state has that id", "done.state.<id> of a state never done"),
)


def feature(reason: str) -> str:
    """The SCXML feature a refusal's message names (the message itself if none matches)."""
    for pattern, name in FEATURES:
        if re.search(pattern, reason):
            return name
    return reason


def outcome(path: Path, work: Path) -> tuple[str, str]:
    """("pass" | "fail" | "refused", the feature refused or the final configuration)."""
    result, reason = _outcome(path, work)
    return (result, feature(reason)) if result == "refused" else (result, reason)


def _outcome(path: Path, work: Path) -> tuple[str, str]:
    try:
        translation = chart_of(read_scxml(path), str(path), path.stem)
    except ScxmlError as error:
        return "refused", error.message
    charts = []
    for name, written in family_charts(translation, path.stem):
        chart_file = work / f"{name}.yaml"
        chart_file.write_text(chart_yaml(written), encoding="utf-8")
        try:
            charts.append(load(chart_file))
        except CompileError as error:
            first = error.diagnostics[0]
            return "refused", f"compile: {first.slug}: {first.message}"
    if len(charts) > 1:  # a family: the parent and the charts it invokes
        family = FamilySimulator(charts)
        family.start(charts[0].name, "w3c")
        family.advance(VIRTUAL_MINUTES_MS)
        configuration = family.member("w3c").state.configuration
    else:
        simulator = Simulator(charts[0])
        if _emits(translation.chart, HTTP_MESSAGE):  # over real HTTP, back to itself
            with HttpLoop(simulator, instance_id="w3c", unnamed_event="HTTP__POST") as loop:
                loop.advance(VIRTUAL_MINUTES_MS)
        else:
            simulator.advance(VIRTUAL_MINUTES_MS)
        configuration = simulator.state.configuration
    reached = "pass" in configuration
    return ("pass", "") if reached else ("fail", ",".join(sorted(configuration)))


def _emits(value: object, message_type: str) -> bool:
    """Whether a chart (a YAML-ready dict) has an `emit:` of `message_type`."""
    if isinstance(value, dict):
        emit = value.get("emit")
        if isinstance(emit, dict) and emit.get("type") == message_type:
            return True
        return any(_emits(v, message_type) for v in value.values())
    return isinstance(value, list) and any(_emits(v, message_type) for v in value)


def family_charts(translation: Translation, name: str) -> Iterator[tuple[str, Translation]]:
    """The chart and the charts it invokes, transitively, each with a file name."""
    yield name, translation
    for invoke_id, child in translation.children:
        yield from family_charts(child, f"{name}.{invoke_id}")
