"""The loader's limits and the checks on the raw text before any parser sees it."""

from __future__ import annotations

import pytest

from statekit.compiler.source.limits import (
    DEFAULT_LIMITS,
    Limits,
    Refused,
    check_size,
    decode,
    prescan,
)


def test_limits_are_validated() -> None:
    with pytest.raises(ValueError, match="max_depth"):
        Limits(max_depth=10_000)
    with pytest.raises(ValueError, match="negative"):
        Limits(max_bytes=-1)


def test_decode_drops_a_bom_and_gives_text_and_utf8_bytes() -> None:
    assert decode(b"\xef\xbb\xbfa: \xc3\xa9\n", "c.yaml", DEFAULT_LIMITS) == (
        "a: é\n",
        b"a: \xc3\xa9\n",
    )
    assert decode("\ufeffa: é\n", "c.yaml", DEFAULT_LIMITS) == ("a: é\n", b"a: \xc3\xa9\n")


def test_bad_utf8_is_refused_at_the_first_bad_byte() -> None:
    with pytest.raises(Refused) as refused:
        decode(b"a: 1\nb: \xff\n", "c.yaml", DEFAULT_LIMITS)
    d = refused.value.diagnostic
    assert (d.slug, d.span.line, d.span.column) == ("yaml-syntax", 2, 4)


def test_a_text_over_max_bytes_is_refused_at_the_start() -> None:
    with pytest.raises(Refused) as refused:
        check_size(11, "c.yaml", Limits(max_bytes=10))
    d = refused.value.diagnostic
    assert (d.slug, d.span.line, d.span.column) == ("yaml-limits", 1, 1)
    check_size(10, "c.yaml", Limits(max_bytes=10))


def test_the_prescan_refuses_absurd_bracket_nesting_at_the_offending_bracket() -> None:
    prescan("a: " + "[" * 100 + "]" * 100, "c.yaml")
    with pytest.raises(Refused) as refused:
        prescan("a: " + "[" * 6000, "c.yaml")
    d = refused.value.diagnostic
    assert d.slug == "yaml-limits" and d.span.line == 1 and "brackets nested" in d.message
