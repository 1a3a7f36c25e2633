"""The instance and chart pages in headless Chromium over a store filled like `make demo`:
stepping through pay-1's history with the keys and the slider, the states highlighted on
the diagram at each step against the history replayed through the public API, the
chart's distribution counts on its diagram, screenshots checked structurally."""

from __future__ import annotations

from pathlib import Path

from browser import checked_screenshot, waiting
from cli_process import statekit
from replayed_steps import PAYMENT, expected_steps
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

import statekit as sk

pytest_plugins = ("inspect_fixtures",)

HIGHLIGHTED = """
return Array.from(document.querySelectorAll('[data-diagram] g.state.' + arguments[0]))
  .map(g => Array.from(g.classList).find(c => /^s_[0-9]+$/.test(c)).slice(2))
  .map(Number);
"""
"""The state ids whose SVG group carries the class given as the argument."""


def shown_step(driver: webdriver.Chrome) -> int:
    return int(driver.find_element(By.CSS_SELECTOR, "[data-step]").get_attribute("data-step") or -1)


def wait_for_step(driver: webdriver.Chrome, number: int) -> None:
    waiting(driver).until(lambda d: shown_step(d) == number)


def highlighted(driver: webdriver.Chrome, mark: str) -> frozenset[int]:
    return frozenset(driver.execute_script(HIGHLIGHTED, mark))


def press(driver: webdriver.Chrome, key: str) -> None:
    driver.find_element(By.TAG_NAME, "body").send_keys(key)


def test_stepping_with_keys_and_slider_highlights_the_replayed_states(
    served_demo: str, demo_url: str, driver: webdriver.Chrome, screenshots: Path
) -> None:
    steps = expected_steps(demo_url, "pay-1")
    driver.get(served_demo + "/instances/pay-1?step=0")
    wait_for_step(driver, 0)
    assert highlighted(driver, "after") == steps[0][2]
    for number in range(1, len(steps)):  # forward with → and j, alternately
        press(driver, Keys.ARROW_RIGHT if number % 2 else "j")
        wait_for_step(driver, number)
        _event_id, before, after = steps[number]
        assert highlighted(driver, "after") == after, number
        assert highlighted(driver, "before") == before, number
        assert driver.find_element(By.CSS_SELECTOR, "[data-step-slider]").get_attribute(
            "value"
        ) == str(number)
    checked_screenshot(driver, screenshots / "last-step.png")
    press(driver, Keys.ARROW_RIGHT)  # past the last step: nothing to follow
    press(driver, "k")
    wait_for_step(driver, len(steps) - 2)
    press(driver, Keys.ARROW_LEFT)
    wait_for_step(driver, len(steps) - 3)
    # the slider: moved to step 2 and released, the page shows step 2
    slider = driver.find_element(By.CSS_SELECTOR, "[data-step-slider]")
    driver.execute_script(
        "arguments[0].value = '2';"
        "arguments[0].dispatchEvent(new Event('input', {bubbles: true}));"
        "arguments[0].dispatchEvent(new Event('change', {bubbles: true}));",
        slider,
    )
    wait_for_step(driver, 2)
    assert highlighted(driver, "after") == steps[2][2]
    assert highlighted(driver, "before") == steps[2][1]
    taken = driver.find_elements(By.CSS_SELECTOR, "[data-diagram] g.edge.taken")
    assert len(taken) == 1
    width, height = checked_screenshot(driver, screenshots / "step-2.png")
    assert width >= 640 and height >= 300


def test_the_chart_page_draws_the_instances_on_their_states(
    served_demo: str, demo_url: str, driver: webdriver.Chrome, screenshots: Path
) -> None:
    chart = sk.load(PAYMENT)
    expected: dict[int, int] = {}
    with sk.open_store(demo_url) as store:
        runner = sk.Runner(chart, store)
        for instance_id in ("pay-1", "pay-2"):
            for sid in runner.load(instance_id).state.active_ids:
                expected[sid] = expected.get(sid, 0) + 1
    driver.get(served_demo + "/charts/payment")
    badges = driver.execute_script(
        "return Array.from(document.querySelectorAll('[data-diagram] g.state.occupied'))"
        ".map(g => [Array.from(g.classList).find(c => /^s_[0-9]+$/.test(c)).slice(2),"
        " g.querySelector('text.count').textContent]);"
    )
    assert {int(sid): int(n) for sid, n in badges} == expected
    for sid in expected:  # each badge is drawn inside the picture, not hidden
        box = driver.execute_script(
            "const t = document.querySelector('[data-diagram] g.s_' + arguments[0] +"
            " ' text.count').getBoundingClientRect(); return [t.width, t.height];",
            sid,
        )
        assert box[0] > 0 and box[1] > 0
    checked_screenshot(driver, screenshots / "chart.png")
    driver.find_element(By.CSS_SELECTOR, 'tr[data-state="created"] a').click()
    waiting(driver).until(lambda d: "state=created" in d.current_url)
    listed = driver.find_elements(By.CSS_SELECTOR, "#instances a[href^='/instances/']")
    assert [a.text for a in listed] == ["pay-2"]  # the one instance in `created`


def test_a_new_event_appears_on_the_instance_page_without_a_reload(
    served_demo: str, demo_url: str, driver: webdriver.Chrome
) -> None:
    driver.get(served_demo + "/instances/pay-2")
    wait_for_step(driver, 2)  # its two rejections
    marker = driver.execute_script("window.notReloaded = true; return window.notReloaded;")
    assert marker is True
    line = '{"instance": "pay-2", "event_id": "e3", "type": "START_PAY", "payload": {"amount": 7}}'
    done = statekit("run", str(PAYMENT), "--db", demo_url, stdin=line + "\n")
    assert done.returncode == 0, done.stderr
    waiting(driver).until(
        lambda d: d.find_element(By.CSS_SELECTOR, "[data-steps]").get_attribute("data-steps") == "3"
    )
    assert driver.execute_script("return window.notReloaded === true;")  # redrawn in place
    timeline = driver.find_element(By.CSS_SELECTOR, "table.timeline").text
    assert "e3" in timeline and "START_PAY" in timeline
