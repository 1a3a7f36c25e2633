// Lays out Mermaid texts (a JSON list on standard input) with Mermaid's own renderer in
// headless Chromium, which has the text measurement and SVG geometry (getBBox) jsdom
// lacks, and prints for each what was drawn: the error Mermaid raised, or the states,
// composite boxes and edges of the SVG with their geometry.
//
// One browser and one page for the whole batch: the page loads Mermaid's dist bundle
// from NODE_MODULES, and the texts are drawn one after another by `mermaid.render`
// (59 texts in 15 s, median of 3; a browser per text took 4.3 s each, median of 8:
// 2026-12-04, a loaded 2-core machine).
// Chromium is driven over its DevTools pipe (file descriptors 3 and 4), so the
// script awaits the page's load event and the render's promise: no waiting on a clock.
//
// Usage: node mermaid_layout.mjs CHROMIUM NODE_MODULES < texts.json > results.json
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [chromium, modules] = process.argv.slice(2);
const bundle = pathToFileURL(join(resolve(modules), "mermaid", "dist", "mermaid.min.js")).href;

// Runs in the page: draws each text and reads back the SVG Mermaid made of it.
function layOut(texts) {
  const stateId = /^d\d+-state-(.+)-\d+$/;
  const box = (element) => {
    const b = element.getBBox();
    return { width: b.width, height: b.height };
  };
  const drawOne = async (text, index) => {
    const id = `d${index}`;
    let svgText;
    try {
      svgText = (await mermaid.render(id, text)).svg;
    } catch (error) {
      document.getElementById(id)?.remove(); // Mermaid's error drawing, if it left one
      return { error: String(error?.message ?? error) };
    }
    const holder = document.createElement("div");
    holder.innerHTML = svgText;
    document.body.appendChild(holder);
    const svg = holder.querySelector("svg");
    const nodes = [...svg.querySelectorAll("g.node")].map((n) => ({
      id: (n.id.match(stateId) ?? [null, n.id])[1],
      classes: n.getAttribute("class").split(/\s+/).filter(Boolean),
      text: n.textContent.replace(/\s+/g, " ").trim(),
      ...box(n),
    }));
    const clusters = [...svg.querySelectorAll("g.statediagram-cluster")].map((c) => ({
      id: c.getAttribute("data-id"),
      classes: c.getAttribute("class").split(/\s+/).filter(Boolean),
      ...box(c),
    }));
    const edges = [...svg.querySelectorAll('path[data-edge="true"]')].map((p) => ({
      classes: p.getAttribute("class").split(/\s+/).filter(Boolean),
      length: p.getTotalLength(),
    }));
    const labels = [...svg.querySelectorAll("g.edgeLabel")]
      .map((l) => l.textContent.replace(/\s+/g, " ").trim())
      .filter(Boolean);
    // Each edge label's lines, the box its text is drawn in (the union of its lines'
    // boxes) and the box Mermaid made for it (its foreignObject, which clips the text).
    const rect = (r) => ({ left: r.left, top: r.top, right: r.right, bottom: r.bottom });
    const labelBoxes = [...svg.querySelectorAll("g.edgeLabel")]
      .filter((l) => l.textContent.trim())
      .map((l) => {
        const range = document.createRange();
        range.selectNodeContents(l);
        const lines = [...range.getClientRects()].filter((r) => r.width > 0);
        const text = {
          left: Math.min(...lines.map((r) => r.left)),
          top: Math.min(...lines.map((r) => r.top)),
          right: Math.max(...lines.map((r) => r.right)),
          bottom: Math.max(...lines.map((r) => r.bottom)),
        };
        const object = l.querySelector("foreignObject") ?? l;
        return {
          lines: (l.querySelector("foreignObject div")?.innerText ?? l.textContent)
            .split("\n")
            .map((line) => line.replace(/\s+/g, " ").trim()),
          text,
          box: rect(object.getBoundingClientRect()),
        };
      });
    const errorMarks = svg.querySelectorAll(".error-icon, .error-text").length;
    const result = {
      error: null, ...box(svg), nodes, clusters, edges, labels, labelBoxes, errorMarks,
    };
    holder.remove();
    return result;
  };
  return (async () => {
    mermaid.initialize({ startOnLoad: false });
    const results = [];
    for (const [index, text] of texts.entries()) results.push(await drawOne(text, index));
    return results;
  })();
}

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const texts = JSON.parse(Buffer.concat(chunks).toString("utf8"));

const dir = mkdtempSync(join(tmpdir(), "statekit-mermaid-"));
const page = join(dir, "page.html");
writeFileSync(page, `<!doctype html><meta charset="utf-8"><script src="${bundle}" charset="utf-8"></script>`);
const browser = spawn(
  chromium,
  [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    "--remote-debugging-pipe",
    `--user-data-dir=${join(dir, "profile")}`,
    "about:blank",
  ],
  { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"] },
);
let browserLog = "";
browser.stderr.on("data", (data) => (browserLog += data));
const exited = new Promise((done) => browser.on("exit", done));

// The DevTools protocol over the pipe: NUL-terminated JSON messages.
const toBrowser = browser.stdio[3];
const fromBrowser = browser.stdio[4];
const answers = new Map();
const eventWaiters = [];
let nextId = 1;
let pending = Buffer.alloc(0);
fromBrowser.on("data", (data) => {
  pending = Buffer.concat([pending, data]);
  for (let end = pending.indexOf(0); end >= 0; end = pending.indexOf(0)) {
    const message = JSON.parse(pending.subarray(0, end).toString("utf8"));
    pending = pending.subarray(end + 1);
    if (message.id !== undefined) answers.get(message.id)?.(message);
    for (const waiter of eventWaiters) if (waiter.method === message.method) waiter.done(message);
  }
});
exited.then((code) => {
  for (const answer of answers.values()) answer({ error: { message: `Chromium exited (${code})` } });
});

function send(method, params = {}, sessionId = undefined) {
  const id = nextId++;
  toBrowser.write(`${JSON.stringify({ id, method, params, sessionId })}\0`);
  return new Promise((done) => answers.set(id, done)).then((message) => {
    answers.delete(id);
    if (message.error) throw new Error(`${method}: ${message.error.message}\n${browserLog}`);
    return message.result;
  });
}

function nextEvent(method) {
  return new Promise((done) => eventWaiters.push({ method, done }));
}

let failure = null;
try {
  const { targetId } = await send("Target.createTarget", { url: "about:blank" });
  const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true });
  await send("Page.enable", {}, sessionId);
  const loaded = nextEvent("Page.loadEventFired");
  await send("Page.navigate", { url: pathToFileURL(page).href }, sessionId);
  await loaded;
  const evaluated = await send(
    "Runtime.evaluate",
    {
      expression: `(${layOut.toString()})(${JSON.stringify(texts)})`,
      awaitPromise: true,
      returnByValue: true,
    },
    sessionId,
  );
  if (evaluated.exceptionDetails) throw new Error(JSON.stringify(evaluated.exceptionDetails));
  process.stdout.write(JSON.stringify(evaluated.result.value));
  send("Browser.close").catch(() => {}); // its answer may race the exit
} catch (error) {
  failure = error;
  browser.kill();
}
await exited;
rmSync(dir, { recursive: true, force: true });
if (failure) {
  process.stderr.write(`${failure.stack ?? failure}\n`);
  process.exit(1);
}
