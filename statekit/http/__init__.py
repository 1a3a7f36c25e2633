"""Events over HTTP: `HttpPoster` delivers outbox messages as form POSTs (a `Dispatcher`
handler); `event_intake` is the Starlette app that takes such POSTs (or JSON) as events
for a chart's instances. The intake needs the `inspect` extra (Starlette, uvicorn);
the poster only the standard library. See docs/http.md."""

from statekit.http.form_fields import FormFieldError, form_body, typed_payload
from statekit.http.poster import HttpDeliveryError, HttpPoster

__all__ = ["FormFieldError", "HttpDeliveryError", "HttpPoster", "form_body", "typed_payload"]
