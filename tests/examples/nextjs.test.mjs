// examples/nextjs (create-next-app 16, App Router) against the packed
// package and the real local authority: built with `next build` under
// Turbopack and under `--webpack`, each served by `next start`; the route
// handler on the Node.js runtime and the one on the edge runtime each
// answer 100 IDs (twice, from one generator), and the /browser page takes
// 100 IDs in Chromium from an origin the authority allows. Then `next dev`
// keeps its one generator across an edit of the module that holds it.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Authority, uniqueNs } from "../authority/harness.mjs";
import { createNamespace } from "../npm/harness.mjs";
import { assertFresh, assertGranted, freePort, launchChromium, prepareExample, run, startServer, userEnv } from "./harness.mjs";

let app;
let authority;
let admin;
let browser;
let port;
let serverNs;
let browserNs;
// Every ID seen, per namespace: none may come twice.
const seen = { server: new Set(), browser: new Set() };
const timings = [];

before(async () => {
  app = await prepareExample("nextjs");
  timings.push(`npm ci + tarball ${app.installMs} ms`);
  port = await freePort();
  authority = await new Authority({
    runtime: process.env.RANGEID_TEST_RUNTIME || "workerd",
    vars: { RANGEID_CORS_ORIGINS: `http://127.0.0.1:${port}` },
  }).start();
  admin = authority.token("admin", ["*"]);
  serverNs = uniqueNs("nextjs");
  browserNs = uniqueNs("nextjs-browser");
  await createNamespace(authority, admin, serverNs);
  await createNamespace(authority, admin, browserNs);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await authority?.stop();
  authority?.cleanup();
  app?.cleanup();
  if (timings.length) console.log(`# nextjs example: ${timings.join("; ")}`);
});

/** The server's environment, as the example's README sets it. */
function appEnv() {
  return userEnv({
    RANGEID_URL: authority.base,
    RANGEID_TOKEN: authority.token("generator", [serverNs], { sub: "nextjs-server" }),
    RANGEID_NAMESPACE: serverNs,
    // What the README has the operator mint for the browser page: short-lived, one namespace.
    RANGEID_BROWSER_TOKEN: authority.token("generator", [browserNs], { sub: "nextjs-browser", ttl: 15 * 60 }),
    RANGEID_BROWSER_NAMESPACE: browserNs,
  });
}

/** GET a route handler for 100 IDs; asserts a good answer and returns it. */
async function takeFromRoute(base, route) {
  const r = await fetch(`${base}/api/ids/${route}?n=100`, { signal: AbortSignal.timeout(60_000) });
  const text = await r.text();
  assert.equal(r.status, 200, `/api/ids/${route}: ${text}`);
  const body = JSON.parse(text);
  assert.equal(body.runtime, route === "node" ? "nodejs" : "edge");
  assert.equal(body.ids.length, 100);
  assert.match(body.incarnation, /^[0-9a-f]{32}$/);
  assertFresh(body.ids, seen.server);
  return body;
}

/** The route handlers and the browser page of a built app under `next start`. */
async function exercise(base) {
  for (const route of ["node", "edge"]) {
    const first = await takeFromRoute(base, route);
    const second = await takeFromRoute(base, route);
    assert.equal(second.incarnation, first.incarnation, `${route}: one generator serves every request`);
    await assertGranted(authority, admin, serverNs, [...first.ids, ...second.ids], { incarnation: first.incarnation, sub: "nextjs-server" });
  }

  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  try {
    await page.goto(`${base}/browser`);
    await page.waitForSelector("#ids li:nth-child(100), #error", { timeout: 60_000 });
    const read = () => page.evaluate(() => ({
      error: document.querySelector("#error")?.textContent,
      ids: [...document.querySelectorAll("#ids li")].map((li) => li.textContent),
      incarnation: document.querySelector("#ids")?.dataset.incarnation,
    }));
    const first = await read();
    assert.equal(first.error, undefined, first.error);
    assert.equal(first.ids.length, 100);
    assertFresh(first.ids, seen.browser);
    await page.click("text=Take 100 more");
    await page.waitForFunction((old) => document.querySelector("#ids li")?.textContent !== old, first.ids[0], { timeout: 30_000 });
    const second = await read();
    assert.equal(second.ids.length, 100);
    assert.equal(second.incarnation, first.incarnation, "the page keeps one generator");
    assertFresh(second.ids, seen.browser);
    await assertGranted(authority, admin, browserNs, [...first.ids, ...second.ids], { incarnation: first.incarnation, sub: "nextjs-browser" });
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
}

for (const bundler of ["turbopack", "webpack"]) {
  test(`next build (${bundler}), next start: the Node.js and edge route handlers and the browser page issue IDs`, { timeout: 900_000 }, async () => {
    rmSync(join(app.dir, ".next"), { recursive: true, force: true });
    const build = await run("npm", ["run", "build", ...(bundler === "webpack" ? ["--", "--webpack"] : [])], { cwd: app.dir });
    timings.push(`next build (${bundler}) ${build.ms} ms`);
    assert.match(build.output, bundler === "webpack" ? /webpack/i : /Turbopack/);
    const server = await startServer("npm", ["start", "--", "-H", "127.0.0.1", "-p", String(port)], {
      cwd: app.dir, env: appEnv(), url: `http://127.0.0.1:${port}/`,
    });
    try {
      await exercise(`http://127.0.0.1:${port}`);
    } catch (e) {
      // What the server said, beside the failed assertion.
      console.log(`--- next start's log:\n${server.log.slice(-4000)}`);
      throw e;
    } finally {
      await server.stop();
    }
  });
}

test("next dev keeps one generator when the module holding it is edited (HMR)", { timeout: 600_000 }, async () => {
  const devPort = await freePort();
  const server = await startServer("npm", ["run", "dev", "--", "-H", "127.0.0.1", "-p", String(devPort)], {
    cwd: app.dir, env: appEnv(), url: `http://127.0.0.1:${devPort}/`,
  });
  const holder = join(app.dir, "lib", "rangeid.ts");
  try {
    const base = `http://127.0.0.1:${devPort}`;
    const first = await takeFromRoute(base, "node");
    // The edit logs a line when the module runs again: proof that the dev
    // server re-evaluated it, not just served the old one.
    const marker = "rangeid-example: lib/rangeid.ts evaluated again";
    writeFileSync(holder, `${readFileSync(holder, "utf8")}\nconsole.log(${JSON.stringify(marker)});\n`);
    const deadline = Date.now() + 120_000;
    let afterEdit;
    while (!server.log.includes(marker) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      afterEdit = await takeFromRoute(base, "node");
    }
    assert.ok(server.log.includes(marker), `next dev never re-evaluated lib/rangeid.ts:\n${server.log.slice(-3000)}`);
    afterEdit = await takeFromRoute(base, "node");
    assert.equal(afterEdit.incarnation, first.incarnation, "the generator outlived the reload of its module");
  } finally {
    await server.stop();
  }
});
