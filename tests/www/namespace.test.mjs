// A namespace page: the rate chart plots what the rates endpoint says;
// lookup finds who took an ID; recent grants page with their cursor.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createNamespace, newPage, signIn, startStack, takeGrants, uniqueNs } from "./harness.mjs";

let stack;

before(async () => {
  stack = await startStack();
});

after(async () => {
  await stack?.stop();
});

test("the charts plot exactly the rates endpoint's buckets, with empty minutes as 0", async () => {
  const ns = uniqueNs("chart");
  await createNamespace(stack, ns);
  const grants = await takeGrants(stack, ns, 4, 2500);
  const page = await newPage(stack);
  await signIn(stack, page, stack.admin);
  const served = {
    "1h": page.waitForResponse((r) => r.url().endsWith(`/v1/namespaces/${ns}/rates?window=1h`)),
    "24h": page.waitForResponse((r) => r.url().endsWith(`/v1/namespaces/${ns}/rates?window=24h`)),
  };
  await page.goto(`${stack.authority.base}/admin/#/ns/${ns}`);
  for (const window of ["1h", "24h"]) {
    const res = await served[window];
    assert.equal(res.status(), 200, `rates ${window}`);
    const rates = await res.json();
    await page.waitForFunction((w) => window.__rangeidCharts?.[w], window);
    const [times, ids] = await page.evaluate((w) => window.__rangeidCharts[w].data.map((a) => [...a]), window);

    const step = rates.bucketSeconds;
    const bucketIds = new Map(rates.buckets.map((b) => [Date.parse(b.minute) / 1000, Number(b.ids)]));
    assert.equal(times.length, ids.length);
    times.slice(1).forEach((t, i) => assert.equal(t - times[i], step, `${window}: even steps`));
    assert.ok(times[0] <= Date.parse(rates.from) / 1000 + step, `${window}: starts at from`);
    assert.ok(times.at(-1) >= Date.parse(rates.to) / 1000 - step, `${window}: ends at to`);
    times.forEach((t, i) => assert.equal(ids[i], bucketIds.get(t) ?? 0, `${window}: bucket at ${new Date(t * 1000).toISOString()}`));
    for (const t of bucketIds.keys()) assert.ok(times.includes(t), `${window}: bucket ${t} plotted`);
    // And the buckets account for exactly the grants taken.
    assert.equal(rates.buckets.reduce((sum, b) => sum + BigInt(b.ids), 0n), BigInt(grants.length * 2500));
    assert.equal(rates.buckets.reduce((sum, b) => sum + b.ranges, 0), grants.length);
  }
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("a lookup finds the grant a generator took, and says plainly when none is retained", async () => {
  const ns = uniqueNs("lookup");
  await createNamespace(stack, ns, { first: "9007199254740000", max: "18446744073709551615" });
  const [, grant] = await takeGrants(stack, ns, 3, 1000, "inc-lookup");
  const id = (BigInt(grant.start) + 998n).toString(); // past 2^53: exact only as a string
  const page = await newPage(stack);
  await signIn(stack, page, stack.admin, `#/ns/${ns}`);
  const result = page.getByTestId("lookup-result");

  await page.getByLabel("ID", { exact: true }).fill(id);
  await page.getByRole("button", { name: "Look up" }).click();
  await result.getByText(grant.requestId).waitFor();
  const text = await result.textContent();
  assert.ok(text.includes(id), text);
  assert.ok(text.includes(`${grant.start} – ${BigInt(grant.end) - 1n}`), text);
  assert.ok(text.includes("inc-lookup"), text);

  await page.getByLabel("ID", { exact: true }).fill("18446744073709551615");
  await page.getByRole("button", { name: "Look up" }).click();
  await result.getByText("has not been granted yet").waitFor();
  await page.getByLabel("ID", { exact: true }).fill("12");
  await page.getByRole("button", { name: "Look up" }).click();
  await result.getByText("below this namespace's first ID").waitFor();
  await page.getByLabel("ID", { exact: true }).fill("1e9");
  await page.getByRole("button", { name: "Look up" }).click();
  await page.getByText("Enter a whole number").waitFor();
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("through a relay: the Relays table shows what each relay holds and reported, and a lookup names the generator and its relay", async () => {
  const ns = uniqueNs("relayed");
  await createNamespace(stack, ns);
  const on = await stack.authority.req("POST", `/v1/namespaces/${ns}/relays`, { token: stack.admin, body: { relays: "on", reason: "page test" } });
  assert.equal(on.status, 200, on.text);
  const grant = (id) => stack.authority.req("POST", "/v1/ranges?region=r5", {
    token: stack.generator, body: { namespace: ns, incarnation: "inc-relayed", requestId: id, count: 7 },
  });
  // The first teaches the front that relays are on; the second is a relay's.
  assert.equal((await grant("r1")).status, 200);
  const g = (await grant("r2")).body;
  // Its report reaches the ledger within a couple of seconds, and the
  // registry the summary soon after.
  const deadline = Date.now() + 15_000;
  for (;;) {
    const s = await stack.authority.req("GET", `/v1/namespaces/${ns}`, { token: stack.admin });
    if (s.body.ledger?.relays?.[0]?.kept === 1) break;
    assert.ok(Date.now() < deadline, s.text);
    await new Promise((r) => setTimeout(r, 250));
  }
  const page = await newPage(stack);
  await signIn(stack, page, stack.admin, `#/ns/${ns}`);
  const table = page.getByRole("region", { name: "Relays" });
  await table.getByText("relay@r5").waitFor();
  const row = await table.locator("tbody tr").first().textContent();
  assert.match(row, /relay@r5/);

  await page.getByLabel("ID", { exact: true }).fill(g.start);
  await page.getByRole("button", { name: "Look up" }).click();
  const result = page.getByTestId("lookup-result");
  await result.getByText("Through relay").waitFor();
  const text = await result.textContent();
  assert.ok(text.includes("gen-7"), text);
  assert.ok(text.includes("relay@r5"), text);
  assert.ok(!text.includes("not reported"), text);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("recent grants list the newest first and page back with nextBefore", async () => {
  const ns = uniqueNs("grants");
  await createNamespace(stack, ns);
  const grants = await takeGrants(stack, ns, 30, 10);
  const page = await newPage(stack);
  await signIn(stack, page, stack.admin, `#/ns/${ns}`);
  const rows = page.locator("table.grants tbody tr");
  const firstCells = () => rows.locator("td:first-child").allTextContents();
  const range = (g) => `${g.start} – ${BigInt(g.end) - 1n}`;
  await rows.first().waitFor();
  const newest = [...grants].reverse();
  assert.deepEqual(await firstCells(), newest.slice(0, 25).map(range));
  await page.getByRole("button", { name: "Older →" }).click();
  await page.getByText("Page 2").waitFor();
  await page.waitForFunction(() => document.querySelectorAll("table.grants tbody tr").length === 5);
  assert.deepEqual(await firstCells(), newest.slice(25).map(range));
  assert.equal(await page.getByRole("button", { name: "Older →" }).isDisabled(), true);
  await page.getByRole("button", { name: "← Newer" }).click();
  await page.getByText("Page 1").waitFor();
  await page.waitForFunction(() => document.querySelectorAll("table.grants tbody tr").length === 25);
  await page.context().close();
});
