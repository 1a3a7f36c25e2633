"""`canonical_json` writes the bytes statekit's canonical encoder wrote before orjson
(docs/canonical-json.md), for every value that encoder accepted, and refuses what it
refused, in the same words.

The oracle, `_before`, is that encoder as it was written (the standard library's C
encoder, built once, with the checking encoder after a RecursionError), so that stored
payload hashes, evidence and `verify` keep working on stores written before.
"""

from __future__ import annotations

import enum
import json
import math
import struct
from collections import OrderedDict
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from statekit.compiler.canonical import canonical_json, canonical_string

# --- the encoder before orjson, as it was written (statekit/compiler/serialize.py) ---
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
_MAKE_ENCODER: Any = getattr(json.encoder, "c_make_encoder", None)
_FAST: Any = (
    None
    if _MAKE_ENCODER is None
    else _MAKE_ENCODER(
        None, _ENCODER.default, json.encoder.encode_basestring, None, ":", ",", True, False, True
    )
)


def _before(value: Any) -> str:
    if _FAST is None:
        return _ENCODER.encode(value)
    try:
        return "".join(_FAST(value, 0))
    except RecursionError:
        return _ENCODER.encode(value)


# --- values of every class -------------------------------------------------------------

SPECIAL_CHARACTERS = (
    [chr(c) for c in range(0x20)]  # every control: escaped as \n, \t, \u001f ...
    + ["\x7f", "\x80", "\x9f", "\xa0", "\xad", "\u2028", "\u2029", "/", "\\", '"', "'"]
    + ["\ufeff", "\ufffd", "\uffff", "\ue000", "\U00010000", "\U0001f600", "\U0010ffff"]
    + ["é", "\u0301", "ß", "İ", "中", "\u0600", "\u200d", "e", "-", "0", ".", "n", "u", "l"]
)
characters = st.characters(codec="utf-8") | st.sampled_from(SPECIAL_CHARACTERS)
lone_surrogates = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
texts = st.text(characters, max_size=12)
keys = texts | st.text(characters | lone_surrogates, min_size=1, max_size=4)

EDGE_INTEGERS = [0, 1, -1, 2**31, 2**53 + 1, 2**63 - 1, 2**63, -(2**63), -(2**63) - 1]
EDGE_INTEGERS += [2**64 - 1, 2**64, -(2**64), 10**30, -(10**40), 2**200]
integers = st.integers() | st.sampled_from(EDGE_INTEGERS) | st.integers(-(2**70), 2**70)


def _float_of(bits: int) -> float:
    return float(struct.unpack("<d", struct.pack("<Q", bits))[0])


EDGE_FLOATS = [0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308]
EDGE_FLOATS += [1e-4, 9.999999999999999e-05, 1e-05, 1.5e-07, 1e-09, 1e-10, 1e-99, 1e-100]
EDGE_FLOATS += [1e15, 1e16, 9999999999999998.0, 1e16 + 2, 1e17, 1e21, 1e22, 1e23, 1e100]
EDGE_FLOATS += [0.1, 0.2, 0.30000000000000004, 1 / 3, 2.5, 100.0, 123456789.125, 2.0**63]
finite_floats = (
    st.floats(allow_nan=False, allow_infinity=False)  # subnormals included
    | st.sampled_from(EDGE_FLOATS)
    | st.integers(0, 2**64 - 1).map(_float_of).filter(math.isfinite)  # every exponent
    | st.builds(lambda m, e: m * 10.0**e, st.integers(-(10**6), 10**6), st.integers(-30, 30))
)
non_finite = st.sampled_from([math.nan, math.inf, -math.inf])
scalars = (
    st.none() | st.booleans() | integers | finite_floats | non_finite | texts | lone_surrogates
)


def _containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return (
        st.lists(inner, max_size=5)
        | st.lists(inner, max_size=4).map(tuple)
        | st.dictionaries(keys, inner, max_size=5)
    )


values = st.recursive(scalars, _containers, max_leaves=40)


def _outcome(encode: Any, value: Any) -> tuple[str, str]:
    """What an encoder does with `value`: ("text", the text) or (the error's type, its
    message)."""
    try:
        return ("text", encode(value))
    except (TypeError, ValueError) as error:
        return (type(error).__name__, str(error))


@settings(max_examples=1500, deadline=None)
@given(value=values)
@example(value={"\U00010000": 1, "\uffff": 2, "\ue000": 3, "z": 4, "é": 5})
@example(value=[1e-05, 1e-06, 1e-10, 1e16, -0.0, 5e-324, 2**64, "1e-5", "0.00001", None])
def test_the_bytes_are_the_encoder_before_s_for_every_value_it_accepted(value: Any) -> None:
    assert _outcome(canonical_json, value) == _outcome(_before, value)


@settings(max_examples=3000, deadline=None)
@given(number=finite_floats | integers)
def test_every_number_is_written_as_before(number: float | int) -> None:
    assert canonical_json([number, {"n": number}]) == _before([number, {"n": number}])


