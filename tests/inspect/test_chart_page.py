"""The chart page through Starlette's TestClient: the live distribution of the demo's
instances (on the diagram and in the table), the state x event classification, the
invariants and races as statekit's analysis finds them, the analysis bound, and a chart
drawn from the source the store kept or refused when the store has none."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_process import ROOT
from order_payment_family import ORDER
from starlette.testclient import TestClient

import statekit as sk
from statekit.analysis.options import ExplorationOptions, explore_with
from statekit.analysis.races import find_races
from statekit.inspect.app import create_app
from statekit.inspect.chart_page import analysis_panel
from statekit.inspect.chart_summary import analyse
from statekit.inspect.context import Inspector, charts_by_version

pytest_plugins = ("inspect_fixtures",)

PAYMENT = ROOT / "machines" / "payment.yaml"
_COUNT = re.compile(
    r'<g id="[^"]*" class="(?:node|cluster) state s_(\d+) occupied">.*?'
    r'<text class="count"[^>]*>(\d+)</text>',
    re.DOTALL,
)


@pytest.fixture
def client(demo_inspector: Inspector) -> Iterator[TestClient]:
    with TestClient(create_app(demo_inspector)) as test_client:
        yield test_client


def test_the_distribution_is_drawn_on_the_diagram_and_listed(
    client: TestClient, demo_url: str
) -> None:
    chart = sk.load(PAYMENT)
    expected: dict[int, int] = {}
    with sk.open_store(demo_url) as store:
        runner = sk.Runner(chart, store)
        for instance_id in ("pay-1", "pay-2"):
            for sid in runner.load(instance_id).state.active_ids:
                expected[sid] = expected.get(sid, 0) + 1
    page = client.get("/charts/payment").text
    assert "compiled from the source the store kept" in page  # no --chart given
    drawn = {int(sid): int(n) for sid, n in _COUNT.findall(page)}
    assert drawn == expected
    listed = dict(
        re.findall(
            r'<tr data-state="([^"]+)"><td><code>[^<]*</code></td>'
            r'<td class="count" data-count>(\d+)',
            page,
        )
    )
    assert {chart.ir.path_index[p]: int(n) for p, n in listed.items()} == expected
    assert "<span data-total>2</span>" in page
    assert client.get("/charts/payment/2").text.count("data-count") == len(expected)


def test_the_classification_invariants_and_races_are_the_analysis_answers(
    client: TestClient,
) -> None:
    page = client.get("/charts/payment").text
    table = page[page.index('class="classification"') :]
    row = re.search(r"<tr><th><code>created</code></th>(.*?)</tr>", table).group(1)  # type: ignore[union-attr]
    cells = [c.replace("<wbr>", "") for c in re.findall(r"<td>(.*?)</td>", row)]
    assert cells[1] == "PAYMENT_NOT_STARTED"  # PAY_SUCCESS, as the chart rejects it there
    assert cells[6] == "→ closed"  # CLOSE
    assert page.count('<tr class="invariant runtime">') == 2
    assert "Explored completely" in page
    races = find_races(sk.load(PAYMENT).ir).races
    assert page.count('<tr class="race ') == len(races)


def test_an_exploration_past_its_bound_says_analysis_limit_reached() -> None:
    chart = sk.load(PAYMENT)
    found = analyse(explore_with(chart.ir, ExplorationOptions(max_configurations=2)))
    panel = str(analysis_panel(chart, found))
    assert "Analysis limit reached" in panel
    assert "Not searched" in panel  # races: left to `statekit races`
    assert "not proven" in panel


def test_a_chart_given_with_chart_is_used_and_one_the_store_lacks_is_refused(
    tmp_path: Path,
) -> None:
    chart = sk.load(PAYMENT)
    url = f"sqlite:///{tmp_path / 'bare.db'}"
    with sk.open_store(url) as store:  # a chart built from its IR: the store gets no source
        sk.Runner(sk.Chart(chart.ir), store).create("p")
    bare = Inspector(url)
    with TestClient(create_app(bare)) as test_client:
        refused = test_client.get("/charts/payment")
        assert refused.status_code == 404
        assert "pass the chart with --chart" in refused.text
        assert "is not available" in test_client.get("/instances/p").text
    bare.close()
    given = Inspector(url, charts_by_version([chart]))
    with TestClient(create_app(given)) as test_client:
        page = test_client.get("/charts/payment")
        assert page.status_code == 200 and "given with --chart" in page.text
        assert "data-diagram" in test_client.get("/instances/p").text
        assert "given with --chart" in test_client.get("/charts").text
    given.close()


@pytest.mark.parametrize("path", ["/charts/nope", "/charts/payment/7", "/charts/payment/0"])
def test_an_unknown_chart_or_version_is_a_404(client: TestClient, path: str) -> None:
    page = client.get(path)
    assert page.status_code == 404
    assert "no chart" in page.text or "has no version" in page.text


def test_the_chart_page_links_the_charts_it_invokes_and_sends_to(tmp_path: Path) -> None:
    sends = ORDER.replace(
        "      CANCEL: cancelled\n",
        "      CANCEL:\n        to: cancelled\n        do:\n"
        "          - send: {event: REFUND, to: {chart: ledger, instance: ctx.order_id}}\n",
    )
    (tmp_path / "order.yaml").write_text(sends, encoding="utf-8")
    order = sk.load(tmp_path / "order.yaml")
    url = f"sqlite:///{tmp_path / 'family.db'}"
    with sk.open_store(url):
        pass
    given = Inspector(url, charts_by_version([order, sk.load(PAYMENT)]))
    with TestClient(create_app(given)) as test_client:
        page = test_client.get("/charts/order").text
        alone = test_client.get("/charts/payment").text
    given.close()
    assert (
        '<li>invokes <a href="/charts/payment"><code>payment</code></a> as '
        "<code>payment</code> in <code>paying</code></li>"
    ) in page
    assert (
        '<li>sends <code>REFUND</code> to <a href="/charts/ledger"><code>ledger</code></a> '
        "instance <code>ctx.order_id</code></li>"
    ) in page
    assert "data-linked-charts" not in alone
