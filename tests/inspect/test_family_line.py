"""The instance page's family line: the instance that invoked this one and those it
invoked, each a link to its page, with the invoke id and the link's status."""

from __future__ import annotations

from runner_charts import COUNTER, chart_from
from starlette.testclient import TestClient

from statekit.inspect.app import create_app
from statekit.inspect.context import Inspector
from statekit.inspect.layout import instance_href
from statekit.runner.runner import Runner
from statekit.runner.store import open_store
from statekit.runner.store.family_rows import LinkRow

pytest_plugins = ("inspect_fixtures",)


def test_parent_and_children_are_linked(store_url: str) -> None:
    runner = Runner(chart_from(COUNTER), open_store(store_url))
    for instance_id in ("order-1", "order-1/payment/0", "order-1/shipment/0", "alone"):
        runner.create(instance_id)
    with runner.store.write():
        runner.store.insert_links(
            [
                LinkRow("order-1/payment/0", "order-1", "payment", "order-1", 0, "done", 1.0, 2.0),
                LinkRow("order-1/shipment/0", "order-1", "shipment", "order-1", 0, "active", 1.0),
            ]
        )
    runner.store.close()
    inspector = Inspector(store_url)
    try:
        with TestClient(create_app(inspector)) as client:
            parent = client.get(instance_href("order-1")).text
            child = client.get(instance_href("order-1/payment/0")).text
            alone = client.get(instance_href("alone")).text
    finally:
        inspector.close()
    for child_id in ("order-1/payment/0", "order-1/shipment/0"):
        assert f'<a href="{instance_href(child_id)}" data-child>' in parent
    assert "(<code>payment</code>, done)" in parent
    assert "(<code>shipment</code>, active)" in parent
    assert f'<a href="{instance_href("order-1")}" data-parent>' in child
    assert "as <code>payment</code> (done)" in child
    assert 'class="family"' not in alone
