"""Delay literals: the accepted forms, their values and normalised names, and what is refused."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from statekit.compiler.model.timers import MAX_DELAY_MS, UNIT_MS, parse_delay

VALID = [
    ("250ms", 250, "250ms"),
    ("30s", 30_000, "30s"),
    ("15m", 900_000, "15m"),
    ("2h", 7_200_000, "2h"),
    ("7d", 604_800_000, "7d"),
    ("1h30m", 5_400_000, "1h30m"),
    ("90m", 5_400_000, "90m"),  # no carrying
    ("0ms", 0, "0ms"),
    ("0s", 0, "0ms"),
    ("0d0h0m0s0ms", 0, "0ms"),
    ("1d0h5m", 86_700_000, "1d5m"),
    ("007s", 7_000, "7s"),
    ("1m1s1ms", 61_001, "1m1s1ms"),
    ("1ms", 1, "1ms"),
    ("1d2h3m4s5ms", 93_784_005, "1d2h3m4s5ms"),
    ("1500ms", 1_500, "1500ms"),
    (f"{MAX_DELAY_MS}ms", MAX_DELAY_MS, f"{MAX_DELAY_MS}ms"),
    ("0" * 40 + "1ms", 1, "1ms"),  # leading zeros do not count towards the bound
]

MALFORMED = [
    "",
    "15",  # no unit
    "m",  # no digits
    "15 m",
    " 15m",
    "15m ",
    "15M",
    "15min",
    "1.5h",
    "-5s",
    "+5s",
    "30m1h",  # units out of order
    "1s1s",  # a unit twice
    "1ms1s",
    "1h 30m",
    "1w",
    "1y",
    "\uff15s",  # a non-ASCII digit
    "1_000ms",
    "0x10s",
    f"{MAX_DELAY_MS + 1}ms",
    f"{MAX_DELAY_MS // 86_400_000 + 1}d",
    "9" * 40 + "d",
]


@pytest.mark.parametrize(("text", "ms", "normalised"), VALID)
def test_a_valid_literal_has_its_value_and_normalised_form(
    text: str, ms: int, normalised: str
) -> None:
    parsed = parse_delay(text)
    assert parsed is not None
    assert (parsed.ms, parsed.normalised) == (ms, normalised)


@pytest.mark.parametrize("text", MALFORMED)
def test_a_malformed_literal_is_refused(text: str) -> None:
    assert parse_delay(text) is None


parts = st.lists(
    st.tuples(st.sampled_from(range(len(UNIT_MS))), st.integers(0, 10**6)),
    min_size=1,
    max_size=5,
    unique_by=lambda p: p[0],
)


@given(parts)
def test_generated_literals_round_trip(given_parts: list[tuple[int, int]]) -> None:
    ordered = sorted(given_parts)
    text = "".join(f"{value}{UNIT_MS[unit][0]}" for unit, value in ordered)
    parsed = parse_delay(text)
    assert parsed is not None
    assert parsed.ms == sum(value * UNIT_MS[unit][1] for unit, value in ordered)
    again = parse_delay(parsed.normalised)
    assert again is not None
    assert again == parsed  # the normalised form is a fixed point with the same value
    numbers = re.findall(r"[0-9]+", parsed.normalised)
    assert parsed.normalised == "0ms" or all(not n.startswith("0") for n in numbers)


@given(st.text(alphabet="0123456789dhms .-", max_size=12))
def test_arbitrary_text_parses_only_in_the_grammar(text: str) -> None:
    parsed = parse_delay(text)
    if parsed is not None:
        reparsed = parse_delay(parsed.normalised)
        assert reparsed is not None and reparsed.ms == parsed.ms
