// rangeid/testing, the in-process authority users hand to createGenerator:
// its answers are the authority's (core's decisions and encoder), and each
// fault it injects reaches the generator as the real one would.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { createGenerator, RangeIdError } from "../src/node.mjs";
import { createTestAuthority } from "../src/testing.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const generator = (authority, options = {}) =>
  createGenerator({ url: authority.url, token: "test", namespace: "orders", fetch: authority.fetch, ...options });

async function post(authority, body, token = "test") {
  const r = await authority.fetch(authority.endpoint, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: r.status, retryAfter: r.headers.get("retry-after"), body: await r.json() };
}

const request = (over = {}) => ({ namespace: "orders", incarnation: "A9", requestId: "r1", count: 10, ...over });

test("its answers are the authority's: grants with capacity, replays, conflicts, strict bodies, refusals", async () => {
  const a = createTestAuthority({ namespaces: { orders: { first: "1001", max: "1100", maxCount: 50 } } });
  const g = await post(a, request());
  assert.equal(g.status, 200);
  assert.deepEqual(g.body, {
    namespace: "orders", incarnation: "A9", requestId: "r1", start: "1001", end: "1011", count: 10,
    replayed: false, maxCount: 50, remaining: "90",
  });
  const again = await post(a, request());
  assert.equal(again.body.replayed, true, "the same key is replayed");
  assert.equal(again.body.start, "1001");
  assert.equal((await post(a, request({ count: 11 }))).body.error.code, "request_conflict");
  // A request is (sub, incarnation, requestId): the same body under another
  // token is another request, with a range of its own.
  const other = await post(a, request(), "someone-else");
  assert.deepEqual([other.status, other.body.replayed, other.body.start], [200, false, "1011"], "a replay belongs to its token");
  const bad = await post(a, '{"namespace":"orders","incarnation":"A9","requestId":"r2","count":"10"}');
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.code, "invalid_request");
  assert.equal((await post(a, request({ requestId: "r3", count: 51 }))).body.error.maxCount, 50);
  const missing = await post(a, request({ namespace: "users" }));
  assert.deepEqual([missing.status, missing.body.error.code], [404, "namespace_not_found"]);
  const tooMany = await post(a, request({ requestId: "r4", count: 50 }), "test");
  assert.equal(tooMany.status, 200);
  const rest = await post(a, request({ requestId: "r5", count: 50 }));
  assert.deepEqual([rest.status, rest.body.error.code, rest.body.error.remaining], [409, "namespace_exhausted", "30"]);
  assert.equal(rest.body.error.message, "only 30 IDs remain in the namespace", "core's words");
  a.freeze("orders");
  assert.deepEqual([(await post(a, request({ requestId: "r6" }))).status], [423]);
  assert.equal((await post(a, request())).body.replayed, true, "a frozen namespace still replays");
  a.thaw("orders");
  a.floor("orders", 1090n);
  assert.equal(a.remaining("orders"), "11");
  assert.throws(() => a.floor("orders", 5), /floor_below_next/);
  assert.equal(a.grants.length, 3);
  assert.deepEqual(a.grants.map((x) => x.token).sort(), ["someone-else", "test", "test"]);
  const r = await a.fetch(`${a.url}/v1/namespaces`, { method: "GET" });
  assert.equal(r.status, 404);
  assert.equal((await a.fetch(a.endpoint, { method: "GET" })).status, 405);
  assert.throws(() => createTestAuthority({ first: "0" }), /invalid_config: first must be at least 1/);
  assert.throws(() => createTestAuthority({ namespaces: ["Orders"] }), /invalid_config/);
});

test("tokens: only those listed are accepted, as a generator meets a revoked one", async () => {
  const a = createTestAuthority({ tokens: ["good"] });
  await assert.rejects(generator(a, { token: "bad" }), (e) => e instanceof RangeIdError && e.code === "unauthenticated" && e.status === 401);
  const ids = await generator(a, { token: "good" });
  assert.ok(await ids.nextId());
  assert.equal(a.counts.unauthenticated, 2, "the first try and its fresh retry");
  ids.close();
});

