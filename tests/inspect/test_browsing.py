"""The instances list in headless Chromium over the store `make demo` fills, on both
stores: the list, a filter, the counts per state, a search that leads to an instance,
and new events arriving while the page is open (no reload)."""

from __future__ import annotations

from pathlib import Path

from browser import checked_screenshot, waiting
from cli_process import ROOT
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement

from statekit.api import load
from statekit.runner.runner import Runner
from statekit.runner.store import open_store

pytest_plugins = ("inspect_fixtures",)


def _listed(driver: webdriver.Chrome) -> list[str]:
    """The instances the list shows, read in one step (a live redraw may replace the rows
    between two WebDriver calls)."""
    found: list[str] = driver.execute_script(
        "return Array.from(document.querySelectorAll('#instances tbody tr[data-instance]'),"
        " row => row.dataset.instance)"
    )
    return found


def _row_text(driver: webdriver.Chrome, instance_id: str) -> str:
    """The text of one instance's row, read in one step ("" when it is not shown)."""
    text: str | None = driver.execute_script(
        "const row = Array.from(document.querySelectorAll('#instances tr[data-instance]'))"
        ".find(r => r.dataset.instance === arguments[0]); return row ? row.innerText : null",
        instance_id,
    )
    return text or ""


def _field(driver: webdriver.Chrome, name: str) -> WebElement:
    return driver.find_element(By.CSS_SELECTOR, f"#filters [name='{name}']")


def test_list_filter_search_and_open_an_instance(
    served_demo: str, driver: webdriver.Chrome, screenshots: Path
) -> None:
    driver.get(served_demo + "/")
    assert sorted(_listed(driver)) == ["pay-1", "pay-2"]
    counts = {
        str(a.get_attribute("data-state")): a.text
        for a in driver.find_elements(By.CSS_SELECTOR, "#state-counts a[data-state]")
    }
    assert set(counts) == {"closed", "created"}
    checked_screenshot(driver, screenshots / "list.png")

    # a filter from the form: a shareable address, the matching instances only
    _field(driver, "state").send_keys("created")
    _field(driver, "state").submit()
    waiting(driver).until(lambda d: "state=created" in d.current_url)
    assert _listed(driver) == ["pay-2"]
    driver.get(served_demo + "/?rejections=1&sort=instance&order=asc")
    assert _listed(driver) == ["pay-1", "pay-2"]
    driver.get(served_demo + "/?outbox=pending")
    assert _listed(driver) == ["pay-1"]
    driver.get(served_demo + "/?outbox=dead")
    assert _listed(driver) == []
    assert "No instance matches" in driver.find_element(By.ID, "instances").text
    checked_screenshot(driver, screenshots / "filtered.png")

    # a count is a link to its state's instances
    driver.get(served_demo + "/")
    driver.find_element(By.CSS_SELECTOR, "#state-counts a[data-state='closed']").click()
    waiting(driver).until(lambda d: "state=closed" in d.current_url)
    assert _listed(driver) == ["pay-1"]

    # an event ID found leads to its instance
    _field(driver, "q").send_keys("e6")
    _field(driver, "q").submit()
    waiting(driver).until(lambda d: d.current_url.endswith("/instances/pay-1"))
    assert "pay-1" in driver.find_element(By.TAG_NAME, "h1").text
    checked_screenshot(driver, screenshots / "instance.png")


def test_new_events_appear_without_a_reload(
    served_demo: str, demo_url: str, driver: webdriver.Chrome, screenshots: Path
) -> None:
    driver.get(served_demo + "/")
    assert sorted(_listed(driver)) == ["pay-1", "pay-2"]
    driver.execute_script("window.__sameDocument = true")  # gone if the page reloads
    with open_store(demo_url) as store:
        runner = Runner(load(str(ROOT / "machines" / "payment.yaml")), store)
        runner.create("pay-3")
        assert runner.apply("pay-3", "e1", "START_PAY", {"amount": 250}).applied
        waiting(driver).until(lambda d: "pay-3" in _listed(d))
        assert _listed(driver)[0] == "pay-3"  # the newest activity first
        row = _row_text(driver, "pay-3")
        assert "processing" in row and "1 timer" in row
        # a rejection moves the cursor too: pay-2's row gains its third rejection
        late = runner.apply("pay-2", "e3", "REFUND_SUCCESS", {"refund_ref": "r"})
        assert late.status.value == "REJECTED"
        waiting(driver).until(lambda d: "3 rejected" in _row_text(d, "pay-2"))
    assert driver.execute_script("return window.__sameDocument === true")
    checked_screenshot(driver, screenshots / "live.png")
