// Shared by the admin page's browser tests: the real local authority
// (wrangler dev, or bare workerd with RANGEID_TEST_RUNTIME=workerd; either
// way the Worker serves www/dist at /admin/ on the API's own origin) and
// headless Debian Chromium.
//
// Needs edge-authority/build (edge-authority/scripts/build.sh) and
// www/dist (node www/scripts/build.mjs).
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { chromium } from "playwright-core";
import { Authority, uniqueNs } from "../authority/harness.mjs";

export { uniqueNs };

const here = dirname(fileURLToPath(import.meta.url));
export const repo = join(here, "..", "..");
const require = createRequire(import.meta.url);

export const BROWSER_ARGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];

/** Where screenshots go: $RANGEID_ARTIFACTS, else the system's temp folder. */
export function artifactsDir() {
  const dir = process.env.RANGEID_ARTIFACTS || join(tmpdir(), "rangeid-artifacts");
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** One authority and one browser for a test file. */
export async function startStack() {
  if (!existsSync(join(repo, "www", "dist", "admin", "index.html"))) {
    throw new Error("www/dist is missing: run node www/scripts/build.mjs");
  }
  const authority = await new Authority().start();
  const admin = authority.token("admin", ["*"], { sub: "ops@example" });
  try {
    await preconditions(authority, admin);
  } catch (e) {
    await authority.stop();
    authority.cleanup();
    throw e;
  }
  // Playwright gives every launch a fresh, throw-away profile.
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: BROWSER_ARGS });
  const generator = authority.token("generator", ["*"], { sub: "gen-7" });
  return {
    authority,
    browser,
    admin,
    generator,
    async stop() {
      await browser.close();
      await authority.stop();
      authority.cleanup();
    },
  };
}

/** What the page needs of the authority, each failure said plainly. */
async function preconditions(authority, admin) {
  const page = await authority.req("GET", "/admin/");
  if (page.status !== 200) {
    throw new Error(`GET /admin/ answered ${page.status}: the authority serves www/dist through its ASSETS binding (edge-authority/wrangler.toml [assets]; build with edge-authority/scripts/build.sh)`);
  }
  const session = await authority.req("GET", "/v1/session", { token: admin });
  if (session.status !== 200) throw new Error(`GET /v1/session answered ${session.status}: ${session.text}`);
  // Browsers send Origin on a same-origin POST; it must not count as cross-origin.
  const post = await authority.req("POST", "/v1/namespaces", { token: admin, body: {}, headers: { origin: authority.base } });
  if (post.status === 403) throw new Error(`a same-origin POST was refused: ${post.text}`);
}

/**
 * A new page (its own context: empty storage) that records page errors,
 * dialogs and CSP violations in `page.problems`.
 */
export async function newPage(stack, { viewport = { width: 1280, height: 900 } } = {}) {
  const context = await stack.browser.newContext({ viewport, reducedMotion: "reduce" });
  const page = await context.newPage();
  page.problems = [];
  page.on("pageerror", (e) => page.problems.push(`page error: ${e.message}`));
  page.on("dialog", async (d) => {
    page.problems.push(`dialog: ${d.type()} ${d.message()}`);
    await d.dismiss();
  });
  page.on("console", (m) => {
    if (/Content Security Policy/i.test(m.text())) page.problems.push(`csp: ${m.text()}`);
  });
  return page;
}

/** Opens the page with a sign-in link and waits until the session shows. */
export async function signIn(stack, page, token, hash = "") {
  await page.goto(`${stack.authority.base}/admin/#token=${token}`);
  await page.getByTestId("session-role").waitFor();
  if (hash) await page.goto(`${stack.authority.base}/admin/${hash}`);
}

export async function createNamespace(stack, name, extra = {}) {
  const r = await stack.authority.req("POST", "/v1/namespaces", { token: stack.admin, body: { namespace: name, ...extra } });
  if (r.status !== 201) throw new Error(`create ${name}: ${r.status} ${r.text}`);
  return r.body;
}

let requestCounter = 0;

