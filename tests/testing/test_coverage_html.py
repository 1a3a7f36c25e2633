"""The HTML coverage report, opened in headless Chromium and driven there: the index's
rows, totals and colour bands, its sorting and filters, each chart's page with its
diagram (untested transitions and states of unexercised pairs marked, readable without
colour) and its missing items grouped, collapsible and filtered; the keys that lead
from page to page.

The report's pages carry no test hook: a test page written next to them (never part of
the report) loads a page in a frame, clicks and types there the way a reader does, and
writes what the frame's DOM then shows into its own DOM, which `--dump-dom` prints."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
from chart_helpers import dot_program
from coverage_charts import DOOR

# In-process inner runs share the outer statekit modules (see test_coverage_plugin.py).
import statekit.api
import statekit.testing.coverage.report
from statekit import __version__

assert statekit.api and statekit.testing.coverage.report
__all__ = ["dot_program"]

FULL = """
statechart: full
events: {GO: {}}
initial: a
states:
  a:
    on: {GO: b}
  b:
    final: true
"""

NEVER = """
statechart: never
events: {GO: {}}
initial: a
states:
  a:
    on: {GO: b}
  b: {}
"""

SUITE = """
import statekit

def test_door():
    door = statekit.load("charts/door.yaml")
    opened = door.send(door.start(), "OPEN")
    assert door.send(opened.state, "CLOSE").applied

def test_full():
    full = statekit.load("charts/full.yaml")
    done = full.send(full.start(), "GO").state
    assert full.send(done, "GO").reason == "TERMINAL_STATE"
    assert full.send(done, "NOPE").reason == "UNKNOWN_EVENT"
    assert full.send(done, "GO", {"x": 1}).reason == "INVALID_PAYLOAD"
"""

COMMAND = ["--statekit-cov=charts", "--statekit-cov-report=html:cov"]


@pytest.fixture
def chromium() -> str:
    """Headless Chromium; fails (never skips) without it: `make test` installs it."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail("Chromium is not installed: run `make test` (it installs it)")
    return found


@pytest.fixture
def report(pytester: pytest.Pytester, dot_program: str) -> Path:
    assert dot_program
    pytester.makefile(".yaml", **{"charts/door": textwrap.dedent(DOOR)})
    pytester.makefile(".yaml", **{"charts/full": textwrap.dedent(FULL)})
    pytester.makefile(".yaml", **{"charts/never": textwrap.dedent(NEVER)})
    pytester.makepyfile(test_plugin_suite=SUITE)
    result = pytester.runpytest(*COMMAND)
    assert result.ret == 0, result.stdout.str()
    return pytester.path / "cov"


def _run_test_page(chromium: str, folder: Path, text: str, *flags: str) -> Any:
    """Write the test page `text` into `folder` (beside the report's pages, which its
    frame loads), open it in headless Chromium, and return the JSON value its `out`
    element holds once Chromium is done; the test page is removed again."""
    harness = folder / "_driven_by_the_test.html"
    harness.write_text(text, encoding="utf-8")
    try:
        dom = subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--allow-file-access-from-files",  # the test page reads its frame's DOM
                *flags,
                "--dump-dom",
                harness.as_uri(),
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    finally:
        harness.unlink()
    found = re.search(r'<pre id="out">(.*?)</pre>', dom, re.S)
    assert found and found.group(1), dom[:2000]
    return json.loads(html.unescape(found.group(1)))


def drive(chromium: str, page: Path, steps: str) -> Any:
    """Open `page` in a frame of a test page beside it, run `steps` (the body of a
    JavaScript function of the frame's `doc` and `win` returning a JSON value) once the
    frame has loaded, and return that value."""
    text = (
        "<!DOCTYPE html><html><body><pre id='out'></pre>"
        f"<iframe id='frame' src='{page.name}' style='width:1280px;height:900px'></iframe>"
        "<script>document.getElementById('frame').addEventListener('load', (e) => {"
        "const doc = e.target.contentDocument, win = e.target.contentWindow;"
        "let value; try { value = (function (doc, win) {" + steps + "})(doc, win); }"
        "catch (error) { value = {error: String(error), stack: error.stack}; }"
        "document.getElementById('out').textContent = JSON.stringify(value);"
        "});</script></body></html>"
    )
    value = _run_test_page(chromium, page.parent, text, "--window-size=1400,1000")
    assert not (isinstance(value, dict) and "error" in value), value
    return value


