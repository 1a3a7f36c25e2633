"""`HttpPoster`: outbox messages delivered as HTTP POSTs of form fields.

    poster = HttpPoster(lambda message: "http://127.0.0.1:8000/instances/o-1/events")
    dispatcher = statekit.Dispatcher(store, {"basichttp": poster})

It is a `Dispatcher` handler like any other: the dispatcher claims each message in
order per instance, calls the poster outside any transaction, and marks the message
delivered once the poster returned; so the retries, backoff and dead messages are the
dispatcher's. The poster POSTs the message's payload as form fields
(`statekit.http.form_fields.form_body`) to the URL `location(message)` gives, with the
header `Idempotency-Key: <instance ID>/<message ID>` (a redelivered message has the
same key, and `statekit.http.intake` applies it as the event ID, so it is applied
once). An answer other than 2xx, or a server that cannot be reached within `timeout`
seconds, raises `HttpDeliveryError` (the message is retried). Only the standard
library is used (`urllib.request`); `http://` and `https://` locations only.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Callable
from urllib.parse import urlsplit

from statekit.http.form_fields import form_body
from statekit.runner.outbox import OutboxMessage

FORM = "application/x-www-form-urlencoded"


class HttpDeliveryError(RuntimeError):
    """A POST that did not get a 2xx answer (the dispatcher retries the message)."""


class HttpPoster:
    """Posts each message it is handed to `location(message)` (module docstring)."""

    def __init__(self, location: Callable[[OutboxMessage], str], *, timeout: float = 10.0):
        self.location = location
        self.timeout = timeout

    def __call__(self, message: OutboxMessage) -> int:
        """POST `message`; its answer's status (2xx), else `HttpDeliveryError`."""
        url = self.location(message)
        if urlsplit(url).scheme not in ("http", "https"):
            raise HttpDeliveryError(f"cannot POST to {url!r}: an http:// or https:// URL only")
        request = urllib.request.Request(
            url,
            data=form_body(message.payload),
            method="POST",
            headers={
                "Content-Type": FORM,
                "Idempotency-Key": f"{message.instance_id}/{message.message_id}",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                status = int(answer.status)
        except urllib.error.HTTPError as error:
            detail = error.read().decode("utf-8", "replace")[:500]
            raise HttpDeliveryError(f"POST {url}: {error.code} {detail}") from None
        except (urllib.error.URLError, OSError) as error:
            raise HttpDeliveryError(f"POST {url}: {error}") from None
        if not 200 <= status < 300:
            raise HttpDeliveryError(f"POST {url}: answered {status}")
        return status
