"""The inspector's shell in Chromium: the list over the demo store, a link to an
instance, the static script running under the Content-Security-Policy."""

from __future__ import annotations

from pathlib import Path

from browser import checked_screenshot, waiting
from selenium import webdriver
from selenium.webdriver.common.by import By

pytest_plugins = ("inspect_fixtures",)


def test_the_list_shows_the_demo_instances_and_links_to_them(
    served_demo: str, driver: webdriver.Chrome, screenshots: Path
) -> None:
    driver.get(served_demo + "/")
    links = [
        a.text for a in driver.find_elements(By.CSS_SELECTOR, "#instances a[href^='/instances/']")
    ]
    assert sorted(links) == ["pay-1", "pay-2"]
    # the script ran (the CSP allows /static/inspect.js): it says the page is live
    waiting(driver).until(
        lambda d: d.find_element(By.CSS_SELECTOR, "[data-live-status]").text == "live"
    )
    checked_screenshot(driver, screenshots / "list.png")
    driver.find_element(By.LINK_TEXT, "pay-1").click()
    waiting(driver).until(lambda d: "/instances/pay-1" in d.current_url)
    assert "pay-1" in driver.find_element(By.TAG_NAME, "h1").text