# What a reader sees of the index's table: per body row the cells' text and colour
# band, whether the row is drawn, and the totals row; the header's sort marks.
INDEX_VIEW = """
  const table = doc.querySelector("table.charts");
  const shown = (el) => el.checkVisibility();
  const cell = (td) => ({text: td.textContent.replace(/\\s+/g, " ").trim(),
                         band: td.className, background: win.getComputedStyle(td).background});
  const view = () => ({
    rows: [...table.tBodies[0].rows].filter(shown).map((row) => [...row.cells].map(cell)),
    total: [...table.tFoot.rows[0].cells].map(cell),
    sort: [...table.tHead.rows[0].cells].map((th) => th.getAttribute("aria-sort")),
    noRows: shown(doc.getElementById("no-rows")),
    widths: [...table.tHead.rows[0].cells].map(
      (th) => Math.round(th.getBoundingClientRect().width)),
  });
  const click = (label) => [...table.tHead.querySelectorAll("button")]
    .find((b) => b.textContent === label).click();
  const type = (text) => {
    const field = doc.getElementById("filter");
    field.value = text;
    field.dispatchEvent(new win.Event("input"));
  };
  const views = {initial: view()};
  views.links = [...table.querySelectorAll("tbody a")].map((a) => a.getAttribute("href"));
  click("transition"); views.transitionUp = view();
  click("transition"); views.transitionDown = view();
  click("chart"); views.chartUp = view();
  click("chart"); views.chartDown = view();
  click("missing"); views.missingDown = view();
  type("DOOR"); views.filtered = view();
  type("charts/ never"); views.twoWords = view();
  type("zzz"); views.nothing = view();
  type("");
  const hide = doc.getElementById("hide-covered");
  hide.checked = true; hide.dispatchEvent(new win.Event("change"));
  views.hideCovered = view();
  views.filterShown = shown(doc.getElementById("filter"));
  views.stamp = doc.querySelector("header .stamp").textContent;
  const size = (el) => parseFloat(win.getComputedStyle(el).fontSize);
  views.keySizes = [...doc.querySelectorAll("kbd")].map((kbd) => size(kbd) / size(doc.body));
  return views;
"""


def _texts(rows: list[list[dict[str, str]]]) -> list[list[str]]:
    return [[c["text"] for c in row] for row in rows]


def _names(view: dict[str, Any]) -> list[str]:
    return [row[0]["text"] for row in view["rows"]]


def test_the_index_has_a_row_per_chart_and_totals(chromium: str, report: Path) -> None:
    views = drive(chromium, report / "index.html", INDEX_VIEW)
    initial = views["initial"]
    assert _texts(initial["rows"]) == [
        ["door", "charts/door.yaml", "2/3 66.7%", "2/9 22.2%", "0/5 0.0%", "0/3 0.0%", "16"],
        ["full", "charts/full.yaml", "1/1 100.0%", "2/2 100.0%", "3/3 100.0%", "0/0 n/a", "0"],
        [
            "never (never loaded)",
            "charts/never.yaml",
            "0/1 0.0%",
            "0/2 0.0%",
            "0/3 0.0%",
            "0/0 n/a",
            "6",
        ],
    ]
    total = [c["text"] for c in initial["total"]]
    assert total == ["Total (3 charts)", "3/5 60.0%", "4/13 30.8%", "3/11 27.3%", "0/3 0.0%", "22"]
    assert initial["sort"] == ["ascending", "none", "none", "none", "none", "none", "none"]
    assert not initial["noRows"] and views["filterShown"]
    assert views["links"] == ["door.html", "full.html", "never.html"]
    stamp = views["stamp"]
    assert stamp.startswith(f"statekit {__version__}, created at 20")
    assert "UTC by pytest " + " ".join(COMMAND) in stamp  # (pytester adds --basetemp)


def test_cells_are_coloured_by_band(chromium: str, report: Path) -> None:
    initial = drive(chromium, report / "index.html", INDEX_VIEW)["initial"]
    door, full, never = initial["rows"]
    bands = {cell["text"]: cell["band"] for row in initial["rows"] for cell in row[2:6]}
    assert bands["2/3 66.7%"] == "band-fair"  # 60-something and 0% look different
    assert bands["0/1 0.0%"] == "band-none"
    assert bands["2/9 22.2%"] == "band-low" and bands["0/5 0.0%"] == "band-none"
    assert bands["1/1 100.0%"] == "band-full" and bands["0/0 n/a"] == "band-empty"
    drawn = {cell["band"]: cell["background"] for row in initial["rows"] for cell in row[2:6]}
    assert len(set(drawn.values())) == len(drawn) == 5  # each band is drawn its own way
    assert "gradient" in drawn["band-none"]  # 0% is hatched: it reads without colour too
    assert initial["total"][1]["band"] == "band-fair"  # 3/5 = 60%
    assert door[2]["background"] != never[2]["background"]
    assert full[6]["text"] == "0"


