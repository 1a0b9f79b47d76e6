// The page's defences and reach: served headers (CSP, nosniff), API text
// shown as text only, axe-core's scan, and every main action by keyboard.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { axe, createNamespace, newPage, signIn, startStack, tabTo, takeGrants, uniqueNs } from "./harness.mjs";

let stack;

before(async () => {
  stack = await startStack();
});

after(async () => {
  await stack?.stop();
});

const PROBE = "<img src=x onerror=alert(1)>";

test("the page and its files are served with a strict CSP and nosniff", async () => {
  const page = await stack.authority.req("GET", "/admin/");
  assert.equal(page.status, 200);
  const csp = page.headers.get("content-security-policy");
  assert.ok(csp, "Content-Security-Policy is set");
  const directives = new Map(csp.split(";").map((d) => d.trim().split(/\s+/)).map(([k, ...v]) => [k, v.join(" ")]));
  assert.equal(directives.get("default-src"), "'self'");
  assert.equal(directives.get("script-src"), "'self'");
  assert.equal(directives.get("style-src"), "'self'");
  assert.equal(directives.get("frame-ancestors"), "'none'");
  assert.doesNotMatch(csp, /unsafe-|data:|https?:/);
  assert.equal(page.headers.get("x-content-type-options"), "nosniff");
  assert.doesNotMatch(page.text, /<script(?![^>]*\ssrc=)[^>]*>/, "no inline script");
  assert.doesNotMatch(page.text, /\sstyle=|<style/, "no inline style");
  for (const [, file] of page.text.matchAll(/(?:src|href)="\.\/([^"]+)"/g)) {
    const asset = await stack.authority.req("GET", `/admin/${file}`);
    assert.equal(asset.status, 200, file);
    assert.equal(asset.headers.get("x-content-type-options"), "nosniff", file);
  }
  assert.equal((await stack.authority.req("GET", "/_headers")).status, 404, "the rules file itself is not served");
});

