"""The canonical JSON text: the one form statekit hashes, compares and stores.

Every such text (the chart digest, an event's payload and the hash of `[type,
payload]`, the evidence, a context, the outbox's payloads, snapshots, audit details,
the IR of `statekit compile`) is `canonical_json` of its value. The form is defined
in docs/canonical-json.md: exactly what statekit wrote before, `json.JSONEncoder(
sort_keys=True, separators=(",", ":"), ensure_ascii=False)` (keys sorted by code
point, no insignificant white space, characters kept as they are, integers of any
size, floats as `repr`, NaN and the infinities as `NaN`, `Infinity`, `-Infinity`),
so that stored hashes and `statekit verify` keep working on every existing store.

orjson writes the text: per record of the task chart under callgrind
(`bench/canonical_encoders.py --instructions`), a payload in 6.7 k instructions, an
evidence record in 23.7 k and a context in 22.1 k, where the standard library's C
encoder (built once, as statekit used it) took 8.2 k, 34.8 k and 24.2 k; orjson alone
takes 3.8-5.2 k, 9.2 k and 5.2 k, the rest is the checks below. Where orjson's bytes
would differ, the standard library's encoder writes the text instead:

- a float below 1e-4: orjson writes `0.00001` and `1e-6` where `repr` writes `1e-05`
  and `1e-06` (seen in its output as `e-` or `0.0000`, then by `_SMALL_FLOAT`);
- NaN and the infinities: orjson writes `null` (when the output holds `null`,
  `_holds_non_finite` looks for one);
- what orjson refuses: integers beyond 64 bits, strings with a lone surrogate, keys
  that are not strings, float subclasses, nesting deeper than 254 levels;
- dataclasses and dates, which orjson writes and the standard library refuses
  (passed to `_refused`, then refused by the standard library in its words).

A string that merely holds one of those marks (`"e-mail"`, `"null"`) takes the
standard library's path too, with the same bytes. Two kinds of value are written
where the standard library refused them: members of an `enum.Enum` that is neither
an int nor a str, and `uuid.UUID` (orjson has no option to refuse them); statekit
encodes neither, since payloads and contexts are checked against their declared
types first.

Why orjson: the same bytes as `repr` for every float but those below 1e-4 (msgspec,
measured alike, also writes `1e16` for `1e+16`), keys sorted by code point as the
standard library sorts them, wheels for CPython 3.11+ on Linux, macOS and Windows,
and a maintained project with frequent releases. Decoding stays with `json.loads`:
a cached `Runner.apply` decodes nothing (cProfile of `bench.runner_throughput`'s
counter chart), and loading an instance decodes once.
"""

from __future__ import annotations

import json
import marshal
import re
from collections.abc import Callable
from typing import Any

import orjson

_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
"""Sorted keys; dataclasses and dates go to `_refused` (the standard library refuses them)
instead of being written as orjson writes them."""

_CHECKED = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
"""The definition of the canonical form, and the encoder of every value orjson cannot
write in it."""


def _refused(value: object) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def canonical_json(value: Any) -> str:
    """The canonical JSON of `value` as a text: sorted keys, no insignificant white space,
    UTF-8 kept (see the module docstring); TypeError for a value JSON cannot hold,
    ValueError for a value that contains itself."""
    try:
        out = orjson.dumps(value, _refused, _OPTIONS)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return _CHECKED.encode(value)
    # The text's marks tested on the decoded text with `in`: the three `bytes.find`s
    # before this (`in` on bytes first tries its operand as an integer) cost 4,300
    # instructions an evidence record, the three `str` tests 900 (callgrind,
    # bench/xstate_peer.py's guarded chart).
    text = out.decode()
    if ("e-" in text or "0.0000" in text) and _SMALL_FLOAT.search(text) is not None:
        return _CHECKED.encode(value)
    if "null" in text and _holds_non_finite(value):
        return _CHECKED.encode(value)
    return text


_SMALL_FLOAT = re.compile(r"[0-9]e-[0-9]|0\.0000")
"""How orjson writes a float below 1e-4 (`1e-6`, `0.00001`), where `repr` writes `1e-06`
and `1e-05` (a string that holds the same characters takes the slower path as well)."""


def _holds_non_finite(value: Any) -> bool:
    """Whether a NaN or an infinity is anywhere in `value` (orjson writes them as `null`).

    marshal writes every float as its 8 bytes, little-endian: a non-finite one ends in
    a byte `F0`-`FF` and then `7F` or `FF` (its exponent all ones), which no UTF-8 text
    holds; only where those two bytes appear (in an integer, or another float's bytes,
    too) is `value` walked to be sure. marshal refuses subclasses and other types: those
    values are walked. Per record of the task chart's context (with nulls), under
    callgrind: marshal 7.1 k instructions, the walk 12.8 k, the standard library's whole
    encoding 24.2 k. (In `canonical_json`, one regular expression for the three marks
    cost 10 k there, more than the three scans.)
    """
    try:
        packed = marshal.dumps(value, 2)  # version 2: floats in binary, no references
    except ValueError:  # a type marshal does not write, or nested too deep for it
        return _walk_for_non_finite(value)
    if packed.find(b"\x7f") < 0 and packed.find(b"\xff") < 0:
        return False
    return _NON_FINITE_BYTES.search(packed) is not None and _walk_for_non_finite(value)


_NON_FINITE_BYTES = re.compile(rb"[\xf0-\xff][\x7f\xff]")


def _walk_for_non_finite(value: Any) -> bool:
    """`_holds_non_finite` by looking at every member (iterative, however deep)."""
    stack = [value]
    pop, push = stack.pop, stack.extend
    while stack:
        item = pop()
        cls = item.__class__
        if cls is str or cls is int or cls is bool or item is None:
            continue
        if isinstance(item, float):
            if item - item != 0.0:  # NaN - NaN and inf - inf are NaN
                return True
        elif isinstance(item, dict):
            push(item.values())
        elif isinstance(item, list | tuple):
            push(item)
    return False


canonical_string: Callable[[str], str] = json.encoder.encode_basestring
"""`canonical_json` of a string, without going through the encoder (the same C function
the standard library's encoder writes strings with when `ensure_ascii=False`)."""