def test_sorting_by_a_column_toggles_and_keeps_the_totals_last(chromium: str, report: Path) -> None:
    views = drive(chromium, report / "index.html", INDEX_VIEW)
    # worst first on the first click, then best first; ties keep the name order
    assert _names(views["transitionUp"]) == ["never (never loaded)", "door", "full"]
    assert views["transitionUp"]["sort"][2] == "ascending"
    assert _names(views["transitionDown"]) == ["full", "door", "never (never loaded)"]
    assert views["transitionDown"]["sort"][2] == "descending"
    assert views["transitionDown"]["sort"].count("none") == 6
    assert _names(views["chartUp"]) == ["door", "full", "never (never loaded)"]
    assert _names(views["chartDown"]) == ["never (never loaded)", "full", "door"]
    assert _names(views["missingDown"]) == ["door", "never (never loaded)", "full"]
    for view in views.values():
        if isinstance(view, dict) and "total" in view:
            assert view["total"][0]["text"].startswith("Total")


def test_the_filter_hides_rows_and_the_totals_follow(chromium: str, report: Path) -> None:
    views = drive(chromium, report / "index.html", INDEX_VIEW)
    filtered = views["filtered"]
    assert _names(filtered) == ["door"]  # case does not matter
    assert [c["text"] for c in filtered["total"]][1:] == [
        "2/3 66.7%",
        "2/9 22.2%",
        "0/5 0.0%",
        "0/3 0.0%",
        "16",
    ]
    assert filtered["total"][1]["band"] == "band-fair"
    assert filtered["total"][0]["text"] == "Total (1 of 3 charts)"
    assert _names(views["twoWords"]) == ["never (never loaded)"]  # every word must match
    nothing = views["nothing"]
    assert nothing["rows"] == [] and nothing["noRows"]
    assert [c["text"] for c in nothing["total"]][1] == "0/0 n/a"
    assert _names(views["hideCovered"]) == ["door", "never (never loaded)"]
    assert not views["hideCovered"]["noRows"]
    # the columns keep their widths whatever the filter shows
    for name in ("filtered", "twoWords", "nothing", "hideCovered", "chartDown"):
        assert views[name]["widths"] == views["initial"]["widths"], name


def test_the_key_hints_are_as_large_as_the_text_around_them(chromium: str, report: Path) -> None:
    sizes = drive(chromium, report / "index.html", INDEX_VIEW)["keySizes"]
    assert len(sizes) == 3 and all(size >= 0.95 for size in sizes), sizes


# A chart's page: its diagram as laid out, the groups of missing items, then the same
# after filtering and after "collapse all".
CHART_VIEW = """
  const shown = (el) => el.checkVisibility();
  const svg = doc.querySelector(".diagram svg");
  const box = svg ? svg.getBBox() : {width: 0, height: 0};
  const edge = doc.querySelector("g.edge.untested path");
  const node = doc.querySelector("g.node.unexercised path, g.node.unexercised polygon");
  const groups = () => [...doc.querySelectorAll("details.kind")].filter(shown).map((kind) => ({
    kind: kind.id,
    open: kind.open,
    summary: kind.querySelector("summary").textContent.replace(/\\s+/g, " ").trim(),
    groups: [...kind.querySelectorAll("details.group")].filter(shown).map(
      (g) => g.querySelector("summary").textContent.trim()),
    items: [...kind.querySelectorAll("ul.missing > li")].filter(shown).map(
      (li) => li.textContent.replace(/\\s+/g, " ").trim()),
  }));
  const type = (text) => {
    const field = doc.getElementById("filter-missing");
    field.value = text;
    field.dispatchEvent(new win.Event("input"));
  };
  const views = {
    width: Math.round(box.width), height: Math.round(box.height),
    untested: doc.querySelectorAll("g.edge.untested").length,
    unexercised: doc.querySelectorAll("g.node.unexercised").length,
    untestedStroke: edge ? win.getComputedStyle(edge).stroke : null,
    unexercisedDash: node ? win.getComputedStyle(node).strokeDasharray : null,
    nav: [...doc.querySelectorAll("nav.pages a")].map((a) => a.getAttribute("href")),
    cells: [...doc.querySelectorAll("table.numbers td")].map((td) => td.className),
    initial: groups(),
  };
  type("locked"); views.locked = groups();
  type("LOCK open"); views.lockOpen = groups();
  type("");
  doc.getElementById("collapse-all").click();
  views.collapsed = groups();
  doc.getElementById("expand-all").click();
  views.expanded = groups();
  const fit = () => win.getComputedStyle(svg).maxWidth;
  views.fitted = fit();
  doc.getElementById("actual-size").click();
  views.actualSize = fit();
  return views;
"""