@settings(max_examples=500, deadline=None)
@given(text=st.text(characters | lone_surrogates, max_size=30))
def test_every_string_and_key_is_written_as_before(text: str) -> None:
    value = {text: text, "k": [text]}
    assert canonical_json(value) == _before(value)
    assert canonical_string(text) == _before(text)


class Colour(enum.IntEnum):
    RED = 1


class Mood(enum.StrEnum):
    CALM = "calm"


class Keyed(dict[str, Any]):
    pass


class Listed(list[Any]):
    pass


class Real(float):
    pass


def _deep(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


ACCEPTED_BY_BOTH = [
    pytest.param(Colour.RED, id="IntEnum"),
    pytest.param({"m": Mood.CALM}, id="str-Enum"),
    pytest.param(OrderedDict([("b", 1), ("a", 2)]), id="OrderedDict"),
    pytest.param(Keyed(b=1, a=[2]), id="dict-subclass"),
    pytest.param(Listed([3, 1]), id="list-subclass"),
    pytest.param([Real(1.5), Real(1e-05)], id="float-subclass"),
    pytest.param({2: "int", 2.5: "float", True: "bool"}, id="number-keys"),
    pytest.param({None: "null"}, id="null-key"),
    pytest.param(_deep(300), id="nested-300"),
    pytest.param(("a", ("b",)), id="tuples"),
    pytest.param({"t": True, "f": False, "one": 1, "zero": 0}, id="bools-are-not-ints"),
]


@pytest.mark.parametrize("value", ACCEPTED_BY_BOTH)
def test_values_orjson_writes_otherwise_or_refuses_are_written_as_before(value: Any) -> None:
    assert canonical_json(value) == _before(value)


def _circular() -> list[Any]:
    loop: list[Any] = []
    loop.append({"again": loop})
    return loop


@dataclass
class Point:
    x: int


REFUSED_BY_BOTH = [
    pytest.param(_circular, id="circular"),
    pytest.param(lambda: {"x": object()}, id="object"),
    pytest.param(lambda: {1: 0, "a": 1}, id="mixed-keys"),
    pytest.param(lambda: {(1, 2): 0}, id="tuple-key"),
    pytest.param(lambda: {"s": {1, 2}}, id="set"),
    pytest.param(lambda: [b"bytes"], id="bytes"),
    pytest.param(lambda: [Decimal("1.5")], id="Decimal"),
    pytest.param(lambda: {"p": Point(1)}, id="dataclass"),
    pytest.param(lambda: [date(2026, 1, 1)], id="date"),
]


@pytest.mark.parametrize("make", REFUSED_BY_BOTH)
def test_a_value_the_encoder_before_refused_is_refused_in_its_words(make: Any) -> None:
    value = make()
    refusal = _outcome(_before, value)
    assert refusal[0] != "text"
    assert _outcome(canonical_json, value) == refusal
    assert canonical_json(["after", "a refusal"]) == '["after","a refusal"]'  # nothing left


NON_FINITE = [math.nan, math.inf, -math.inf, -math.nan, _float_of(0x7FF0_0000_0000_0001)]


@pytest.mark.parametrize("number", NON_FINITE, ids=["NaN", "Inf", "-Inf", "-NaN", "NaN-bits"])
@pytest.mark.parametrize(
    "place",
    [
        pytest.param(lambda n: n, id="alone"),
        pytest.param(lambda n: {"a": None, "b": [1, {"c": n}]}, id="nested-beside-null"),
        pytest.param(lambda n: (None, n), id="tuple"),
        pytest.param(lambda n: Keyed(x=Listed([n, None])), id="subclasses"),
        pytest.param(lambda n: [Real(n)], id="float-subclass"),
        pytest.param(lambda n: [n, {"again": n}, None], id="the-same-object-twice"),
        pytest.param(lambda n: [2**31 - 1, -1, 1.7976931348623157e308, None, n], id="near-bytes"),
        pytest.param(lambda n: [None, "\U0010ffff\x7f", n], id="after-text"),
    ],
)
def test_nan_and_the_infinities_are_written_as_before_not_as_null(
    number: float, place: Any
) -> None:
    """orjson writes `null` for them; the text (of a rejected event's payload, which the
    store records as it came) keeps the hash it had."""
    value = place(number)
    assert canonical_json(value) == _before(value)
    assert "NaN" in canonical_json(value) or "Infinity" in canonical_json(value)


@pytest.mark.parametrize(
    "value",
    [
        pytest.param([None, 2**31 - 1, 2**63 - 1, -1], id="integers-with-those-bytes"),
        pytest.param([None, 1.7976931348623157e308, -1.7976931348623157e308], id="largest"),
        pytest.param([None, "\U0010ffff\x7f\xff"], id="text"),
        pytest.param(OrderedDict([("a", None), ("b", 1.5)]), id="marshal-refuses"),
    ],
)
def test_null_beside_finite_numbers_is_written_by_orjson_as_before(value: Any) -> None:
    assert canonical_json(value) == _before(value)
