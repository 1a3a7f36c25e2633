"""The two files written beside the HTML coverage report's pages: `style.css` and
`report.js` (sorting, filtering, expanding; no library, no network: the report opens
from `file://`).

Without the script every page still reads whole: the tables come sorted by chart
name, every group of missing items is a `<details>` element (the browser collapses
it), and the filter fields stay hidden. The colour of a percentage cell is its band
(`html_frame.BANDS`): the percentage is always written in the cell too.
"""

from __future__ import annotations

STYLE_FILE = "style.css"
SCRIPT_FILE = "report.js"

STYLE = """\
:root { --ink: #1b1b1b; --muted: #555; --rule: #c8c8c8; --link: #0b57d0; }
body { font-family: system-ui, sans-serif; margin: 0; color: var(--ink); background: #fff;
  line-height: 1.4; }
header, main, footer { padding: 0.8em 2em; }
header { background: #f3f4f6; border-bottom: 1px solid var(--rule); }
header h1 { margin: 0.2em 0; font-size: 1.5em; }
footer { color: var(--muted); border-top: 1px solid var(--rule); margin-top: 2em; }
a { color: var(--link); }
nav.pages a { margin-right: 1.2em; }
.stamp { color: var(--muted); font-size: 0.9em; margin: 0.3em 0; }
code { background: #f0f0f0; padding: 0 0.2em; border-radius: 2px; }
kbd { border: 1px solid #999; border-bottom-width: 2px; border-radius: 3px; padding: 0 0.4em;
  background: #fafafa; color: var(--ink); font-size: 1em; font-weight: bold;
  font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
.tools { display: flex; gap: 1.5em; align-items: center; margin: 0.6em 0; flex-wrap: wrap; }
.tools input[type=search] { font: inherit; padding: 0.25em 0.5em; min-width: 18em;
  border: 1px solid #888; border-radius: 3px; }
.tools button { font: inherit; padding: 0.2em 0.7em; }
table.coverage { border-collapse: collapse; margin: 0.5em 0 1em; }
table.coverage td, table.coverage th { border: 1px solid var(--rule); padding: 0.3em 0.7em;
  text-align: right; vertical-align: top; white-space: nowrap; }
table.coverage .name { text-align: left; }
table.coverage thead th { background: #e8eaed; }
table.coverage th button { font: inherit; font-weight: bold; background: none; border: 0;
  padding: 0; cursor: pointer; color: inherit; }
table.coverage th[aria-sort=ascending] button::after { content: " \\25B2"; }
table.coverage th[aria-sort=descending] button::after { content: " \\25BC"; }
table.coverage th[aria-sort=none] button::after { content: " \\21C5"; color: #888; }
table.coverage tfoot td { font-weight: bold; border-top: 2px solid var(--ink); }
.band-full { background: #a5d6a7; } .band-high { background: #c5e1a5; }
.band-good { background: #e6ee9c; } .band-fair { background: #ffe082; }
.band-low { background: #ffab91; }
.band-none { background: repeating-linear-gradient(135deg, #f4a9a9 0 6px, #ea8f8f 6px 12px); }
.band-empty { background: #eeeeee; }
.scale span { display: inline-block; padding: 0 0.5em; margin-right: 0.2em;
  border: 1px solid var(--rule); font-size: 0.85em; }
.count { color: var(--muted); } td .count { color: inherit; }
nav.contents a { margin: 0 0.4em; }
#no-rows, .no-items { color: var(--muted); font-style: italic; }
.note { background: #fff8e1; border-left: 4px solid #f9a825; padding: 0.3em 0.8em; }
details.kind { border: 1px solid var(--rule); border-radius: 4px; margin: 0.6em 0;
  padding: 0.3em 0.8em; }
details.kind > summary { font-weight: bold; cursor: pointer; }
details.group { margin: 0.3em 0 0.3em 1em; }
details.group > summary { cursor: pointer; }
details summary .shown { color: var(--muted); font-weight: normal; }
ul.missing { margin: 0.3em 0; padding-left: 1.2em; }
ul.missing li { margin: 0.25em 0; }
[hidden] { display: none !important; }
.diagram { overflow: auto; border: 1px solid var(--rule); padding: 0.5em; }
.diagram svg { max-width: 100%; height: auto; }
.diagram.actual { max-height: 80vh; } .diagram.actual svg { max-width: none; }
.wide { overflow-x: auto; }
.legend { line-height: 2; }
.legend span { display: inline-block; margin-right: 2em; line-height: 1.4; }
.swatch-untested { color: #c62828; font-weight: bold; border-bottom: 3px dashed #c62828; }
.swatch-untested-inside { color: #c62828; }
.swatch-tested { border-bottom: 2px solid #000; }
.swatch-unexercised { border: 3px dotted #e65100; padding: 0 0.3em; }
g.node.unexercised > title + :is(path, polygon, ellipse),
g.node.unexercised > title + ellipse + ellipse {
  stroke: #e65100; stroke-width: 3; stroke-dasharray: 2 3; }
"""