def test_a_chart_page_draws_the_diagram_with_the_untested_marked(
    chromium: str, report: Path
) -> None:
    door = drive(chromium, report / "door.html", CHART_VIEW)
    assert door["width"] > 100 and door["height"] > 100  # the diagram was laid out
    # LOCK from closed: one edge, its label attached to it, marked
    assert door["untested"] == 1
    assert door["untestedStroke"] == "rgb(198, 40, 40)"
    # every door configuration has an event never sent there
    assert door["unexercised"] == 3
    assert door["unexercisedDash"] not in (None, "none")
    assert door["nav"] == ["index.html", "full.html"]
    assert door["cells"] == ["band-fair", "band-low", "band-none", "band-none"]
    assert door["fitted"] == "100%" and door["actualSize"] == "none"  # the size toggle
    full = drive(chromium, report / "full.html", CHART_VIEW)
    assert full["untested"] == 0 and full["unexercised"] == 0
    assert full["nav"] == ["index.html", "door.html", "never.html"]
    assert [k["summary"].split(" (")[0] for k in full["initial"]] == [
        f"{metric}: ✓ nothing missing"
        for metric in ("transition", "classification", "rejection", "race")
    ]


PARCEL = """
statechart: parcel
events: {WEIGH: {}, SHIP: {}, SCAN: {location: {type: string}}, DELIVERED: {}}
context:
  last_location: {type: string, nullable: true, default: null}
  weighed: {type: boolean, default: false}
initial: packed
states:
  packed:
    on:
      WEIGH: {do: [{assign: {weighed: true}}]}
      SHIP: shipped
  shipped:
    on:
      SCAN: {do: [{assign: {last_location: event.location}}]}
      DELIVERED: delivered
  delivered:
    final: true
"""

PARCEL_SUITE = """
import statekit

def test_parcel():
    parcel = statekit.load("charts/parcel.yaml")
    weighed = parcel.send(parcel.start(), "WEIGH").state
    assert parcel.send(weighed, "SHIP").applied
"""

# The texts of the diagram (with their colour), the outlines of the states of
# unexercised pairs and the lines under those states' names, and the legends.
MARKS_VIEW = """
  const svg = doc.querySelector(".diagram svg");
  const texts = [...svg.querySelectorAll("text")].map((t) => ({
    text: t.textContent, fill: win.getComputedStyle(t).fill}));
  const strokes = (selector) => [...svg.querySelectorAll(selector)].map(
    (el) => win.getComputedStyle(el).stroke);
  return {
    texts,
    outlines: strokes("g.node.unexercised > title + *"),
    rules: strokes("g.node.unexercised > text ~ polygon"),
    missing: [...doc.querySelectorAll("li.missing-transition")].map((li) => li.textContent),
    legends: [...doc.querySelectorAll(".legend, #path-legend")]
      .filter((el) => el.checkVisibility()).map((el) => el.textContent),
  };
"""


