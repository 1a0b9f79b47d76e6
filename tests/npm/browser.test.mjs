// The packed package loaded in headless Chromium from a page served locally,
// issuing IDs from the real local authority: the `browser` build (which
// fetches the .wasm file) and the `inline` build (which carries it). The
// page's server forwards /v1/* to the authority, so the page talks to its
// own origin.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { extname, join, normalize } from "node:path";
import { chromium } from "playwright-core";
import { Authority, uniqueNs } from "../authority/harness.mjs";
import { createNamespace, installPacked } from "./harness.mjs";

let authority;
let server;
let browser;
let origin;
let ns;

const types = { ".mjs": "text/javascript", ".js": "text/javascript", ".wasm": "application/wasm", ".html": "text/html" };

// The files the page asked the server for.
const requested = [];

function page(token, namespace, entry) {
  return `<!doctype html><meta charset="utf-8"><title>rangeid in a browser</title>
<script type="module">
import { createGenerator } from "/pkg/src/${entry}.mjs";
try {
  const ids = await createGenerator({ url: location.origin, token: ${JSON.stringify(token)}, namespace: ${JSON.stringify(namespace)} });
  const out = [];
  for (let i = 0; i < 5000; i++) out.push(await ids.nextId());
  const batch = await ids.nextIds(10);
  window.result = { ids: out, batch, big: String(await ids.nextIdBigInt()), stats: ids.stats() };
} catch (e) {
  window.result = { error: String(e && e.code) + ": " + String(e && e.message) };
}
</script>`;
}

before(async () => {
  const pkg = installPacked();
  authority = await new Authority().start();
  const admin = authority.token("admin", ["*"]);
  ns = uniqueNs("browser");
  await createNamespace(authority, admin, ns, { first: (2n ** 53n - 100n).toString(), max: (2n ** 64n - 1n).toString() });
  const root = join(pkg.scratch, "node_modules", "rangeid");
  const token = authority.token("generator", [ns]);
  server = createServer(async (req, res) => {
    requested.push(req.url);
    try {
      if (req.url === "/" || req.url === "/inline") {
        res.writeHead(200, { "content-type": "text/html" }).end(page(token, ns, req.url === "/" ? "browser" : "inline"));
      } else if (req.url.startsWith("/v1/")) {
        const chunks = [];
        for await (const c of req) chunks.push(c);
        const r = await fetch(authority.base + req.url, {
          method: req.method, headers: { authorization: req.headers.authorization ?? "", "content-type": "application/json" },
          body: req.method === "POST" ? Buffer.concat(chunks) : undefined,
        });
        res.writeHead(r.status, { "content-type": r.headers.get("content-type") ?? "application/json" }).end(Buffer.from(await r.arrayBuffer()));
      } else if (req.url.startsWith("/pkg/")) {
        const file = normalize(join(root, req.url.slice(5)));
        if (!file.startsWith(root)) return res.writeHead(403).end();
        res.writeHead(200, { "content-type": types[extname(file)] ?? "application/octet-stream" }).end(await readFile(file));
      } else {
        res.writeHead(404).end();
      }
    } catch (e) {
      res.writeHead(500).end(String(e));
    }
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  origin = `http://127.0.0.1:${server.address().port}`;
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
  });
});

after(async () => {
  await browser?.close();
  server?.close();
  await authority?.stop();
  authority?.cleanup();
});

test("headless Chromium issues exact string IDs past 2^53 from the package", async () => {
  const tab = await browser.newPage();
  const errors = [];
  tab.on("pageerror", (e) => errors.push(String(e)));
  await tab.goto(origin + "/");
  await tab.waitForFunction(() => window.result !== undefined, null, { timeout: 30_000 });
  const result = await tab.evaluate(() => window.result);
  assert.deepEqual(errors, []);
  assert.equal(result.error, undefined, result.error);
  assert.equal(result.ids.length, 5000);
  assert.equal(new Set(result.ids).size, 5000);
  const start = 2n ** 53n - 100n;
  const end = 2n ** 64n;
  for (const id of [...result.ids, ...result.batch, result.big]) {
    assert.equal(typeof id, "string");
    assert.ok(BigInt(id) >= start && BigInt(id) < end, id);
  }
  assert.ok(result.ids.includes("9007199254740992"), "2^53 itself, exact");
  assert.ok(result.stats.rangesInstalled >= 1);
});

test("the inline build (rangeid/inline) issues IDs in Chromium without fetching a .wasm file", async () => {
  const tab = await browser.newPage();
  const errors = [];
  tab.on("pageerror", (e) => errors.push(String(e)));
  const from = requested.length;
  await tab.goto(origin + "/inline");
  await tab.waitForFunction(() => window.result !== undefined, null, { timeout: 30_000 });
  const result = await tab.evaluate(() => window.result);
  assert.deepEqual(errors, []);
  assert.equal(result.error, undefined, result.error);
  assert.equal(new Set(result.ids).size, 5000);
  const files = requested.slice(from);
  assert.ok(files.includes("/pkg/src/inline.mjs") && files.includes("/pkg/wasm/rangeid_wasm_bg.base64.mjs"), files.join(" "));
  assert.deepEqual(files.filter((f) => f.endsWith(".wasm")), [], "no .wasm file fetched");
});
