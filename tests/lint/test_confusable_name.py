"""confusable-name: a table of names that must be flagged, and of names that must stay clean.

The family: each way a name can hide or impersonate (every bidirectional
control character, invisible format characters, controls, non-ASCII spaces,
fillers, Cyrillic and Greek look-alikes among Latin letters, fullwidth,
mathematical and ligature compatibility letters, a decomposed accent) in a
state, an event and a guard name; and the clean ones (plain ASCII, accented
Latin, all-Cyrillic, all-Greek, CJK, Japanese and Korean mixed with Latin).
"""

from __future__ import annotations

import json

import pytest
from chart_helpers import chart_of

from statekit.analysis.facts import chart_facts
from statekit.analysis.options import ExplorationOptions
from statekit.lint.rules import confusable_name

BIDI = [chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C)]

FLAGGED = [
    *((f"bidi-U+{ord(c):04X}", f"pa{c}id", "bidirectional control") for c in BIDI),
    ("zero-width-space", "pa\u200bid", "invisible format"),
    ("zero-width-joiner", "pa\u200did", "invisible format"),
    ("word-joiner", "pa\u2060id", "invisible format"),
    ("byte-order-mark", "\ufeffpaid", "invisible format"),
    ("soft-hyphen", "pa\u00adid", "invisible format"),
    ("control", "pa\u0007id", "control character"),
    ("c1-control", "pa\u009bid", "control character"),
    *(
        (f"noncharacter-U+{c:04X}", f"pa{chr(c)}id", "a noncharacter")
        for c in (0xFDD0, 0xFDEF, 0xFFFE, 0xFFFF, 0x1FFFE, 0x10FFFF)
    ),
    ("no-break-space", "pa\u00a0id", "space character"),
    ("ideographic-space", "pa\u3000id", "space character"),
    ("hangul-filler", "paid\u3164", "draws as nothing"),
    ("halfwidth-hangul-filler", "paid\uffa0", "draws as nothing"),
    ("cyrillic-a-in-latin", "p\u0430id", "mixes scripts: Latin with Cyrillic"),
    ("cyrillic-o-in-latin", "t\u043eken", "mixes scripts: Latin with Cyrillic"),
    ("latin-in-cyrillic", "\u043e\u043fa\u0442\u0430", "mixes scripts: Cyrillic with Latin"),
    ("greek-omicron-in-latin", "st\u03bfp", "mixes scripts: Latin with Greek"),
    ("three-scripts", "p\u0430\u03b9d", "mixes scripts: Latin with Cyrillic"),
    ("fullwidth-latin", "\uff50\uff41\uff49\uff44", "not in normal form"),
    ("mathematical-bold", "\U0001d429\U0001d41a\U0001d422\U0001d41d", "not in normal form"),
    ("ligature", "\ufb01le", "not in normal form"),
    ("decomposed-accent", "cafe\u0301", "not in normal form"),
]

CLEAN = [
    ("ascii", "payment_pending-2"),
    ("accented-latin", "caf\u00e9_na\u00efve_Stra\u00dfe"),
    ("turkish", "\u0130stanbul"),
    ("all-cyrillic", "\u043e\u043f\u043b\u0430\u0447\u0435\u043d\u043e"),
    ("all-greek", "\u03b1\u03bb\u03c6\u03b1"),
    ("chinese", "\u5df2\u652f\u4ed8"),
    ("japanese", "\u652f\u6255\u3044\u6e08\u307f\u30c7\u30fc\u30bf"),
    ("japanese-with-latin", "\u30c7\u30fc\u30bf_v2"),
    ("korean-with-latin", "\ud55c\uad6d\uc5b4abc"),
    ("chinese-with-latin", "\u6771\u4eactokyo"),
    ("arabic", "\u062f\u0641\u0639"),
]


def _findings(text: str) -> list[str]:
    chart = chart_of(text)
    facts = chart_facts(chart, ExplorationOptions())
    return [d.message for d in confusable_name.check(chart, facts)]


def _chart(state: str = "paid", event: str = "PAY") -> str:
    s, e = json.dumps(state), json.dumps(event)  # YAML reads JSON's escapes
    return (
        "statechart: c\n"
        f"events: {{{e}: {{}}}}\n"
        "guards: {ok: {if: 'true'}}\n"
        "initial: pending\n"
        "states:\n"
        f"  pending: {{on: {{{e}: {{to: {s}, guard: ok}}}}}}\n"
        f"  {s}: {{final: true}}\n"
    )


@pytest.mark.parametrize(("case", "name", "why"), FLAGGED, ids=[c[0] for c in FLAGGED])
def test_a_confusable_name_is_flagged(case: str, name: str, why: str) -> None:
    assert why in (confusable_name.problem(name) or ""), case


@pytest.mark.parametrize(("case", "name"), CLEAN, ids=[c[0] for c in CLEAN])
def test_a_name_in_one_script_stays_clean(case: str, name: str) -> None:
    assert confusable_name.problem(name) is None, case


@pytest.mark.parametrize(
    ("case", "name", "why"),
    [c for c in FLAGGED if c[0] in ("cyrillic-a-in-latin", "zero-width-space", "bidi-U+202E")],
)
@pytest.mark.parametrize("kind", ["state", "event"])
def test_state_and_event_names_in_a_chart(case: str, name: str, why: str, kind: str) -> None:
    text = _chart(state=name) if kind == "state" else _chart(event=name.upper())
    (message,) = _findings(text)
    assert message.startswith(f"{kind} name ") and why in message


@pytest.mark.parametrize(("case", "name"), CLEAN, ids=[c[0] for c in CLEAN])
def test_clean_names_in_a_chart_give_nothing(case: str, name: str) -> None:
    assert _findings(_chart(state=name, event=name)) == []