def test_an_untested_targetless_transition_is_marked_inside_its_state(
    pytester: pytest.Pytester, dot_program: str, chromium: str
) -> None:
    assert dot_program
    pytester.makefile(".yaml", **{"charts/parcel": textwrap.dedent(PARCEL)})
    pytester.makepyfile(test_plugin_suite=PARCEL_SUITE)
    assert pytester.runpytest(*COMMAND).ret == 0
    view = drive(chromium, pytester.path / "cov" / "parcel.html", MARKS_VIEW)
    missing = view["missing"]
    assert any("--SCAN--> (targetless)" in item for item in missing)
    fills = {t["text"]: t["fill"] for t in view["texts"]}
    red = "rgb(198, 40, 40)"
    # SCAN (never sent) is red with a mark of its own; WEIGH (fired) is drawn as usual
    assert fills["SCAN / assign 1"] == red and fills["WEIGH / assign 1"] != red
    marks = [t for t in view["texts"] if t["text"] == "✗ untested"]
    assert len(marks) == len(missing) == 2  # SCAN and DELIVERED
    assert all(m["fill"] == red for m in marks)
    # the orange dotted outline stays on the outline, not on the rule above SCAN
    orange = "rgb(230, 81, 0)"
    assert view["outlines"] and all(s == orange for s in view["outlines"])
    assert view["rules"] and all(s != orange for s in view["rules"])
    assert any("untested targetless transition" in text for text in view["legends"])
    # what `?` after an event of a path means, and what is left to the test
    assert any("EVENT ?: no payload" in text and "test's job" in text for text in view["legends"])


def test_missing_items_are_grouped_collapsible_and_filtered(chromium: str, report: Path) -> None:
    door = drive(chromium, report / "door.html", CHART_VIEW)
    initial = {k["kind"]: k for k in door["initial"]}
    assert list(initial) == [
        f"missing-{m}" for m in ("transition", "classification", "rejection", "race")
    ]
    assert all(k["open"] for k in initial.values())
    assert initial["missing-transition"]["items"] == [
        "✗ 'closed' --LOCK--> 'locked' (line 6) — path: LOCK"
    ]
    assert initial["missing-classification"]["groups"] == [
        "in {closed}: 2 events",
        "in {open}: 2 events",
        "in {locked}: 3 events",
    ]
    assert len(initial["missing-classification"]["items"]) == 7
    assert "✗ LOCKED — path: LOCK → OPEN" in initial["missing-rejection"]["items"]
    assert initial["missing-race"]["groups"] == ["in {closed}: 2 pairs", "in {open}: 1 pair"]
    assert (
        "✗ OPEN / LOCK, never tried: OPEN then LOCK; LOCK then OPEN — from the initial state"
        in initial["missing-race"]["items"]
    )
    assert initial["missing-transition"]["summary"] == (
        "transition: 1 missing (2/3 covered; declared transitions never fired)"
    )

    # "locked": items that name it, or whose group does; the other groups and kinds go
    locked = {k["kind"]: k for k in door["locked"]}
    assert set(locked) == {"missing-transition", "missing-classification", "missing-rejection"}
    assert locked["missing-classification"]["groups"] == ["in {locked}: 3 events (3 shown)"]
    assert locked["missing-transition"]["summary"].endswith("(1 shown)")
    assert all("lock" in item.lower() for k in locked.values() for item in k["items"])
    # every word must match
    lock_open = {k["kind"]: k for k in door["lockOpen"]}
    assert lock_open["missing-rejection"]["items"] == [
        "✗ DOOR_OPEN — path: OPEN → LOCK",
        "✗ LOCKED — path: LOCK → OPEN",
    ]

    assert all(not k["open"] and k["items"] == [] for k in door["collapsed"])
    assert door["expanded"] == door["initial"]


def test_the_report_ships_no_test_hook_and_loads_nothing_from_the_network(report: Path) -> None:
    files = sorted(p.name for p in report.iterdir())
    assert files == ["door.html", "full.html", "index.html", "never.html", "report.js", "style.css"]
    for page in report.glob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert "data-rendered" not in text
        scripts = re.findall(r"<script\b[^>]*>(.*?)</script>", text, re.S)
        assert scripts == [""]  # only the report's own script file, nothing inline
        assert not re.search(r"\son[a-z]+=", text)  # no inline event handler either
        assert re.findall(r'(?:src|href)="([^"#]*)"', text) and all(
            not re.match(r"[a-z]+:", ref) for ref in re.findall(r'(?:src|href)="([^"#]*)"', text)
        )


def test_marks_are_readable_without_colour(report: Path) -> None:
    page = (report / "door.html").read_text(encoding="utf-8")
    untested = re.findall(r'<g id="edge\d+" class="edge untested">.*?</g>', page, re.S)
    assert untested and all("stroke-dasharray" in g for g in untested)
    svg = page[page.index("<svg") : page.index("</svg>")]
    assert svg.count("✗ untested") == 1  # the edge's label says it
    assert "legend" in page and "untested transition" in page


