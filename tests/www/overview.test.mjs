// Sign-in and the overview: the namespaces, their capacity and remaining
// exactly as the API says; sorting, filtering, refresh; the token's life.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createNamespace, digits, newPage, signIn, startStack, takeGrants, uniqueNs } from "./harness.mjs";

let stack;
const names = {};

before(async () => {
  stack = await startStack();
  names.tiny = uniqueNs("ov-tiny");
  names.half = uniqueNs("ov-half");
  names.big = uniqueNs("ov-big");
  names.full = uniqueNs("ov-full");
  await createNamespace(stack, names.tiny);
  await createNamespace(stack, names.half, { first: "1001", max: "3000" });
  await createNamespace(stack, names.big, { first: "9007199254740990", max: "18446744073709551615" });
  await createNamespace(stack, names.full, { max: "1000000" });
  await takeGrants(stack, names.tiny, 3, 7);
  await takeGrants(stack, names.half, 1, 1000);
  await takeGrants(stack, names.big, 2, 5);
  await takeGrants(stack, names.full, 1, 999_999);
});

after(async () => {
  await stack?.stop();
});

/** The API's summary of every namespace, by name. */
async function apiSummaries() {
  const r = await stack.authority.req("GET", "/v1/namespaces?limit=1000", { token: stack.admin });
  assert.equal(r.status, 200);
  return new Map(r.body.namespaces.map((s) => [s.namespace, s]));
}

test("an admin signs in with a link; the overview shows each namespace's capacity and remaining as the API does", async () => {
  const page = await newPage(stack);
  await signIn(stack, page, stack.admin);
  assert.equal(new URL(page.url()).hash, "", "the token is removed from the address bar");
  assert.equal(await page.evaluate(() => sessionStorage.getItem("rangeid.token")), stack.admin);
  assert.equal(await page.evaluate(() => localStorage.length), 0);
  assert.equal(await page.getByTestId("session-sub").textContent(), "ops@example");
  assert.equal(await page.getByTestId("session-role").textContent(), "admin");
  assert.equal(await page.getByTestId("session-ns").textContent(), "all namespaces");

  const api = await apiSummaries();
  for (const name of Object.values(names)) {
    const s = api.get(name);
    const row = page.locator(`tr[data-namespace="${name}"]`);
    await row.waitFor();
    assert.equal(digits(await row.getByTestId("remaining").textContent()), s.remaining, `${name} remaining`);
    const used = BigInt(s.next) - BigInt(s.first);
    const total = BigInt(s.max) - BigInt(s.first) + 1n;
    assert.equal(digits(await row.getByTestId("capacity-used").textContent()), used.toString(), `${name} used`);
    assert.equal(digits(await row.getByTestId("capacity-total").textContent()), total.toString(), `${name} total`);
    assert.equal(await row.locator(".state").textContent(), s.state);
  }
  // Exact shares: 21 of 2^53 - 1 is tiny but not zero; 1000 of 2000 is half;
  // 10 of 2^64 - 2^53 + 2 is tiny too, computed past 2^53 without rounding;
  // one ID short of all is not "100 %".
  const percent = (name) => page.locator(`tr[data-namespace="${name}"]`).getByTestId("capacity-percent").textContent();
  assert.equal(await percent(names.tiny), "< 0.001 %");
  assert.equal(await percent(names.half), "50.000 %");
  assert.equal(await percent(names.big), "< 0.001 %");
  assert.equal(await percent(names.full), "> 99.999 %");
  assert.equal(digits(await page.locator(`tr[data-namespace="${names.big}"]`).getByTestId("remaining").textContent()),
    (2n ** 64n - 1n - 9007199254740990n - 10n + 1n).toString());
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("the overview refreshes every few seconds and shows when it last did", async () => {
  const page = await newPage(stack);
  await signIn(stack, page, stack.admin);
  const row = page.locator(`tr[data-namespace="${names.half}"]`);
  await row.waitFor();
  const first = await page.getByTestId("refreshed-at").getAttribute("datetime");
  await takeGrants(stack, names.half, 1, 500);
  await page.waitForFunction(
    (name) => document.querySelector(`tr[data-namespace="${name}"] [data-testid=remaining]`)?.textContent === "500",
    names.half, { timeout: 12_000 },
  );
  assert.notEqual(await page.getByTestId("refreshed-at").getAttribute("datetime"), first);
  assert.equal(await row.getByTestId("capacity-percent").textContent(), "75.000 %");
  await page.context().close();
});

test("rows sort by a column and filter by name and state", async () => {
  const page = await newPage(stack);
  await signIn(stack, page, stack.admin);
  await page.locator(`tr[data-namespace="${names.big}"]`).waitFor();
  const order = () => page.locator("tbody tr").evaluateAll((rows) => rows.map((r) => r.dataset.namespace));
  const mine = async () => (await order()).filter((n) => Object.values(names).includes(n));

  await page.getByRole("button", { name: "Remaining" }).click();
  assert.equal(await page.locator("th", { has: page.getByRole("button", { name: "Remaining" }) }).getAttribute("aria-sort"), "descending");
  assert.deepEqual(await mine(), [names.big, names.tiny, names.half, names.full]);
  await page.getByRole("button", { name: "Remaining" }).click();
  assert.deepEqual(await mine(), [names.full, names.half, names.tiny, names.big]);
  await page.getByRole("button", { name: "Namespace" }).click();
  assert.deepEqual(await mine(), [...Object.values(names)].sort());

  await page.getByLabel("Name contains").fill("ov-half");
  assert.deepEqual(await order(), [names.half]);
  await page.getByLabel("Name contains").fill("");
  await page.getByLabel("State").selectOption("frozen");
  assert.deepEqual(await mine(), []);
  await page.getByLabel("State").selectOption("active");
  assert.equal((await mine()).length, 4);
  await page.getByLabel("Runs out within 30 days").check();
  assert.deepEqual(await mine(), [names.full, names.half], "the two with little left at a recent rate");
  assert.equal(await page.locator(`tr[data-namespace="${names.full}"]`).getAttribute("class"), "row-soon");
  await page.context().close();
});

test("a token the authority refuses returns to sign-in with its message; signing out forgets the token", async () => {
  const page = await newPage(stack);
  const forged = stack.authority.token("admin", ["*"], { key: "f".repeat(64) });
  await page.goto(`${stack.authority.base}/admin/#token=${forged}`);
  const notice = page.getByRole("alert");
  await notice.waitFor();
  const refused = await stack.authority.req("GET", "/v1/session", { token: forged });
  assert.equal(refused.status, 401);
  assert.equal(await notice.textContent(), `Signed out: ${refused.body.error.message}`);
  assert.equal(await page.evaluate(() => sessionStorage.getItem("rangeid.token")), null);

  await page.getByLabel("Reader or admin token").fill(stack.admin);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByTestId("session-role").waitFor();
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.getByLabel("Reader or admin token").waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.getItem("rangeid.token")), null);

  const generator = stack.authority.token("generator", ["*"]);
  await page.getByLabel("Reader or admin token").fill(generator);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByText("That is a generator token").waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.getItem("rangeid.token")), null);
  await page.context().close();
});
