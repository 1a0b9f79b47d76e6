// Admin actions through the page, each confirmed and answered with the
// audit entry it wrote; and a reader, who sees none of them.
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

const grant = (ns, requestId) =>
  stack.authority.req("POST", "/v1/ranges", {
    token: stack.generator,
    body: { namespace: ns, incarnation: "inc-admin", requestId, count: 10 },
  });

async function confirm(page, label) {
  const dialog = page.getByRole("dialog");
  await dialog.waitFor();
  await dialog.getByRole("button", { name: label }).click();
  await dialog.waitFor({ state: "hidden" });
}

test("freezing through the page makes grants answer 423; unfreezing restores them", async () => {
  const ns = uniqueNs("freeze");
  await createNamespace(stack, ns);
  const page = await newPage(stack);
  await signIn(stack, page, stack.admin, `#/ns/${ns}`);
  assert.equal((await grant(ns, "before-freeze")).status, 200);

  await page.getByLabel("Reason").fill("incident 42: duplicate keys downstream");
  await page.getByRole("button", { name: "Freeze…" }).click();
  await confirm(page, "Freeze");
  const receipt = page.getByTestId("audit-receipt");
  await receipt.waitFor();
  assert.match(await receipt.textContent(), /freeze by ops@example/);
  assert.match(await receipt.textContent(), /incident 42: duplicate keys downstream/);
  await page.getByTestId("state").getByText("frozen").waitFor();
  const refused = await grant(ns, "while-frozen");
  assert.equal(refused.status, 423);
  assert.equal(refused.body.error.code, "namespace_frozen");

  await page.getByLabel("Reason").fill("incident 42 resolved");
  await page.getByRole("button", { name: "Unfreeze…" }).click();
  await confirm(page, "Unfreeze");
  await page.getByTestId("state").getByText("active").waitFor();
  assert.match(await page.getByTestId("audit-receipt").textContent(), /unfreeze by ops@example/);
  assert.equal((await grant(ns, "after-unfreeze")).status, 200);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("raising the floor shows the current next, asks first, and appears in the audit log", async () => {
  const ns = uniqueNs("floor");
  await createNamespace(stack, ns);
  await takeGrants(stack, ns, 1, 100);
  const page = await newPage(stack);
  await signIn(stack, page, stack.admin, `#/ns/${ns}`);
  assert.equal(await page.getByTestId("floor-next").textContent(), "101");

  await page.getByLabel("New next ID").fill("50");
  await page.getByRole("button", { name: "Raise floor…" }).click();
  await page.getByText("Above the current next ID, 101").waitFor();

  await page.getByLabel("New next ID").fill("5000");
  await page.getByRole("button", { name: "Raise floor…" }).click();
  await page.getByRole("dialog").getByText("4,899 IDs are skipped").waitFor();
  await page.getByRole("dialog").getByRole("button", { name: "Cancel" }).click();
  assert.equal((await stack.authority.req("GET", `/v1/namespaces/${ns}`, { token: stack.admin })).body.next, "101");

  await page.getByRole("button", { name: "Raise floor…" }).click();
  await confirm(page, "Raise floor");
  await page.getByTestId("audit-receipt").getByText("next: 101 → 5000").waitFor();
  await page.getByTestId("floor-next").getByText("5000").waitFor();
  const audit = (await stack.authority.req("GET", `/v1/namespaces/${ns}/audit`, { token: stack.admin })).body.audit;
  assert.equal(audit[0].action, "floor");
  const row = page.locator(`tr[data-audit-id="${audit[0].id}"]`);
  await row.waitFor();
  assert.match(await row.textContent(), /floor/);
  assert.match(await row.textContent(), /101 → 5000/);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("setting limits checks the form, asks first, appears in the audit log and refuses a grant past them", async () => {
  const ns = uniqueNs("limits");
  await createNamespace(stack, ns);
  const page = await newPage(stack);
  await signIn(stack, page, stack.admin, `#/ns/${ns}`);
  assert.equal(await page.getByTestId("limit-rate").textContent(), "5,000");
  assert.equal(await page.getByLabel("New grants per second, per sub").inputValue(), "5000");

  await page.getByLabel("Ledger rows per sub").fill("40000000");
  await page.getByRole("button", { name: "Set limits…" }).click();
  await page.getByText("At most the ledger's rows.").waitFor();

  await page.getByLabel("Ledger rows per sub").fill("8000000");
  await page.getByLabel("New grants per second, per sub").fill("1");
  await page.getByRole("button", { name: "Set limits…" }).click();
  await confirm(page, "Set limits");
  await page.getByTestId("audit-receipt").getByText("grantsPerSecond: 5000 → 1").waitFor();
  await page.getByTestId("limit-rate").getByText("1", { exact: true }).waitFor();
  const audit = (await stack.authority.req("GET", `/v1/namespaces/${ns}/audit`, { token: stack.admin })).body.audit;
  assert.equal(audit[0].action, "limits");
  assert.equal((await grant(ns, "first")).status, 200);
  const limited = await grant(ns, "second");
  assert.deepEqual([limited.status, limited.body.error.code], [429, "rate_limited"]);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("creating a namespace checks the form, warns past 2^53 - 1, and shows the audit entry", async () => {
  const ns = uniqueNs("created");
  const page = await newPage(stack);
  await signIn(stack, page, stack.admin);
  await page.getByText("New namespace").click();
  assert.equal(await page.getByLabel("First ID").inputValue(), "1");
  assert.equal(await page.getByLabel("Max ID (inclusive)").inputValue(), "9007199254740991");
  assert.equal(await page.getByLabel("Largest request (IDs)").inputValue(), "10000000");

  await page.getByLabel("Name", { exact: true }).fill("Not A Name");
  await page.getByLabel("Largest request (IDs)").fill("9007199254740992");
  await page.getByRole("button", { name: "Create…" }).click();
  assert.equal(await page.getByLabel("Name", { exact: true }).getAttribute("aria-invalid"), "true");
  assert.equal(await page.getByLabel("Largest request (IDs)").getAttribute("aria-invalid"), "true");
  assert.equal(await page.getByRole("dialog").count(), 0, "nothing to confirm while the form is wrong");

  await page.getByLabel("Name", { exact: true }).fill(ns);
  await page.getByLabel("Largest request (IDs)").fill("5000");
  await page.getByLabel("Max ID (inclusive)").fill("18446744073709551615");
  await page.getByText("not exact as JavaScript numbers").waitFor();
  await page.getByRole("button", { name: "Create…" }).click();
  await confirm(page, "Create namespace");
  await page.getByTestId("audit-receipt").getByText("create by ops@example").waitFor();
  const s = (await stack.authority.req("GET", `/v1/namespaces/${ns}`, { token: stack.admin })).body;
  assert.equal(s.max, "18446744073709551615");
  assert.equal(s.maxCount, 5000);
  await page.locator(`tr[data-namespace="${ns}"]`).waitFor();

  // The same name with another configuration is refused (the same one
  // would be answered as already done).
  await page.getByLabel("Name", { exact: true }).fill(ns);
  await page.getByLabel("Largest request (IDs)").fill("5001");
  await page.getByRole("button", { name: "Create…" }).click();
  await confirm(page, "Create namespace");
  await page.getByRole("alert").getByText("Refused:").waitFor();
  await page.context().close();
});

test("a reader sees no admin controls, and a direct admin call with its token gets 403", async () => {
  const ns = uniqueNs("reader");
  await createNamespace(stack, ns);
  const reader = stack.authority.token("reader", [ns], { sub: "watcher" });
  const page = await newPage(stack);
  await signIn(stack, page, reader);
  assert.equal(await page.getByTestId("session-role").textContent(), "reader");
  assert.equal(await page.getByTestId("session-ns").textContent(), ns);
  await page.locator(`tr[data-namespace="${ns}"]`).waitFor();
  assert.equal(await page.getByText("New namespace").count(), 0);

  await page.getByRole("link", { name: ns }).click();
  await page.getByRole("heading", { name: "Recent grants" }).waitFor();
  for (const name of [/Freeze/, /Unfreeze/, /Raise floor/, /Set limits/, /Create/]) {
    assert.equal(await page.getByRole("button", { name }).count(), 0, `no ${name} button`);
  }
  assert.equal(await page.getByRole("heading", { name: "Admin actions" }).count(), 0);
  assert.equal(await page.getByRole("heading", { name: "Audit log" }).count(), 0);
  assert.equal(await page.locator("textarea, dialog").count(), 0);

  for (const [path, body] of [
    [`/v1/namespaces/${ns}/freeze`, { reason: "reader tries" }],
    [`/v1/namespaces/${ns}/floor`, { floor: "100" }],
    [`/v1/namespaces/${ns}/limits`, { grantsPerSecond: 1 }],
    ["/v1/namespaces", { namespace: uniqueNs("reader-made") }],
  ]) {
    const r = await stack.authority.req("POST", path, { token: reader, body });
    assert.equal(r.status, 403, path);
    assert.equal(r.body.error.code, "forbidden");
  }
  assert.equal((await stack.authority.req("GET", `/v1/namespaces/${ns}/audit`, { token: reader })).status, 403);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});
