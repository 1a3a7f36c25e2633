"""region-reset: a transition that re-enters a parallel state restarts the regions it does not name.

The table covers where such a transition can sit (a parallel root, a parallel
state inside a compound one, the parallel state's own transition, a deep
source) and where nothing restarts (every region named, the region itself
named, a transition inside one region, entering the parallel state from
outside, targeting the parallel state itself, leaving it for good, a history
target). Applying the finding's suggested `to:` silences it.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from analysis_charts import findings

HEAD = """
statechart: r
events: {A: {}, B: {}, GO: {}}
"""

RESTARTS = {
    "cross-region in a parallel root": (
        """
        parallel: true
        states:
          left: {initial: l1, states: {l1: {on: {A: l2}}, l2: {on: {GO: right.r2}}}}
          right: {initial: r1, states: {r1: {on: {B: r2}}, r2: {}}}
          third: {initial: t1, states: {t1: {}}}
        """,
        "'left.l2' --GO--> 'right.r2'",
        ["left", "third"],
    ),
    "the parallel state's own transition": (
        """
        initial: p
        states:
          p:
            parallel: true
            on: {GO: p.x.x2}
            states:
              x: {initial: x1, states: {x1: {on: {A: x2}}, x2: {}}}
              y: {initial: y1, states: {y1: {on: {B: y2}}, y2: {}}}
        """,
        "'p' --GO--> 'p.x.x2'",
        ["p.y"],
    ),
    "a deep source in a nested parallel state": (
        """
        initial: outer
        states:
          outer:
            initial: p
            states:
              p:
                parallel: true
                states:
                  x:
                    initial: deep
                    states:
                      deep: {initial: d1, states: {d1: {on: {GO: p.y.y2}}}}
                  y: {initial: y1, states: {y1: {on: {B: y2}}, y2: {}}}
                  z: {initial: z1, states: {z1: {on: {A: z2}}, z2: {}}}
        """,
        "'outer.p.x.deep.d1' --GO--> 'outer.p.y.y2'",
        ["outer.p.x", "outer.p.z"],
    ),
}

NO_RESTART = {
    "every region named": """
        parallel: true
        states:
          left:
            initial: l1
            states: {l1: {on: {A: l2}}, l2: {on: {GO: {to: [right.r2, left.l1]}}}}
          right: {initial: r1, states: {r1: {on: {B: r2}}, r2: {}}}
        """,
    "the region itself named": """
        parallel: true
        states:
          left: {initial: l1, states: {l1: {on: {A: l2}}, l2: {on: {GO: {to: [right.r2, left]}}}}}
          right: {initial: r1, states: {r1: {on: {B: r2}}, r2: {}}}
        """,
    "a transition inside one region": """
        parallel: true
        states:
          left: {initial: l1, states: {l1: {on: {A: l2}}, l2: {on: {GO: l1}}}}
          right: {initial: r1, states: {r1: {on: {B: r2}}, r2: {}}}
        """,
    "entering the parallel state from outside": """
        initial: idle
        states:
          idle: {on: {GO: p.x.x2}}
          p:
            parallel: true
            states:
              x: {initial: x1, states: {x1: {on: {A: x2}}, x2: {}}}
              y: {initial: y1, states: {y1: {on: {B: y2}}, y2: {}}}
        """,
    "targeting the parallel state itself": """
        initial: p
        states:
          p:
            parallel: true
            states:
              x: {initial: x1, states: {x1: {on: {A: x2}}, x2: {on: {GO: p}}}}
              y: {initial: y1, states: {y1: {on: {B: y2}}, y2: {}}}
        """,
    "leaving it for good": """
        initial: p
        states:
          p:
            parallel: true
            states:
              x: {initial: x1, states: {x1: {on: {A: x2}}, x2: {on: {GO: out}}}}
              y: {initial: y1, states: {y1: {on: {B: y2}}, y2: {}}}
          out: {final: true}
        """,
    "a history target inside the region": """
        initial: p
        states:
          p:
            parallel: true
            states:
              x:
                initial: x1
                states:
                  h: {history: shallow}
                  x1: {on: {A: x2}}
                  x2: {on: {GO: {to: [y.y1, x.h]}}}
              y: {initial: y1, states: {y1: {on: {B: y2}}, y2: {}}}
        """,
}


def _chart(body: str) -> str:
    return textwrap.dedent(HEAD).lstrip("\n") + textwrap.dedent(body).lstrip("\n")


@pytest.mark.parametrize(("body", "label", "regions"), RESTARTS.values(), ids=list(RESTARTS))
def test_the_restarted_regions_are_named(
    tmp_path: Path, body: str, label: str, regions: list[str]
) -> None:
    (finding,) = findings(tmp_path, _chart(body), "region-reset")
    assert finding.message.startswith(f"transition {label} restarts ")
    named = re.findall(r"'([^']+)'", finding.message.split(" restarts ", 1)[1].split(" at ")[0])
    assert named == regions
    assert finding.severity.value == "warning"


@pytest.mark.parametrize(("body", "label", "regions"), RESTARTS.values(), ids=list(RESTARTS))
def test_naming_the_regions_as_suggested_silences_it(
    tmp_path: Path, body: str, label: str, regions: list[str]
) -> None:
    (finding,) = findings(tmp_path, _chart(body), "region-reset")
    (hint,) = [n for n in finding.notes if n.startswith("if the restart is meant")]
    suggested = re.search(r"`to: (\[.*\])`", hint)
    assert suggested
    # each body has one transition on GO: the one reported
    fixed = re.sub(r"GO: ([A-Za-z0-9_.]+)", f"GO: {{to: {suggested[1]}}}", body, count=1)
    assert fixed != body
    assert findings(tmp_path, _chart(fixed), "region-reset") == []


@pytest.mark.parametrize("body", NO_RESTART.values(), ids=list(NO_RESTART))
def test_nothing_restarts(tmp_path: Path, body: str) -> None:
    assert findings(tmp_path, _chart(body), "region-reset") == []
