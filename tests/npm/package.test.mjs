// The packed npm package, installed as a user would, used from ESM and
// CommonJS against the real local authority on workerd.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { Authority, uniqueNs } from "../authority/harness.mjs";
import { createNamespace, installPacked } from "./harness.mjs";

let authority;
let pkg;
let admin;

before(async () => {
  pkg = installPacked();
  authority = await new Authority().start();
  admin = authority.token("admin", ["*"]);
});

after(async () => {
  await authority?.stop();
  authority?.cleanup();
});

const options = (namespace, extra = {}) => ({
  url: authority.base,
  token: authority.token("generator", [namespace]),
  namespace,
  ...extra,
});

test("8 generators issue 1,000,000 IDs together with no duplicate (ESM)", async () => {
  const { createGenerator } = await pkg.esm();
  const ns = uniqueNs("million");
  await createNamespace(authority, admin, ns);
  const gens = await Promise.all(Array.from({ length: 8 }, () => createGenerator(options(ns))));
  const seen = new Set();
  const per = 125_000;
  await Promise.all(gens.map(async (g) => {
    for (let i = 0; i < per; i++) {
      const id = g.tryNextId() ?? (await g.nextId());
      assert.equal(typeof id, "string");
      seen.add(id);
    }
  }));
  assert.equal(seen.size, 8 * per, "no ID was issued twice");
  const incarnations = new Set(gens.map((g) => g.incarnation));
  assert.equal(incarnations.size, 8);
  for (const g of gens) g.close();
});

test("a lost reply is retried and the same range installed once", async () => {
  const { createGenerator } = await pkg.esm();
  const ns = uniqueNs("lost");
  await createNamespace(authority, admin, ns);
  let lost = 0;
  const sent = [];
  // Sends the request to the real authority, then throws the reply away.
  const lossy = async (url, init) => {
    sent.push(JSON.parse(init.body).requestId);
    const response = await fetch(url, init);
    if (lost++ === 0) {
      await response.arrayBuffer();
      throw new TypeError("reply lost after the commit");
    }
    return response;
  };
  const g = await createGenerator(options(ns, { fetch: lossy, rangeSize: 100, maxOutstanding: 1 }));
  assert.deepEqual(sent.slice(0, 2), ["r1", "r1"], "retried under the same requestId");
  const first = await g.nextId();
  const grants = await authority.req("GET", `/v1/namespaces/${ns}/grants?limit=50`, { token: admin });
  assert.equal(grants.status, 200);
  const mine = grants.body.grants.filter((x) => x.incarnation === g.incarnation && x.requestId === "r1");
  assert.equal(mine.length, 1, "the authority committed one range for r1");
  assert.equal(first, mine[0].start, "and the generator issues from its start");
  const s = g.stats();
  assert.equal(s.replaysInstalled, 1);
  assert.equal(s.rangesInstalled >= 1, true);
  g.close();
});

test("a restarted generator gets a new incarnation and overlaps nothing issued before", async () => {
  const { createGenerator } = await pkg.esm();
  const ns = uniqueNs("restart");
  await createNamespace(authority, admin, ns);
  const before = await createGenerator(options(ns, { rangeSize: 1000 }));
  const issued = new Set();
  for (let i = 0; i < 1500; i++) issued.add(await before.nextId());
  const abandoned = BigInt(before.close());
  assert.ok(abandoned > 0n, "the unused tail is abandoned and counted");
  const again = await createGenerator(options(ns, { rangeSize: 1000 }));
  assert.notEqual(again.incarnation, before.incarnation);
  const max = [...issued].map(BigInt).reduce((a, b) => (a > b ? a : b));
  for (let i = 0; i < 3000; i++) {
    const id = await again.nextId();
    assert.ok(!issued.has(id), `re-issued ${id}`);
    assert.ok(BigInt(id) > max, "the new range starts past everything granted before");
  }
  again.close();
});

/** Every ID `g` issues until it rejects; the IDs and the rejection. */
async function drain(g) {
  const got = [];
  for (;;) {
    try {
      got.push(await g.nextId());
    } catch (error) {
      return { got, error };
    }
  }
}

test("an exhausted namespace rejects with exhausted, never a wrapped value", async () => {
  const { createGenerator, RangeIdError } = await pkg.esm();
  const ns = uniqueNs("full");
  await createNamespace(authority, admin, ns, { first: "1", max: "2500" });
  const g = await createGenerator(options(ns, { rangeSize: 1000, deadlineMs: 3000 }));
  const { got, error } = await drain(g);
  assert.ok(error instanceof RangeIdError);
  assert.equal(error.code, "exhausted");
  // Ranges may install in any order; together they are exactly 1..=2500.
  const sorted = got.map(BigInt).sort((a, b) => (a < b ? -1 : 1));
  assert.deepEqual(sorted, Array.from({ length: 2500 }, (_, i) => BigInt(i + 1)));
});