test("API text is rendered as text: a freeze reason and a token's sub holding markup appear literally", async () => {
  const ns = uniqueNs("xss");
  await createNamespace(stack, ns);
  const sub = `<b>ops</b><script>alert(2)</script>`;
  const admin = stack.authority.token("admin", ["*"], { sub });
  const page = await newPage(stack);
  await signIn(stack, page, admin, `#/ns/${ns}`);
  assert.equal(await page.getByTestId("session-sub").textContent(), sub);

  await page.getByLabel("Reason").fill(PROBE);
  await page.getByRole("button", { name: "Freeze…" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Freeze" }).click();
  const receipt = page.getByTestId("audit-receipt");
  await receipt.waitFor();
  assert.equal(await receipt.locator(".reason").textContent(), PROBE);
  const entry = (await stack.authority.req("GET", `/v1/namespaces/${ns}/audit?limit=1`, { token: stack.admin })).body.audit[0];
  assert.equal(entry.reason, PROBE);
  assert.equal(entry.actor, sub);
  const row = page.locator(`tr[data-audit-id="${entry.id}"]`);
  await row.waitFor();
  assert.equal(await row.locator(".reason").textContent(), PROBE);
  assert.ok((await row.textContent()).includes(sub));
  await page.waitForTimeout(500); // give an injected handler a chance to fire
  assert.equal(await page.locator("img, b, main script").count(), 0, "no element made from API text");
  assert.deepEqual(page.problems, [], "no dialog, page error or CSP report");
  await page.context().close();
});

test("axe-core finds no serious or critical violation on sign-in, overview and namespace pages", async () => {
  const ns = uniqueNs("axe");
  await createNamespace(stack, ns);
  await takeGrants(stack, ns, 3, 100);
  const page = await newPage(stack);
  const serious = async (where) => {
    const result = await axe(page);
    const bad = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
    assert.deepEqual(bad.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`), [], where);
  };
  await page.goto(`${stack.authority.base}/admin/`);
  await page.getByLabel("Reader or admin token").waitFor();
  await serious("sign-in");
  await signIn(stack, page, stack.admin);
  await page.locator(`tr[data-namespace="${ns}"]`).waitFor();
  await page.getByText("New namespace").click();
  await serious("overview");
  await page.goto(`${stack.authority.base}/admin/#/ns/${ns}`);
  await page.locator("table.grants tbody tr").first().waitFor();
  await page.getByRole("heading", { name: "Audit log" }).waitFor();
  await page.waitForFunction(() => window.__rangeidCharts?.["1h"] && window.__rangeidCharts?.["24h"]);
  await serious("namespace page");
  await page.getByLabel("Reason").fill("axe");
  await page.getByRole("button", { name: "Freeze…" }).click();
  await page.getByRole("dialog").waitFor();
  await serious("confirmation dialog");
  await page.keyboard.press("Escape");
  await page.context().close();
});

/** Focus is on an element matching `selector` (and `text`), drawn with an outline. */
const focused = (selector, text) => `(() => {
  const el = document.activeElement;
  if (!el || !el.matches(${JSON.stringify(selector)})) return false;
  if (${JSON.stringify(text ?? null)} !== null && el.textContent.trim() !== ${JSON.stringify(text ?? null)}) return false;
  const style = getComputedStyle(el);
  if (style.outlineStyle === "none" || parseFloat(style.outlineWidth) === 0) throw new Error("focus not visible on " + el.outerHTML.slice(0, 80));
  return true;
})()`;

test("the main actions are reachable by keyboard alone, with visible focus", async () => {
  const ns = uniqueNs("keys");
  const page = await newPage(stack);
  await signIn(stack, page, stack.admin);
  await page.locator("tbody tr").first().waitFor();

  // Sort by a column.
  await tabTo(page, focused("button.sort", "Remaining"));
  await page.keyboard.press("Enter");
  await page.locator('th[aria-sort="descending"]', { hasText: "Remaining" }).waitFor();

  // Create a namespace: open the form, fill it, confirm in the dialog.
  await tabTo(page, focused("summary"), { shift: true });
  await page.keyboard.press("Enter");
  await tabTo(page, focused("#create-namespace"));
  await page.keyboard.type(ns);
  await tabTo(page, focused("button", "Create…"));
  await page.keyboard.press("Enter");
  await page.getByRole("dialog").waitFor();
  await page.waitForFunction(focused("dialog button", "Cancel"));
  await page.keyboard.press("Tab");
  await page.waitForFunction(focused("dialog button", "Create namespace"));
  await page.keyboard.press("Enter");
  await page.getByTestId("audit-receipt").waitFor();
  assert.equal((await stack.authority.req("GET", `/v1/namespaces/${ns}`, { token: stack.admin })).status, 200);

  // Open it from the table.
  await page.locator(`tr[data-namespace="${ns}"]`).waitFor();
  await tabTo(page, focused(`a[href="#/ns/${ns}"]`), { max: 400 });
  await page.keyboard.press("Enter");
  await page.getByRole("heading", { name: "Recent grants" }).waitFor();
  await takeGrants(stack, ns, 1, 10);

  // Look an ID up.
  await tabTo(page, focused("#lookup-id"));
  await page.keyboard.type("5");
  await page.keyboard.press("Enter");
  await page.getByTestId("lookup-result").getByText("inc-test").waitFor();

  // Escape leaves a confirmation without acting.
  await tabTo(page, focused("#floor-value"));
  await page.keyboard.type("1000");
  await page.keyboard.press("Enter");
  await page.getByRole("dialog").waitFor();
  await page.keyboard.press("Escape");
  await page.getByRole("dialog").waitFor({ state: "hidden" });

  // Freeze with a reason.
  await tabTo(page, focused("#freeze-reason"), { shift: true });
  await page.keyboard.type("keyboard drill");
  await tabTo(page, focused("button", "Freeze…"));
  await page.keyboard.press("Enter");
  await page.getByRole("dialog").waitFor();
  await page.keyboard.press("Tab");
  await page.waitForFunction(focused("dialog button", "Freeze"));
  await page.keyboard.press("Enter");
  await page.getByTestId("state").getByText("frozen").waitFor();
  const s = (await stack.authority.req("GET", `/v1/namespaces/${ns}`, { token: stack.admin })).body;
  assert.equal(s.state, "frozen");
  assert.equal(s.next, "11", "the cancelled floor changed nothing");

  // Sign out.
  await tabTo(page, focused("button", "Sign out"), { max: 400 });
  await page.keyboard.press("Enter");
  await page.getByLabel("Reader or admin token").waitFor();
  assert.deepEqual(page.problems, []);
  await page.context().close();
});
