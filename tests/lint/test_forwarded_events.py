"""`statekit lint` on a forwarding invocation: every event the parent can forward must be
declared by the child (else it is REJECTED UNKNOWN_EVENT there each time), an
`invoke-unclassified` finding at the invoke; none once the child declares it."""

from __future__ import annotations

from pathlib import Path

from cli_process import statekit

DESK = """\
statechart: desk
description: Takes notes, which its clerk sees too.
events:
  note: {}
  close: {}
initial: open
states:
  open:
    invoke: {id: clerk, chart: clerk, forward: true}
    on:
      note: {}
      close: closed
      done.invoke.clerk: closed
      error.invoke.clerk: closed
  closed: {final: true}
"""

CLERK = """\
statechart: clerk
description: Counts notes.
context:
  notes: {type: integer, default: 0}
events:
  note: {}
EXTRA
initial: working
states:
  working:
    on:
      note:
        do: [{assign: {notes: ctx.notes + 1}}]
      REACTION
  over: {final: true}
"""


def _lint(tmp_path: Path, extra: str, reaction: str) -> tuple[int, str]:
    (tmp_path / "desk.yaml").write_text(DESK, encoding="utf-8")
    clerk = CLERK.replace("EXTRA", extra).replace("REACTION", reaction)
    (tmp_path / "clerk.yaml").write_text(clerk, encoding="utf-8")
    done = statekit("lint", str(tmp_path))
    return done.returncode, done.stdout + done.stderr


def test_an_event_the_child_does_not_declare_is_reported_at_the_invoke(tmp_path: Path) -> None:
    code, out = _lint(tmp_path, "", "")
    assert code != 0, out
    assert "desk.yaml:9:" in out and "invoke-unclassified" in out, out
    assert "event close, which invoke 'clerk' forwards (forward: true)" in out, out
    assert "event note, which" not in out, out


def test_a_child_that_declares_and_classifies_every_event_is_clean(tmp_path: Path) -> None:
    code, out = _lint(tmp_path, "  close: {}", "close: over")
    assert "forwards (forward: true)" not in out, out
    assert code == 0, out
