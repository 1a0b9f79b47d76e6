// examples/vite (create-vite's default template) against the packed
// package and the real local authority: the dev server, then `vite build`
// and `vite preview`, each with a page that takes IDs in Chromium from an
// origin the authority allows. The dev server keeps the page's one
// generator across hot updates of the page's module and of the module that
// holds the generator; the same build served from an origin the authority
// does not list gets no IDs.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Authority, uniqueNs } from "../authority/harness.mjs";
import { createNamespace } from "../npm/harness.mjs";
import { assertFresh, assertGranted, freePort, launchChromium, prepareExample, run, startServer, userEnv } from "./harness.mjs";

let app;
let authority;
let admin;
let browser;
let devPort;
let previewPort;
let ns;
const seen = new Set();
const timings = [];

before(async () => {
  app = await prepareExample("vite");
  timings.push(`npm ci + tarball ${app.installMs} ms`);
  devPort = await freePort();
  previewPort = await freePort();
  authority = await new Authority({
    runtime: process.env.RANGEID_TEST_RUNTIME || "workerd",
    vars: { RANGEID_CORS_ORIGINS: `http://127.0.0.1:${devPort},http://127.0.0.1:${previewPort}` },
  }).start();
  admin = authority.token("admin", ["*"]);
  ns = uniqueNs("vite");
  await createNamespace(authority, admin, ns);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await authority?.stop();
  authority?.cleanup();
  app?.cleanup();
  if (timings.length) console.log(`# vite example: ${timings.join("; ")}`);
});

/** The VITE_RANGEID_* variables the README has the developer set. */
function appEnv() {
  return userEnv({
    VITE_RANGEID_URL: authority.base,
    VITE_RANGEID_TOKEN: authority.token("generator", [ns], { sub: "vite-page", ttl: 15 * 60 }),
    VITE_RANGEID_NAMESPACE: ns,
  });
}

/** What the page shows: its status line, its IDs and their generator. */
function read(page) {
  return page.evaluate(() => ({
    status: document.querySelector("#status")?.textContent,
    title: document.querySelector("h1")?.textContent,
    ids: [...document.querySelectorAll("#ids li")].map((li) => li.textContent),
    incarnation: document.querySelector("#ids")?.dataset.incarnation,
  }));
}

/** Opens `url` and waits for its first 100 IDs; asserts they are new and granted to the page. */
async function openAndTake(url, errors) {
  const page = await browser.newPage();
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(url);
  await page.waitForSelector("#ids li:nth-child(100), [role=alert]", { timeout: 60_000 });
  const shown = await read(page);
  assert.equal(shown.ids.length, 100, shown.status);
  assertFresh(shown.ids, seen);
  await assertGranted(authority, admin, ns, shown.ids, { incarnation: shown.incarnation, sub: "vite-page" });
  return { page, shown };
}

/** Waits until the page shows IDs other than `old` (after a hot update or a click). */
async function nextShown(page, old) {
  await page.waitForFunction((first) => {
    const li = document.querySelector("#ids li:nth-child(100)");
    return li && document.querySelector("#ids li").textContent !== first;
  }, old.ids[0], { timeout: 60_000 });
  const shown = await read(page);
  assert.equal(shown.ids.length, 100, shown.status);
  assertFresh(shown.ids, seen);
  return shown;
}

test("vite (dev server): the page issues IDs and keeps its generator across hot updates", { timeout: 300_000 }, async () => {
  const server = await startServer("npm", ["run", "dev", "--", "--host", "127.0.0.1", "--port", String(devPort), "--strictPort"], {
    cwd: app.dir, env: appEnv(), url: `http://127.0.0.1:${devPort}/`,
  });
  const errors = [];
  try {
    const { page, shown } = await openAndTake(`http://127.0.0.1:${devPort}/`, errors);
    // A full reload would drop this; a hot update keeps it.
    await page.evaluate(() => { window.sameDocument = true; });

    // An edit of the page's module: it takes its own hot update.
    const main = join(app.dir, "src", "main.ts");
    writeFileSync(main, readFileSync(main, "utf8").replace("const title = 'IDs taken in this browser'", "const title = 'IDs taken in this browser, edited'"));
    await page.waitForFunction(() => document.querySelector("h1")?.textContent.endsWith("edited"), null, { timeout: 60_000 });
    const afterPageEdit = await nextShown(page, shown);

    // An edit of the module that holds the generator.
    const holder = join(app.dir, "src", "rangeid.ts");
    // It logs a line when it runs again: proof that it was re-evaluated.
    // A save right after the page's own hot update is sometimes missed by
    // vite's file watcher (make test saw only main.ts's updates): saved
    // again, as an editor's user would, up to 6 times, 10 s apart.
    const original = readFileSync(holder, "utf8");
    for (let attempt = 1; ; attempt++) {
      const evaluated = page.waitForEvent("console", { predicate: (m) => m.text() === "rangeid.ts evaluated again", timeout: 10_000 });
      writeFileSync(holder, `${original}\nconsole.log('rangeid.ts evaluated again')\n// save ${attempt}\n`);
      try {
        await evaluated;
        break;
      } catch (e) {
        if (attempt >= 6) throw e;
      }
    }
    const afterHolderEdit = await nextShown(page, afterPageEdit);

    assert.equal(await page.evaluate(() => window.sameDocument), true, "hot updates, not a full reload");
    assert.equal(afterPageEdit.incarnation, shown.incarnation, "one generator across the page module's hot update");
    assert.equal(afterHolderEdit.incarnation, shown.incarnation, "one generator across the holder module's hot update");
    await assertGranted(authority, admin, ns, [...afterPageEdit.ids, ...afterHolderEdit.ids], { incarnation: shown.incarnation, sub: "vite-page" });
    assert.deepEqual(errors, []);
    await page.close();
  } catch (e) {
    // What the server said, beside the failed assertion.
    console.log(`--- vite's log:\n${server.log.slice(-4000)}`);
    throw e;
  } finally {
    await server.stop();
  }
});

test("vite build, vite preview: the built page issues IDs from an allowed origin, and none from another", { timeout: 300_000 }, async () => {
  const build = await run("npm", ["run", "build"], { cwd: app.dir, env: appEnv() });
  timings.push(`tsc && vite build ${build.ms} ms`);
  const server = await startServer("npm", ["run", "preview", "--", "--host", "127.0.0.1", "--port", String(previewPort), "--strictPort"], {
    cwd: app.dir, env: userEnv(), url: `http://127.0.0.1:${previewPort}/`,
  });
  const errors = [];
  try {
    const { page, shown } = await openAndTake(`http://127.0.0.1:${previewPort}/`, errors);
    await page.click("#more");
    const more = await nextShown(page, shown);
    assert.equal(more.incarnation, shown.incarnation);
    await assertGranted(authority, admin, ns, more.ids, { incarnation: shown.incarnation, sub: "vite-page" });
    assert.deepEqual(errors, []);
    await page.close();

    // The same files from http://localhost:<port>, an origin the authority does not list.
    const other = await browser.newPage();
    await other.goto(`http://localhost:${previewPort}/`);
    await other.waitForSelector("[role=alert]", { timeout: 60_000 });
    const refused = await read(other);
    assert.equal(refused.ids.length, 0);
    assert.match(refused.status, /^unavailable: /, refused.status);
    await other.close();
  } catch (e) {
    // What the server said, beside the failed assertion.
    console.log(`--- vite preview's log:\n${server.log.slice(-4000)}`);
    throw e;
  } finally {
    await server.stop();
  }
});