test("unavailable: the generator retries and issues; for good, callers see unavailable with retryAfterMs", async () => {
  const a = createTestAuthority();
  a.unavailable({ times: 3, retryAfter: 0 });
  const ids = await generator(a, { rangeSize: 50 });
  const got = [];
  for (let i = 0; i < 120; i++) got.push(await ids.nextId());
  assert.equal(a.counts.unavailable, 3);
  a.check(got, "orders");
  a.unavailable();
  for (;;) {
    try {
      got.push(await ids.nextId());
    } catch (e) {
      assert.equal(e.code, "unavailable");
      assert.equal(e.status, 503);
      assert.equal(e.retryAfterMs, 1000, "the authority's Retry-After");
      break;
    }
  }
  a.heal();
  got.push(await ids.nextId());
  a.check(got);
  ids.close();
});

test("lost replies: committed, lost, and the retry's replay installs them once", async () => {
  const a = createTestAuthority();
  a.loseReplies({ times: 2 });
  const ids = await generator(a, { rangeSize: 20, deadlineMs: 3000 });
  const got = [];
  for (let i = 0; i < 100; i++) got.push(await ids.nextId());
  assert.equal(a.counts.lost, 2);
  assert.ok(ids.stats().replaysInstalled >= 1);
  assert.equal(a.check(got), 100);
  assert.equal(got[0], "1", "the lost range is the one issued");
  ids.close();
});

test("slow: answers take their time; a generator's timeout retries and an abort is honoured", async () => {
  const a = createTestAuthority().slow(150);
  const t = performance.now();
  const ids = await generator(a, { requestTimeoutMs: 100 });
  assert.ok(performance.now() - t >= 150);
  assert.ok(ids.stats().retries >= 1, "the 100 ms request timeout sent it again");
  const c = new AbortController();
  const pending = a.fetch(a.endpoint, { method: "POST", headers: { authorization: "Bearer x" }, body: "{}", signal: c.signal });
  c.abort();
  await assert.rejects(pending, (e) => e.name === "AbortError");
  a.slow(0);
  ids.close();
});

test("frozen and exhausted reach callers as the real authority's do", async () => {
  const a = createTestAuthority({ max: 30 });
  const ids = await generator(a, { rangeSize: 10, deadlineMs: 300, retryMaxMs: 50 });
  const got = await ids.nextIds(10);
  a.freeze();
  await assert.rejects(ids.nextId(), (e) => e.code === "frozen");
  a.thaw();
  got.push(...(await ids.nextIds(20)));
  await assert.rejects(ids.nextIds(1), (e) => e.code === "exhausted" && e.remaining === "0");
  a.check(got);
  ids.close();
  const b = createTestAuthority().exhaust();
  await assert.rejects(generator(b), (e) => e.code === "exhausted");
});

test("a proxy's page blocks a generator, which recovers by itself after heal()", async () => {
  const a = createTestAuthority();
  const ids = await generator(a, { rangeSize: 10, maxOutstanding: 1, retryMaxMs: 50 });
  a.proxyError();
  const got = [];
  let blocked;
  while (!blocked) {
    try {
      got.push(await ids.nextId());
    } catch (e) {
      blocked = e;
    }
  }
  assert.deepEqual([blocked.code, blocked.status, blocked.final], ["forbidden", 403, false]);
  assert.match(blocked.excerpt, /403 Forbidden/);
  a.heal();
  while (ids.stats().phase !== "running") await sleep(10);
  got.push(...(await ids.nextIds(15)));
  a.check(got);
  ids.close();
});

test("check() finds a duplicate and an ID never granted", async () => {
  const a = createTestAuthority();
  const ids = await generator(a, { rangeSize: 5 });
  const got = await ids.nextIds(5);
  assert.equal(a.check(got, "orders"), 5);
  assert.throws(() => a.check([...got, got[0]]), /issued twice/);
  assert.throws(() => a.check(["6"]), /never granted/);
  assert.throws(() => a.check(got, "users"), /never granted in users/);
  ids.close();
});

test("the CommonJS build is the same authority", async () => {
  const require = createRequire(import.meta.url);
  const { createTestAuthority: cjs } = require("../dist/testing.cjs");
  const a = cjs({ first: 7 });
  const ids = await generator(a);
  assert.equal(await ids.nextId(), "7");
  ids.close();
});