def test_every_chart_gets_its_own_page_whatever_its_name_or_file(
    pytester: pytest.Pytester, dot_program: str
) -> None:
    assert dot_program
    # two charts named `door` (keyed `door (FILE)`), one named `index`, and a file name
    # with characters that mean something in HTML
    pytester.makefile(".yaml", **{"a/door": textwrap.dedent(DOOR)})
    pytester.makefile(".yaml", **{"b/door": textwrap.dedent(DOOR).replace("LOCKED", "SHUT")})
    pytester.makefile(".yaml", **{"c/index": textwrap.dedent(FULL).replace("full", "index")})
    pytester.makefile(".yaml", **{'c/<b>&"x': textwrap.dedent(NEVER)})
    result = pytester.runpytest(
        "--statekit-cov=a", "--statekit-cov=b", "--statekit-cov=c", "--statekit-cov-report=html:cov"
    )
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED, result.stdout.str()
    index = (pytester.path / "cov" / "index.html").read_text(encoding="utf-8")
    links = re.findall(r'<a href="([^"]+)">([^<]*)</a>', index)
    assert links == [
        ("door.html", "door"),
        ("door_b_door_yaml.html", "door (b/door.yaml)"),
        ("index-2.html", "index"),
        ("never.html", "never"),
    ]
    for href, _ in links:
        assert (pytester.path / "cov" / href).is_file()
    assert "<b>" not in index and "c/&lt;b&gt;&amp;&quot;x.yaml" in index
    never = (pytester.path / "cov" / "never.html").read_text(encoding="utf-8")
    assert "<b>" not in never and "c/&lt;b&gt;&amp;&quot;x.yaml" in never


def test_with_source_date_epoch_the_same_run_writes_the_same_report(
    pytester: pytest.Pytester, dot_program: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert dot_program
    pytester.makefile(".yaml", **{"charts/door": textwrap.dedent(DOOR)})
    pytester.makepyfile(test_plugin_suite=SUITE.split("def test_full")[0])
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    written = []
    for _ in range(2):
        result = pytester.runpytest("--statekit-cov=charts", "--statekit-cov-report=html:cov")
        assert result.ret == 0, result.stdout.str()
        written.append({p.name: p.read_bytes() for p in (pytester.path / "cov").iterdir()})
    assert written[0] == written[1]
    index = written[0]["index.html"].decode()
    assert '<time datetime="2026-01-01T00:00:00+00:00">2026-01-01 00:00:00 UTC</time>' in index


def visit(chromium: str, page: Path, keys: list[str], setup: str = "") -> list[str]:
    """Open `page` in a frame of a test page, run `setup` (JavaScript over `doc` and `win`)
    on it, and press one of `keys` on each page loaded in turn; return the pages'
    file names in the order they were shown."""
    text = (
        "<!DOCTYPE html><html><body><pre id='out'></pre>"
        f"<iframe id='frame' src='{page.name}'></iframe><script>"
        f"const keys = {json.dumps(keys)}, seen = [];"
        "document.getElementById('frame').addEventListener('load', (e) => {"
        "const doc = e.target.contentDocument, win = e.target.contentWindow;"
        "seen.push(doc.location.pathname.split('/').pop());"
        "document.getElementById('out').textContent = JSON.stringify(seen);"
        f"if (seen.length === 1) {{ {setup} }}"
        "const key = keys[seen.length - 1];"
        "if (key) win.setTimeout(() => doc.body.dispatchEvent("
        "new win.KeyboardEvent('keydown', {key, bubbles: true})), 0);"
        "});</script></body></html>"
    )
    # the frame's navigations run in virtual time: Chromium waits for them, no sleep
    seen: list[str] = _run_test_page(chromium, page.parent, text, "--virtual-time-budget=10000")
    return seen


def test_keys_lead_from_chart_to_chart_as_in_coverage_py(chromium: str, report: Path) -> None:
    # ] next, [ previous, u the index; on the index ] the first chart shown, [ the last
    assert visit(chromium, report / "door.html", ["]", "]", "[", "u", "]"]) == [
        "door.html",
        "full.html",
        "never.html",
        "full.html",
        "index.html",
        "door.html",
    ]
    typed = (
        "const field = doc.getElementById('filter'); field.value = 'full';"
        "field.dispatchEvent(new win.Event('input'));"
    )
    assert visit(chromium, report / "index.html", ["["], typed) == ["index.html", "full.html"]
    assert visit(chromium, report / "index.html", ["["]) == ["index.html", "never.html"]
