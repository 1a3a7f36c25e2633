"""GitHub code scanning's `primaryLocationLineHash`: a rolling hash per line of a file.

Code scanning matches an alert across commits by this hash of the flagged line
and what follows it (the first 100 characters that are not blanks or tabs,
from the start of the line on), with `:n` telling the n-th equal hash in the
file apart. The `upload-sarif` action fills it in when a log has none; a log
uploaded another way (the REST API, another CI) carries its own, so statekit
computes it the same way, from the text of the file as committed:

- the algorithm: `hash` in github/codeql-action's `src/fingerprints.ts`
  (https://github.com/github/codeql-action/blob/main/src/fingerprints.ts);
- what code scanning reads of it:
  https://docs.github.com/en/code-security/code-scanning/integrating-with-code-scanning/sarif-support-for-code-scanning#providing-data-to-track-code-scanning-alerts-across-runs
"""

from __future__ import annotations

from array import array

BLOCK_SIZE = 100
"""Characters (UTF-16 code units, blanks and tabs left out) hashed per line."""
_MOD = 37
_MASK = (1 << 64) - 1  # the hash is a 64-bit integer that wraps
_FIRST_MOD = pow(_MOD, BLOCK_SIZE, 1 << 64)
_TAB, _SPACE, _LF, _CR = 9, 32, 10, 13
_END_OF_FILE = 0xFFFF  # the value the original adds after the last character


def line_hashes(text: str) -> tuple[str, ...]:
    """The hash of every line of `text` (item 0: line 1), each `hex:n` as code scanning
    writes it. Line ends are `\\n`, `\\r\\n` or `\\r`; the line after a final line end
    (empty) has a hash too."""
    units = array("H")
    units.frombytes(text.encode("utf-16-le", "surrogatepass"))
    window = [0] * BLOCK_SIZE
    starts = [-1] * BLOCK_SIZE  # the line that starts at this place of the window, or -1
    hashes: dict[int, str] = {}
    seen: dict[str, int] = {}
    value = index = line = 0
    line_start, after_cr = True, False

    def emit() -> None:
        digest = format(value, "x")
        seen[digest] = seen.get(digest, 0) + 1
        hashes[starts[index]] = f"{digest}:{seen[digest]}"
        starts[index] = -1

    def push(unit: int) -> None:
        nonlocal value, index
        value = (_MOD * value + unit - _FIRST_MOD * window[index]) & _MASK
        window[index] = unit
        index = (index + 1) % BLOCK_SIZE

    def take(unit: int) -> None:
        nonlocal line, line_start, after_cr
        if unit in (_SPACE, _TAB) or (after_cr and unit == _LF):
            after_cr = False
            return
        after_cr = unit == _CR
        if after_cr:
            unit = _LF
        if starts[index] != -1:
            emit()
        if line_start:
            line_start = False
            line += 1
            starts[index] = line
        if unit == _LF:
            line_start = True
        push(unit)

    for unit in units:
        take(unit)
    take(_END_OF_FILE)
    for _ in range(BLOCK_SIZE):
        if starts[index] != -1:
            emit()
        push(0)
    return tuple(hashes[n] for n in range(1, line + 1))