/** Waits until the namespace listing (summaries the objects push to the
 * registry, at most 2 s behind) shows `namespace` at `next`. */
export async function listed(stack, namespace, next) {
  for (let i = 0; i < 100; i++) {
    const r = await stack.authority.req("GET", "/v1/namespaces?limit=1000", { token: stack.admin });
    if (r.body?.namespaces?.some((s) => s.namespace === namespace && s.next === next)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the listing never showed ${namespace} at ${next}`);
}

/** Takes `n` grants of `count` IDs as a generator, then waits until the
 * listing shows them; returns them. */
export async function takeGrants(stack, namespace, n, count, incarnation = "inc-test") {
  const grants = [];
  for (let i = 0; i < n; i++) {
    requestCounter += 1;
    const r = await stack.authority.req("POST", "/v1/ranges", {
      token: stack.generator,
      body: { namespace, incarnation, requestId: `req-${process.pid}-${requestCounter}`, count },
    });
    if (r.status !== 200) throw new Error(`grant in ${namespace}: ${r.status} ${r.text}`);
    grants.push(r.body);
  }
  if (grants.length > 0) await listed(stack, namespace, grants.at(-1).end);
  return grants;
}

/** Runs axe-core in the page (evaluated over CDP, so the page's CSP stays as it is). */
export async function axe(page) {
  const source = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
  await page.evaluate(source);
  return page.evaluate(() => globalThis.axe.run(document, { resultTypes: ["violations"] }));
}

/** Presses Tab until the focused element satisfies `test` (run in the page); fails after `max` presses. */
export async function tabTo(page, test, { max = 150, shift = false } = {}) {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press(shift ? "Shift+Tab" : "Tab");
    if (await page.evaluate(test)) return;
  }
  throw new Error(`Tab never reached the element (${test})`);
}

/** Strips the digit grouping the page adds to counts. */
export const digits = (text) => text.replace(/[^0-9]/g, "");

/**
 * A small, plausible fleet for screenshots: a busy namespace, one running
 * out, a frozen one, one reaching past 2^53, and a quiet one.
 */
export async function seedDemo(stack) {
  const namespaces = {
    orders: { first: "1001" },
    tickets: { max: "5000000" },
    invoices: {},
    "ledger.entries": { first: "9007199254740000", max: "18446744073709551615" },
    "users-eu": {},
  };
  for (const [name, extra] of Object.entries(namespaces)) await createNamespace(stack, name, extra);
  await takeGrants(stack, "orders", 12, 200_000, "orders-api-1");
  await takeGrants(stack, "orders", 6, 100_000, "orders-api-2");
  await takeGrants(stack, "tickets", 8, 480_000, "box-office");
  await takeGrants(stack, "invoices", 3, 10_000, "billing");
  await takeGrants(stack, "ledger.entries", 4, 250_000, "ledger");
  await takeGrants(stack, "users-eu", 1, 1_000, "signup");
  const r = await stack.authority.req("POST", "/v1/namespaces/invoices/freeze", {
    token: stack.admin, body: { reason: "Migrating invoice numbering to the new scheme (CHG-2231)" },
  });
  if (r.status !== 200) throw new Error(`freeze invoices: ${r.status} ${r.text}`);
  return Object.keys(namespaces);
}

/** Screenshots of the overview and of one namespace page into `dir`. */
export async function screenshots(stack, dir, { overview = "admin-overview.png", namespace = "admin-namespace.png" } = {}) {
  const page = await newPage(stack, { viewport: { width: 1280, height: 560 } });
  await signIn(stack, page, stack.admin);
  await page.locator("tbody tr").nth(4).waitFor();
  const files = [join(dir, overview), join(dir, namespace)];
  await page.screenshot({ path: files[0] });
  await page.goto(`${stack.authority.base}/admin/#/ns/orders`);
  await page.waitForFunction(() => window.__rangeidCharts?.["1h"] && window.__rangeidCharts?.["24h"]);
  await page.locator("table.grants tbody tr").first().waitFor();
  await page.screenshot({ path: files[1], fullPage: true });
  await page.context().close();
  return files;
}