SCRIPT = """\
"use strict";
// The statekit coverage report: sortable tables, filters, expand / collapse.
(() => {
  const words = (text) => text.toLowerCase().split(/\\s+/).filter(Boolean);
  const matches = (text, terms) => terms.every((term) => text.includes(term));
  const bands = JSON.parse(document.body.dataset.bands || "[]");

  function bandOf(covered, total) {
    if (total === 0) return "empty";
    const percent = (100 * covered) / total;
    for (const [floor, name] of bands) if (percent >= floor) return name;
    return "none";
  }

  function sortKey(row, column) {
    const cell = row.cells[column];
    const value = cell.dataset.sort;
    return value === undefined ? cell.textContent.trim().toLowerCase() : Number(value);
  }

  function sortTable(table, column, order) {
    const body = table.tBodies[0];
    const rows = [...body.rows];
    const sign = order === "ascending" ? 1 : -1;
    rows.sort((a, b) => {
      const x = sortKey(a, column), y = sortKey(b, column);
      if (x < y) return -sign;
      if (x > y) return sign;
      return Number(a.dataset.order) - Number(b.dataset.order);
    });
    body.append(...rows);
    [...table.tHead.rows[0].cells].forEach((th, i) => {
      th.setAttribute("aria-sort", i === column ? order : "none");
    });
  }

  function updateTotals(table) {
    const foot = table.tFoot && table.tFoot.rows[0];
    if (!foot) return;
    const shown = [...table.tBodies[0].rows].filter((row) => !row.hidden);
    for (const cell of foot.querySelectorAll("td[data-metric]")) {
      const metric = cell.dataset.metric;
      let covered = 0, total = 0;
      for (const row of shown) {
        const own = row.querySelector(`td[data-metric="${metric}"]`);
        covered += Number(own.dataset.covered);
        total += Number(own.dataset.total);
      }
      const percent = total === 0 ? 100 : (100 * covered) / total;
      cell.dataset.covered = covered;
      cell.dataset.total = total;
      cell.className = `band-${bandOf(covered, total)}`;
      cell.querySelector(".count").textContent = `${covered}/${total}`;
      cell.querySelector(".percent").textContent = total === 0 ? "n/a" : `${percent.toFixed(1)}%`;
      cell.title = total === 0 ? "nothing to cover" : `${total - covered} missing`;
    }
    const label = foot.querySelector("td[data-charts]");
    const all = Number(label.dataset.charts);
    const charts = (n) => `${n} chart${n === 1 ? "" : "s"}`;
    label.textContent = shown.length === all
      ? `Total (${charts(all)})` : `Total (${shown.length} of ${charts(all)})`;
    const missing = foot.querySelector("td[data-missing]");
    if (missing) {
      missing.textContent = shown.reduce((n, row) => n + Number(row.dataset.missing), 0);
    }
  }

  for (const table of document.querySelectorAll("table.sortable")) {
    [...table.tBodies[0].rows].forEach((row, i) => { row.dataset.order = i; });
    [...table.tHead.rows[0].cells].forEach((th, column) => {
      const button = th.querySelector("button");
      if (!button) return;
      button.addEventListener("click", () => {
        const now = th.getAttribute("aria-sort");
        const first = th.dataset.firstOrder || "ascending";
        const next = now === "none" ? first : now === "ascending" ? "descending" : "ascending";
        sortTable(table, column, next);
      });
    });
  }

  const index = document.querySelector("table.charts");
  const filter = document.getElementById("filter");
  const hideCovered = document.getElementById("hide-covered");
  function filterCharts() {
    const terms = words(filter.value);
    let shown = 0;
    for (const row of index.tBodies[0].rows) {
      const hide = !matches(row.dataset.search, terms)
        || (hideCovered.checked && row.dataset.missing === "0");
      row.hidden = hide;
      if (!hide) shown += 1;
    }
    document.getElementById("no-rows").hidden = shown !== 0;
    updateTotals(index);
  }
  if (index && filter && hideCovered) {
    // The columns keep the widths every row gives them: filtering does not move them.
    const widths = [...index.tHead.rows[0].cells].map((th) => getComputedStyle(th).width);
    [...index.tHead.rows[0].cells].forEach((th, column) => (th.style.width = widths[column]));
    index.style.width = `${index.getBoundingClientRect().width}px`;
    index.style.tableLayout = "fixed";
    filter.addEventListener("input", filterCharts);
    hideCovered.addEventListener("change", filterCharts);
    filterCharts();
  }

  const missing = document.getElementById("filter-missing");
  function groupText(item) {
    const group = item.closest("details.group");
    return group ? group.querySelector("summary").textContent + " " : "";
  }
  function filterMissing() {
    const terms = words(missing.value);
    for (const item of document.querySelectorAll("ul.missing > li")) {
      item.hidden = !matches((groupText(item) + item.textContent).toLowerCase(), terms);
    }
    for (const box of document.querySelectorAll("details.group, details.kind")) {
      const items = [...box.querySelectorAll("ul.missing > li")];
      const visible = items.filter((item) => !item.hidden).length;
      const label = box.querySelector(":scope > summary .shown");
      if (label) label.textContent = terms.length ? ` (${visible} shown)` : "";
      box.hidden = terms.length > 0 && items.length > 0 && visible === 0;
      if (terms.length && visible) box.open = true;
    }
  }
  if (missing) {
    missing.addEventListener("input", filterMissing);
    const setAll = (open) => () => {
      for (const box of document.querySelectorAll("details.kind, details.group")) box.open = open;
    };
    document.getElementById("expand-all").addEventListener("click", setAll(true));
    document.getElementById("collapse-all").addEventListener("click", setAll(false));
  }

  const actual = document.getElementById("actual-size");
  if (actual) {
    actual.addEventListener("change", () => {
      document.querySelector(".diagram").classList.toggle("actual", actual.checked);
    });
  }

  for (const tools of document.querySelectorAll(".tools[hidden]")) tools.hidden = false;
  // keys, as coverage.py's report has them: / filter, [ ] previous / next chart, u index
  const keyLinks = {"[": "a[rel=prev]", "]": "a[rel=next]", "u": "a[rel=index]"};
  addEventListener("keydown", (event) => {
    const typing = event.target instanceof HTMLInputElement;
    if (typing || event.altKey || event.ctrlKey || event.metaKey) return;
    const field = filter || missing;
    if (event.key === "/" && field) {
      event.preventDefault();
      field.focus();
    } else if (event.key in keyLinks) {
      let link = document.querySelector(keyLinks[event.key]);
      if (!link && index && event.key !== "u") {  // the first or last chart shown
        const shown = [...index.tBodies[0].rows].filter((row) => !row.hidden);
        const row = event.key === "]" ? shown[0] : shown[shown.length - 1];
        link = row && row.querySelector("a");
      }
      if (link) location.href = link.href;
    }
  });
})();
"""
