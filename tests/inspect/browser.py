"""The inspector as a browser sees it: the real app served by uvicorn on a free loopback
port (`served`), headless Chromium driven by Selenium through Debian's chromium-driver
(`chromium`), and a structural check of a screenshot (`checked_screenshot`).

    with served(Inspector(url)) as base, chromium() as driver:
        driver.get(base + "/")
        checked_screenshot(driver, tmp_path / "list.png")

Both are context managers (the fixtures in `conftest.py` wrap them). No sleeps: wait for
what the page shows with `waiting(driver).until(...)`, which reads again an element a
live redraw replaced while it was being read.
"""

from __future__ import annotations

import socket
import struct
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import uvicorn
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

from statekit.inspect.app import create_app
from statekit.inspect.context import Inspector

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WINDOW = (1280, 900)
WAIT_SECONDS = 20.0
"""How long a test waits for what a page should show (live updates poll every 2 s)."""


def waiting(driver: webdriver.Chrome) -> WebDriverWait[webdriver.Chrome]:
    """A wait for what the page shows. A live redraw replaces its regions in place, so an
    element found just before a redraw is stale when read: the condition is asked again."""
    return WebDriverWait(driver, WAIT_SECONDS, ignored_exceptions=(StaleElementReferenceException,))


@contextmanager
def served(inspector: Inspector) -> Iterator[str]:
    """The inspector's app served on a free loopback port in a thread; yields its base
    address (`http://127.0.0.1:PORT`), stops the server on exit."""
    listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listening.bind(("127.0.0.1", 0))
    port = listening.getsockname()[1]
    config = uvicorn.Config(create_app(inspector), log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listening]}, daemon=True)
    thread.start()
    started = threading.Event()
    while not server.started and thread.is_alive():
        started.wait(0.01)  # uvicorn offers no event for "listening"; this polls its flag
    if not server.started:
        raise RuntimeError("the inspector's server did not start")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        listening.close()


@contextmanager
def chromium() -> Iterator[webdriver.Chrome]:
    """Headless Chromium (Debian's, with its chromedriver) at `WINDOW` size."""
    options = Options()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--window-size={WINDOW[0]},{WINDOW[1]}",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def checked_screenshot(driver: webdriver.Chrome, path: Path) -> tuple[int, int]:
    """Save a screenshot to `path` and check it is a real picture of a page: a PNG of the
    window's size whose pixels are not all one colour. Returns (width, height)."""
    assert driver.save_screenshot(str(path)), f"no screenshot written to {path}"
    width, height, distinct = png_summary(path.read_bytes())
    assert width >= WINDOW[0] // 2 and height >= WINDOW[1] // 3, (width, height)
    assert distinct >= 3, f"{path}: a blank page ({distinct} colour(s))"
    return width, height


def png_summary(data: bytes) -> tuple[int, int, int]:
    """(width, height, number of distinct pixel values, counted up to 64) of an 8-bit RGB or
    RGBA PNG, read with zlib alone (no imaging library among the dependencies)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    position, chunks, header = 8, [], b""
    while position < len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        kind = data[position + 4 : position + 8]
        content = data[position + 8 : position + 8 + length]
        if kind == b"IHDR":
            header = content
        elif kind == b"IDAT":
            chunks.append(content)
        position += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and colour in (2, 6), f"unexpected PNG format: depth {depth}, type {colour}"
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    previous = bytearray(stride)
    distinct: set[bytes] = set()
    for row in range(height):
        start = row * (stride + 1)
        kind = raw[start]
        line = bytearray(raw[start + 1 : start + 1 + stride])
        _unfilter(kind, line, previous, channels)
        if len(distinct) < 64:
            distinct.update(bytes(line[i : i + channels]) for i in range(0, stride, channels * 7))
        previous = line
    return width, height, len(distinct)


def _unfilter(kind: int, line: bytearray, previous: bytearray, step: int) -> None:
    """Undo a PNG scanline filter in place (PNG spec, section 9)."""
    for i in range(len(line)):
        left = line[i - step] if i >= step else 0
        up = previous[i]
        corner = previous[i - step] if i >= step else 0
        if kind == 1:
            line[i] = (line[i] + left) & 0xFF
        elif kind == 2:
            line[i] = (line[i] + up) & 0xFF
        elif kind == 3:
            line[i] = (line[i] + (left + up) // 2) & 0xFF
        elif kind == 4:
            guess = left + up - corner
            pa, pb, pc = abs(guess - left), abs(guess - up), abs(guess - corner)
            nearest = left if pa <= pb and pa <= pc else up if pb <= pc else corner
            line[i] = (line[i] + nearest) & 0xFF