test("default options on a namespace whose maxCount is below the first range: every ID, then exhausted with 0 left", async () => {
  const { createGenerator, RangeIdError } = await pkg.esm();
  const ns = uniqueNs("small");
  // maxCount 100 < the default minRangeSize (1,000), which the generator
  // cannot know before the authority tells it; max 3000 is reached exactly.
  await createNamespace(authority, admin, ns, { first: "1", max: "3000", maxCount: 100 });
  const g = await createGenerator(options(ns, { deadlineMs: 5000 }));
  assert.equal(g.stats().starved, 0, "waiting for the first range is not a starved call");
  const { got, error } = await drain(g);
  assert.ok(error instanceof RangeIdError, String(error));
  assert.equal(error.code, "exhausted", error.message);
  assert.equal(error.remaining, "0", error.message);
  assert.match(error.message, new RegExp(`${ns} is exhausted \\(0 IDs left\\)`));
  const sorted = got.map(BigInt).sort((a, b) => (a < b ? -1 : 1));
  assert.deepEqual(sorted, Array.from({ length: 3000 }, (_, i) => BigInt(i + 1)));
  assert.equal(g.stats().reserved, "3000");

  // Three IDs in all: the first request is refused with 3 remaining, the
  // grant of those 3 says 0 remain, and the engine stops without asking
  // again; the error still says how many are left.
  const tiny = uniqueNs("tiny");
  await createNamespace(authority, admin, tiny, { first: "10", max: "12" });
  const t = await createGenerator(options(tiny, { deadlineMs: 5000 }));
  const ids = [await t.nextId(), await t.nextId(), await t.nextId()];
  assert.deepEqual(ids.sort(), ["10", "11", "12"]);
  const last = await t.nextId().then(() => undefined, (e) => e);
  assert.equal(last?.code, "exhausted", String(last));
  assert.equal(last.remaining, "0", last.message);
});

test("at the top of u64: exact IDs up to 2^64-1, then exhausted", async () => {
  const { createGenerator } = await pkg.esm();
  const ns = uniqueNs("top");
  const top = 2n ** 64n - 1n;
  await createNamespace(authority, admin, ns, { first: (top - 2999n).toString(), max: top.toString() });
  const g = await createGenerator(options(ns, { rangeSize: 1000, deadlineMs: 3000 }));
  const got = [];
  await assert.rejects(async () => {
    for (;;) got.push(await g.nextId());
  }, (e) => e.code === "exhausted");
  const sorted = got.map(BigInt).sort((a, b) => (a < b ? -1 : 1));
  assert.deepEqual(sorted, Array.from({ length: 3000 }, (_, i) => top - 2999n + BigInt(i)));
  assert.ok(got.includes("18446744073709551615"), "the very last ID, exact");
});

test("IDs above 2^53 arrive exact", async () => {
  const { createGenerator } = await pkg.esm();
  const ns = uniqueNs("big");
  await createNamespace(authority, admin, ns, { first: (2n ** 53n - 5n).toString(), max: (2n ** 64n - 1n).toString() });
  const g = await createGenerator(options(ns, { rangeSize: 10 }));
  const got = [];
  for (let i = 0; i < 10; i++) got.push(await g.nextId());
  assert.deepEqual(got.map(BigInt), Array.from({ length: 10 }, (_, i) => 2n ** 53n - 5n + BigInt(i)));
  assert.equal(got[5], "9007199254740992");
  assert.equal(await g.nextIdBigInt() > 2n ** 53n, true);
  g.close();
});

test("CommonJS: require('rangeid') issues IDs and maps errors", async () => {
  const { createGenerator, RangeIdError } = pkg.cjs();
  const ns = uniqueNs("cjs");
  await createNamespace(authority, admin, ns);
  const g = await createGenerator(options(ns));
  const a = await g.nextId();
  const b = g.tryNextId();
  assert.equal(BigInt(b), BigInt(a) + 1n);
  assert.equal((await g.nextIds(3)).length, 3);
  g.close();
  await assert.rejects(
    createGenerator({ ...options(ns), token: authority.token("reader", [ns]) }),
    (e) => e instanceof RangeIdError && e.code === "forbidden",
  );
  await assert.rejects(
    createGenerator({ ...options("nope-" + ns), token: authority.token("generator", ["*"]) }),
    (e) => e instanceof RangeIdError && e.code === "namespace_not_found",
  );
  await assert.rejects(
    createGenerator({ ...options(ns), token: "not-a-token" }),
    (e) => e instanceof RangeIdError && e.code === "unauthenticated",
  );
  // An app that loads both builds gets one error class either way.
  const esm = await pkg.esm();
  assert.notEqual(esm.RangeIdError, RangeIdError, "two copies of the class");
  const fromCjs = await createGenerator({ ...options(ns), token: "not-a-token" }).catch((e) => e);
  assert.ok(fromCjs instanceof esm.RangeIdError, "a CommonJS error is an ESM RangeIdError");
  const fromEsm = await esm.createGenerator({ ...options(ns), token: "not-a-token" }).catch((e) => e);
  assert.ok(fromEsm instanceof RangeIdError, "and the other way round");
  assert.ok(!(new Error("x") instanceof RangeIdError), "other errors are not");
});
