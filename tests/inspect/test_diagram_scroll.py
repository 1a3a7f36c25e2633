"""The diagram box scrolls to what the page is about (D4): on the instance page the
states active after the selected step, on each step and on load; on the chart page the
states holding instances. Checked in Chromium, where only a browser shows it."""

from __future__ import annotations

from browser import waiting
from selenium import webdriver

pytest_plugins = ("inspect_fixtures",)

_INSIDE = """
const box = document.querySelector('figure.diagram').getBoundingClientRect();
const marks = [...document.querySelectorAll(arguments[0])];
return marks.length > 0 && marks.every(m => {
  const r = m.getBoundingClientRect();
  return r.top >= box.top - 1 && r.bottom <= box.bottom + 1
    && r.left >= box.left - 1 && r.right <= box.right + 1;
});
"""


def test_each_step_shows_its_after_states_in_the_box(
    served_demo: str, driver: webdriver.Chrome
) -> None:
    driver.set_window_size(1400, 1000)
    driver.get(served_demo + "/instances/pay-1")  # ends in closed, at the foot of the chart
    waiting(driver).until(lambda d: d.execute_script(_INSIDE, "g.node.after"))
    count = int(driver.find_element("css selector", "#step").get_attribute("data-steps") or 0)
    for number in range(count, -1, -1):
        driver.get(f"{served_demo}/instances/pay-1?step={number}")
        waiting(driver).until(lambda d: d.execute_script(_INSIDE, "g.node.after"))


def test_the_chart_page_shows_its_occupied_states(
    served_demo: str, driver: webdriver.Chrome
) -> None:
    driver.set_window_size(1400, 1000)
    driver.get(served_demo + "/charts/payment")
    waiting(driver).until(lambda d: d.execute_script(_INSIDE, "g.node.occupied"))
