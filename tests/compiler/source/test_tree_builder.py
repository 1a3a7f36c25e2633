"""The tree builder's inlined path for plain scalars builds exactly what its general path builds.

`TreeBuilder.build` handles a plain scalar without tag or anchor inside a collection
without calling `_scalar` (the loader's hot path); any event of a subclass of the
parser's classes goes the general way. So the same text loaded once as the parser
gives it and once with every scalar event re-made as a subclass must give equal trees
(every span included) and equal diagnostics, for charts and for mutated charts full of
duplicate keys, merge keys, tags, anchors, aliases, quoted and block scalars.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from yaml._yaml import CParser
from yaml.events import Event, ScalarEvent

from statekit.compiler.source import loader
from statekit.compiler.source.limits import DEFAULT_LIMITS, Limits
from statekit.compiler.source.loader import load_yaml
from statekit.compiler.source.tree_builder import EventSource

MACHINES = sorted((Path(__file__).parents[3] / "machines").glob("*.yaml"))
BITS = st.sampled_from(
    [*":-?[]{},#&*!|>'\"\n ~", "<<", "&a ", "*a", "!!str ", "!!int ", "!x ", "on", "1", "null"]
)
F = "chart.yaml"


class _GeneralScalar(ScalarEvent):
    """A scalar event the inlined path does not take (its class is not `ScalarEvent`)."""


class _GeneralEvents:
    """A parser whose scalar events all go the builder's general way."""

    def __init__(self, parser: EventSource) -> None:
        self._parser = parser

    def get_event(self) -> Event | None:
        event = self._parser.get_event()
        if event.__class__ is ScalarEvent:
            assert isinstance(event, ScalarEvent)
            return _GeneralScalar(
                event.anchor,
                event.tag,
                event.implicit,
                event.value,
                event.start_mark,
                event.end_mark,
                event.style,
            )
        return event

    def dispose(self) -> None:
        self._parser.dispose()


def _parsers() -> dict[str, Callable[[bytes], EventSource]]:
    return {
        "libyaml": CParser,
        "pure-python": lambda data: yaml.SafeLoader(data.decode("utf-8")),
    }


@pytest.fixture(params=["libyaml", "pure-python"])
def make_parser(request: pytest.FixtureRequest) -> Callable[[bytes], EventSource]:
    """Each test with libyaml's C parser and with PyYAML's pure-Python one."""
    return _parsers()[request.param]


def _both_ways(
    monkeypatch: pytest.MonkeyPatch,
    make_parser: Callable[[bytes], EventSource],
    text: str,
    limits: Limits = DEFAULT_LIMITS,
) -> None:
    monkeypatch.setattr(loader, "_CParser", make_parser)
    inlined = load_yaml(text, F, limits)
    monkeypatch.setattr(loader, "_CParser", lambda data: _GeneralEvents(make_parser(data)))
    general = load_yaml(text, F, limits)
    assert inlined == general


@pytest.mark.parametrize("path", MACHINES, ids=lambda p: p.name)
def test_the_machines_load_the_same_both_ways(
    monkeypatch: pytest.MonkeyPatch,
    make_parser: Callable[[bytes], EventSource],
    path: Path,
) -> None:
    _both_ways(monkeypatch, make_parser, path.read_text("utf-8"))


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\na: 2\nb: {c: 1, c: 2}\n",  # duplicate keys
        "base: &b {x: 1}\nc:\n  <<: *b\n  y: [1, *b]\n",  # merge key, aliases
        "a: !!str 1\nb: !x y\nc: '1'\nd: |\n  one\ne: >-\n  two\n",  # tags, quoted, block
        "a: 0x1F\nb: 1_000\nc: .inf\nd: ~\ne: on\nf: TRUE\ng: 1:30\nh: 2001-12-14\n",
        "a: [&x 1, *x, {*x : 2}]\n*x : 3\n",  # an alias as a key
        "a: b\n  c\n",  # a plain scalar on two lines
    ],
)
def test_every_kind_of_scalar_loads_the_same_both_ways(
    monkeypatch: pytest.MonkeyPatch,
    make_parser: Callable[[bytes], EventSource],
    text: str,
) -> None:
    _both_ways(monkeypatch, make_parser, text)


def test_the_size_limit_is_met_at_the_same_node_both_ways(
    monkeypatch: pytest.MonkeyPatch, make_parser: Callable[[bytes], EventSource]
) -> None:
    text = MACHINES[0].read_text("utf-8")
    for limit in range(1, 200, 7):
        _both_ways(monkeypatch, make_parser, text, Limits(max_expanded_nodes=limit))


@st.composite
def mutated(draw: st.DrawFn) -> str:
    """A machine's chart with a few YAML bits inserted, deleted or replaced."""
    text = draw(st.sampled_from(MACHINES)).read_text("utf-8")
    for _ in range(draw(st.integers(1, 8))):
        at = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["insert", "delete", "replace"]))
        bit = draw(BITS)
        if action == "insert":
            text = text[:at] + bit + text[at:]
        elif action == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 20)) :]
        else:
            text = text[:at] + bit + text[at + len(bit) :]
    return text


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(mutated())
def test_mutated_charts_load_the_same_both_ways(
    monkeypatch: pytest.MonkeyPatch,
    make_parser: Callable[[bytes], EventSource],
    text: str,
) -> None:
    _both_ways(monkeypatch, make_parser, text)
