"""shadowed-reject: a `reject` entry that something else always answers first.

One row per thing that can pre-empt an entry (a transition, an `already`, a
guard's `else` in another region, a more specific `reject`, the final chart),
each saying what pre-empts it; and the rows where nothing is reported: the
entry is the answer somewhere, its state is never active, the pre-empting
answer has the same reason, the exploration is incomplete.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from analysis_charts import findings

TWO_REGIONS = """
statechart: order
events: {PAY_START: {}, PAY_SUCCESS: {}, ISSUE: {}}
parallel: true
states:
  payment:
    initial: created
    reject: {PAY_START: IN_PROGRESS, PAY_SUCCESS: NOT_PROCESSING}
    states:
      created:
        on: {PAY_START: processing}
        reject: {PAY_SUCCESS: PAYMENT_NOT_STARTED}
      processing: {on: {PAY_SUCCESS: paid}}
      paid: {final: true, already: [PAY_SUCCESS]}
  invoice:
    initial: draft
    states:
      draft:
        on:
          ISSUE: {to: issued, if: "active('payment.paid')", else: NOT_PAID}
          PAY_SUCCESS: {to: draft, if: "active('payment.processing')", else: INVOICE_WAITS}
      issued:
        final: true
        reject: {ISSUE: ALREADY_ISSUED}
"""

SHADOWED = {
    "a guard's else in another region (PAY_SUCCESS before payment started)": (
        TWO_REGIONS,
        "`reject: {PAY_SUCCESS: PAYMENT_NOT_STARTED}` on 'payment.created'",
        "the `else` of the condition of 'invoice.draft' --PAY_SUCCESS--> 'invoice.draft' "
        "(REJECTED INVOICE_WAITS)",
    ),
    "a transition of the same state": (
        """
        statechart: t
        events: {GO: {}}
        initial: a
        states:
          a: {on: {GO: b}, reject: {GO: NOT_NOW}}
          b: {final: true}
        """,
        "`reject: {GO: NOT_NOW}` on 'a'",
        "the transition 'a' --GO--> 'b'",
    ),
    "an already of the same state": (
        """
        statechart: t
        events: {GO: {}, DONE: {}}
        initial: a
        states:
          a: {on: {DONE: b}, already: [GO], reject: {GO: NOT_NOW}}
          b: {final: true}
        """,
        "`reject: {GO: NOT_NOW}` on 'a'",
        "`already: [GO]` on 'a' (ALREADY_APPLIED)",
    ),
    "a more specific reject": (
        """
        statechart: t
        events: {GO: {}, DONE: {}}
        initial: p
        states:
          p:
            initial: a
            reject: {GO: OUTER}
            states:
              a: {on: {DONE: b}, reject: {GO: INNER}}
              b: {on: {DONE: c}, reject: {GO: INNER_TOO}}
          c: {final: true}
        """,
        "`reject: {GO: OUTER}` on 'p'",
        "one of: the more specific `reject: {GO: INNER_TOO}` on 'p.b'; "
        "the more specific `reject: {GO: INNER}` on 'p.a'",
    ),
    "the final chart": (
        """
        statechart: t
        events: {GO: {}, LATE: {}}
        initial: a
        reject: {LATE: TOO_LATE}
        states:
          a: {on: {GO: end}, reject: {LATE: NOT_YET}}
          end: {final: true}
        """,
        "`reject: {LATE: TOO_LATE}` on 't'",
        "one of: the final chart (REJECTED TERMINAL_STATE); "
        "the more specific `reject: {LATE: NOT_YET}` on 'a'",
    ),
    "a guard of the same state, whichever way it goes": (
        """
        statechart: t
        context: {n: integer}
        events: {GO: {}}
        initial: a
        states:
          a:
            on: {GO: {to: a, if: "ctx.n > 0", else: EMPTY}}
            reject: {GO: NOT_NOW}
        """,
        "`reject: {GO: NOT_NOW}` on 'a'",
        "the `else` of the condition of 'a' --GO--> 'a' (REJECTED EMPTY)",
    ),
    "a wildcard that every event pre-empts": (
        """
        statechart: t
        events: {GO: {}, BACK: {}}
        initial: a
        states:
          a: {on: {GO: b, BACK: a}, reject: {"*": NOT_NOW}}
          b: {on: {GO: a, BACK: a}}
        """,
        "`reject: {*: NOT_NOW}` on 'a'",
        "every event is answered first by one of:",
    ),
}


@pytest.mark.parametrize(("text", "entry", "by"), SHADOWED.values(), ids=list(SHADOWED))
def test_an_entry_that_is_never_the_answer_says_what_pre_empts_it(
    tmp_path: Path, text: str, entry: str, by: str
) -> None:
    found = [f for f in findings(tmp_path, text, "shadowed-reject") if f.message.startswith(entry)]
    assert len(found) == 1, [f.message for f in findings(tmp_path, text, "shadowed-reject")]
    (finding,) = found
    assert finding.message.startswith(f"{entry} is never the answer: in every reachable")
    assert by in finding.message
    assert "(line " not in finding.message  # fingerprints must not move with lines
    assert any(note.startswith(("for example in {", "the ")) for note in finding.notes)


NOT_SHADOWED = {
    "the answer in one configuration": """
        statechart: t
        events: {GO: {}, X: {}}
        initial: a
        states:
          a: {on: {GO: b}, reject: {X: NOT_YET}}
          b: {on: {X: a}, reject: {GO: AGAIN}}
        """,
    "a state that is never active": """
        statechart: t
        events: {GO: {}}
        initial: a
        states:
          a: {on: {GO: a}}
          b: {on: {GO: a}, reject: {GO: NEVER}}
        """,
    "pre-empted by the same reason": """
        statechart: t
        events: {GO: {}}
        parallel: true
        states:
          r: {initial: a, states: {a: {reject: {GO: NOT_RUNNING}}}}
          s:
            initial: x
            states:
              x: {on: {GO: {to: x, if: "active('r.b')", else: NOT_RUNNING}}}
        """,
}


@pytest.mark.parametrize("text", NOT_SHADOWED.values(), ids=list(NOT_SHADOWED))
def test_entries_that_are_answers_or_unreached_are_not_reported(tmp_path: Path, text: str) -> None:
    assert findings(tmp_path, text, "shadowed-reject") == []


def test_an_incomplete_exploration_proves_nothing(tmp_path: Path) -> None:
    text = SHADOWED["a transition of the same state"][0]
    assert findings(tmp_path, text, "shadowed-reject")
    assert findings(tmp_path, text, "shadowed-reject", max_configurations=1) == []
