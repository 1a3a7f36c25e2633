"""Hostile values through the instance page (every step) and its JSON lines: instance IDs,
event IDs, payload strings and reasons that are markup, quotes, URL syntax or control
characters reach the page escaped, never as markup, and the lines give them back
exactly."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from browser import served
from cli_process import statekit
from replayed_steps import PAYMENT

from statekit.inspect.context import Inspector
from statekit.inspect.layout import instance_href

HOSTILE = (
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "a/b/../events.jsonl",
    "?step=3&x=<b>#frag",
    "'; DROP TABLE statekit_events; --",
    "ünï cödé ✓ \u202e rtl",
    "%2F%00 percent",
    "{{ template }} ${x} `tick`",
)
MARKUP = ("<script", "<img", "<b>", '"><img')


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_values_are_escaped_on_every_step_and_kept_in_the_lines(
    text: str, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'hostile.db'}"
    lines = [
        {"instance": text, "event_id": text, "type": "START_PAY", "payload": {"amount": 5}},
        {
            "instance": text,
            "event_id": text + "-2",
            "type": "PAY_SUCCESS",
            "payload": {"channel_ref": text},
        },
        {"instance": text, "event_id": "late", "type": "PAY_FAILED", "payload": {"code": text}},
        {"instance": text, "event_id": "bad", "type": "START_PAY", "payload": {"amount": text}},
    ]
    done = statekit(
        "run", str(PAYMENT), "--db", url, stdin="".join(json.dumps(x) + "\n" for x in lines)
    )
    assert done.returncode in (0, 1), done.stderr
    inspector = Inspector(url)
    # the real server (uvicorn decodes an escaped path once; Starlette's TestClient
    # decodes it twice, so `%252F` would reach the app as `/`)
    with served(inspector) as base, httpx.Client(base_url=base) as client:
        for step in range(5):
            page = client.get(instance_href(text), params={"step": str(step)})
            assert page.status_code == 200, (step, page.text)
            body = page.text[page.text.index("<main>") :]
            for markup in MARKUP:
                assert markup not in body, (step, markup)
        got = client.get(instance_href(text) + "/events.jsonl")
        assert [json.loads(line) for line in got.text.splitlines()] == [
            {k: v for k, v in line.items()} for line in lines
        ]
        assert "no instance" in client.get(instance_href(text + "x")).text
    inspector.close()
