// Reads Mermaid texts (a JSON list on standard input) and prints, for each, what
// Mermaid itself makes of it: the parse error, or the nodes and edges its state
// diagram database builds for the renderer (that step also refuses things the
// grammar accepts, such as a description on a composite state).
//
// Usage: node mermaid_data.mjs NODE_MODULES < texts.json > results.json
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const modules = resolve(process.argv[2]);
const require = createRequire(join(modules, "noop.js"));
const { JSDOM } = require("jsdom");
const dom = new JSDOM("<!doctype html><html><body></body></html>");
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const core = pathToFileURL(join(modules, "mermaid", "dist", "mermaid.core.mjs")).href;
const { default: mermaid } = await import(core);
mermaid.initialize({ startOnLoad: false });

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const texts = JSON.parse(Buffer.concat(chunks).toString("utf8"));

const results = [];
for (const text of texts) {
  try {
    const diagram = await mermaid.mermaidAPI.getDiagramFromText(text);
    const data = diagram.db.getData();
    results.push({
      error: null,
      nodes: data.nodes.map((n) => ({
        id: n.id,
        label: typeof n.label === "string" ? n.label : String(n.label ?? ""),
        description: Array.isArray(n.description) ? n.description : [],
        shape: n.shape ?? "",
        parentId: n.parentId ?? null,
      })),
      edges: data.edges.map((e) => ({ start: e.start, end: e.end, label: e.label ?? "" })),
    });
  } catch (error) {
    results.push({ error: String(error?.message ?? error), nodes: [], edges: [] });
  }
}
process.stdout.write(JSON.stringify(results));
