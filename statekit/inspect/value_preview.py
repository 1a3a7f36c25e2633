"""Every value a page draws is bounded: a long text is cut to a preview.

A payload, a context value, an outbox message or an error can be as large as the
store lets it be (megabytes); drawn whole, and once per panel it appears in, it makes
a page of tens of megabytes that a browser cannot lay out. A page shows at most
`PREVIEW_BYTES` of any one value, followed by how much was left out; the whole value
is served as it is by the instance's raw-value address (`raw_value_href`), which the
page links to.
"""

from __future__ import annotations

from urllib.parse import urlencode

PREVIEW_BYTES = 2048
"""The most of one value's UTF-8 text a page shows."""


def preview(text: str) -> str:
    """`text` when it is at most `PREVIEW_BYTES` long in UTF-8, else its first
    `PREVIEW_BYTES` (never half a character) and "… N more bytes"."""
    if len(text) <= PREVIEW_BYTES // 4:  # fast path: cannot exceed the bound
        return text
    data = text.encode("utf-8")
    if len(data) <= PREVIEW_BYTES:
        return text
    kept = data[:PREVIEW_BYTES].decode("utf-8", errors="ignore")
    left = len(data) - len(kept.encode("utf-8"))
    return f"{kept}… {left:,} more bytes"


def is_cut(text: str) -> bool:
    """Whether `preview` cuts `text`."""
    return len(text) > PREVIEW_BYTES // 4 and len(text.encode("utf-8")) > PREVIEW_BYTES


def raw_value_href(instance_href: str, step: int, value: str, message_id: str = "") -> str:
    """The address serving one whole value of the instance at `step`: `value` is
    "payload" (the step's event payload), "context" (the context after the step) or
    "message" (the outbox message `message_id`)."""
    params = {"step": str(step), "value": value}
    if message_id:
        params["message"] = message_id
    return instance_href + "?" + urlencode(params)
