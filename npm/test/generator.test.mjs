// Driver tests against a fake authority: the API contract, lost replies,
// exhaustion without wrapping, exact IDs past 2^53, errors and close.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createGenerator, RangeIdError } from "../src/node.mjs";
import { fakeAuthority } from "./fake-authority.mjs";

const base = { url: "https://authority.test", token: "t", namespace: "orders" };

test("issues strings, in order within a range, and never twice", async () => {
  const a = fakeAuthority({ first: 1001n });
  const ids = await createGenerator({ ...base, fetch: a.fetch, rangeSize: 100 });
  assert.equal(await ids.nextId(), "1001");
  assert.equal(ids.tryNextId(), "1002");
  const seen = new Set(["1001", "1002"]);
  for (let i = 0; i < 5000; i++) {
    const id = await ids.nextId();
    assert.equal(typeof id, "string");
    assert.ok(!seen.has(id), `duplicate ${id}`);
    seen.add(id);
  }
  assert.equal(typeof (await ids.nextIdBigInt()), "bigint");
  const s = ids.stats();
  assert.ok(s.rangesInstalled >= 50);
  assert.equal(s.issued, 5003);
  ids.close();
});

test("a batch is exactly n IDs, across ranges when it must", async () => {
  const a = fakeAuthority();
  const ids = await createGenerator({ ...base, fetch: a.fetch, rangeSize: 10, maxOutstanding: 1, prefetchLeadMs: 0 });
  const first = await ids.nextIds(4);
  assert.deepEqual(first, ["1", "2", "3", "4"]);
  const rest = await ids.nextIds(25);
  assert.equal(rest.length, 25);
  assert.deepEqual(rest.slice(0, 6), ["5", "6", "7", "8", "9", "10"], "the range's rest first");
  a.check([...first, ...rest], ids.incarnation);
  assert.ok(a.state.ledger.length >= 3, "from three ranges at least");
  // A caller's mistake: refused, and the generator goes on (final: false).
  for (const bad of [0, 1.5, "3", 2 ** 32]) {
    await assert.rejects(ids.nextIds(bad), (e) => e instanceof RangeIdError && e.code === "invalid_request" && e.final === false, String(bad));
  }
  await assert.rejects(ids.nextId("soon"), (e) => e.code === "invalid_request" && e.final === false);
  assert.equal(typeof (await ids.nextId()), "string", "still issuing");
  ids.close();
});

test("a lost reply is retried with the same requestId and installed once", async () => {
  const a = fakeAuthority();
  const sent = [];
  let lose = 1;
  const lossy = async (url, init) => {
    sent.push(JSON.parse(init.body).requestId);
    const response = await a.fetch(url, init);
    if (lose-- > 0) throw new TypeError("connection reset after commit");
    return response;
  };
  const ids = await createGenerator({ ...base, fetch: lossy, rangeSize: 50, deadlineMs: 3000 });
  assert.deepEqual(sent.slice(0, 2), ["r1", "r1"], "retried under the same id");
  assert.equal(await ids.nextId(), "1", "the saved range, from its start");
  assert.equal(ids.stats().replaysInstalled, 1);
  assert.equal(sent.filter((r) => r === "r1").length, 2);
  assert.equal(a.state.grants.size, new Set(sent).size, "one range per request id: the retry cost nothing");
  ids.close();
});

test("a duplicated reply never resets the cursor", async () => {
  const a = fakeAuthority();
  let calls = 0;
  let lateArrived;
  const late = new Promise((r) => (lateArrived = r));
  // The first reply is slow and ignores the abort, so it arrives after the
  // retry's replay was installed and IDs were issued from it.
  const slow = async (url, init) => {
    const response = await a.fetch(url, { ...init, signal: undefined });
    if (calls++ === 0) {
      await new Promise((r) => setTimeout(r, 150));
      setTimeout(lateArrived, 0);
    }
    return response;
  };
  const ids = await createGenerator({ ...base, fetch: slow, rangeSize: 10, maxOutstanding: 1, requestTimeoutMs: 30 });
  const got = [await ids.nextId(), await ids.nextId(), await ids.nextId()];
  assert.deepEqual(got, ["1", "2", "3"]);
  await late;
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(ids.stats().duplicatesIgnored, 1, "the late first reply was seen and ignored");
  assert.equal(ids.stats().replaysInstalled, 1);
  // Past the end of that range and into the next: a reset cursor would
  // hand out 1..10 again.
  const more = [];
  for (let i = 0; i < 20; i++) more.push(await ids.nextId());
  assert.equal(more[0], "4");
  assert.equal(new Set([...got, ...more]).size, 23, "no ID issued twice");
  ids.close();
});

test("IDs above 2^53 arrive exact", async () => {
  const top = 2n ** 64n - 1n;
  const a = fakeAuthority({ first: 2n ** 53n - 3n, max: top, maxCount: 100 });
  const ids = await createGenerator({ ...base, fetch: a.fetch, rangeSize: 5 });
  const got = [];
  for (let i = 0; i < 8; i++) got.push(await ids.nextId());
  assert.deepEqual(got.slice(0, 5), ["9007199254740989", "9007199254740990", "9007199254740991", "9007199254740992", "9007199254740993"]);
  assert.equal(BigInt(got[7]), 2n ** 53n + 4n);
  ids.close();
});

test("exhaustion rejects with exhausted, never a wrapped value", async () => {
  const top = 2n ** 64n - 1n;
  const a = fakeAuthority({ first: top - 6n, max: top });
  const ids = await createGenerator({ ...base, fetch: a.fetch, rangeSize: 4, deadlineMs: 2000 });
  const got = [];
  for (;;) {
    try {
      got.push(await ids.nextId());
    } catch (e) {
      assert.ok(e instanceof RangeIdError);
      assert.equal(e.code, "exhausted");
      break;
    }
  }
  assert.deepEqual(got.map(BigInt), [0n, 1n, 2n, 3n, 4n, 5n, 6n].map((d) => top - 6n + d));
  assert.equal(ids.tryNextId(), undefined);
});

test("bad credentials and unknown namespaces reject at creation", async () => {
  const a = fakeAuthority();
  // Creation closes the generator it waited for: no promise of a retry.
  await assert.rejects(
    createGenerator({ ...base, token: "wrong", fetch: a.fetch }),
    (e) => e.code === "unauthenticated" && /nothing asks again/.test(e.message) && !/asks again by itself|fresh token/.test(e.message),
  );
  await assert.rejects(createGenerator({ ...base, namespace: "users", fetch: a.fetch }), (e) => e.code === "namespace_not_found");
  // A running generator asks again; a fixed token string cannot be
  // refreshed, so the message must not promise a fresh one.
  const rotating = fakeAuthority({ tokens: ["t"] });
  const ids = await createGenerator({ ...base, fetch: rotating.fetch, rangeSize: 5, maxOutstanding: 1, retryMaxMs: 50 });
  rotating.state.tokens = new Set(["other"]);
  let e;
  for (let i = 0; i < 50 && !e; i++) await ids.nextId().catch((x) => { e = x; });
  assert.equal(e?.code, "unauthenticated");
  assert.match(e.message, /asks again by itself with the same token \(it is a fixed string/);
  assert.doesNotMatch(e.message, /fresh token/);
  ids.close();
});

test("bad options are invalid_config and send nothing", async () => {
  const a = fakeAuthority();
  for (const bad of [
    { ...base, url: "not a url" }, { ...base, token: "" }, { ...base, namespace: "Orders" },
    { ...base, rangeSize: 0 }, { ...base, rangeSize: 1.5 }, { ...base, maxOutstanding: 9 },
    { ...base, deadlineMs: -1 }, { ...base, colour: "red" }, { ...base, fetch: 42 },
  ]) {
    await assert.rejects(createGenerator({ fetch: a.fetch, ...bad }), (e) => e instanceof RangeIdError && e.code === "invalid_config", JSON.stringify(bad));
  }
  assert.equal(a.state.calls, 0);
});

test("region: sent as ?region= on every range request; a bad one is invalid_config and sends nothing", async () => {
  const a = fakeAuthority();
  for (const region of ["", "WEUR", "eu_west", "eu west", "a/b", "é", "a".repeat(33), "weur\n", 7, null, ["weur"]]) {
    await assert.rejects(
      createGenerator({ ...base, fetch: a.fetch, region }),
      (e) => e instanceof RangeIdError && e.code === "invalid_config" && /^region must be 1 to 32 characters of a-z, 0-9 and -/.test(e.message),
      JSON.stringify(region),
    );
  }
  assert.equal(a.state.calls, 0, "nothing was sent");

  const ids = await createGenerator({ ...base, url: "https://authority.test/base", fetch: a.fetch, region: "weur", rangeSize: 10, maxOutstanding: 1 });
  for (let i = 0; i < 25; i++) await ids.nextId();
  assert.ok(a.state.urls.length >= 3);
  for (const url of a.state.urls) assert.equal(url, "https://authority.test/base/v1/ranges?region=weur");
  ids.close();

  // The longest and every kind of character the rule allows; none: no query.
  a.state.urls.length = 0;
  const long = await createGenerator({ ...base, fetch: a.fetch, region: "a-0".repeat(10) + "z9" });
  assert.equal(a.state.urls[0], `https://authority.test/v1/ranges?region=${"a-0".repeat(10)}z9`);
  long.close();
  a.state.urls.length = 0;
  const plain = await createGenerator({ ...base, fetch: a.fetch, region: undefined });
  assert.equal(a.state.urls[0], "https://authority.test/v1/ranges");
  plain.close();
});

test("an unreachable authority rejects with unavailable at the deadline", async () => {
  const down = async () => { throw new TypeError("ECONNREFUSED"); };
  const t = performance.now();
  await assert.rejects(createGenerator({ ...base, fetch: down, deadlineMs: 300 }), (e) => e.code === "unavailable");
  assert.ok(performance.now() - t >= 290);
});

test("a frozen namespace rejects with frozen at the deadline, then thaws", async () => {
  const a = fakeAuthority();
  a.state.frozen = true;
  await assert.rejects(createGenerator({ ...base, fetch: a.fetch, deadlineMs: 300 }), (e) => e.code === "frozen");
  a.state.frozen = false;
  const ids = await createGenerator({ ...base, fetch: a.fetch, deadlineMs: 3000 });
  assert.ok(await ids.nextId());
  ids.close();
});

test("close abandons the tail, counts it and rejects later calls", async () => {
  const a = fakeAuthority();
  const ids = await createGenerator({ ...base, fetch: a.fetch, rangeSize: 100, maxOutstanding: 1 });
  await ids.nextId();
  const abandoned = ids.close();
  assert.equal(abandoned, "99");
  assert.equal(ids.close(), "0");
  await assert.rejects(ids.nextId(), (e) => e.code === "closed");
  assert.equal(ids.tryNextId(), undefined);
  assert.equal(ids.stats().abandoned, "99", "the local block counts as abandoned too");
});

/** A fetch that never answers (until aborted), counting its calls. */
function silent() {
  const f = (url, init) => {
    f.calls++;
    return new Promise((_, reject) => init.signal?.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")), { once: true }));
  };
  f.calls = 0;
  return f;
}

test("an AbortSignal ends the waits of nextId, nextIds, nextIdBigInt, settled and createGenerator", async () => {
  const a = fakeAuthority();
  let hold = false;
  const hung = silent();
  const fetch = (url, init) => (hold ? hung(url, init) : a.fetch(url, init));
  const ids = await createGenerator({ ...base, fetch, rangeSize: 5, maxOutstanding: 1, deadlineMs: 10_000, requestTimeoutMs: 300 });
  const first = await ids.nextIds(5);
  hold = true;
  for (const call of [(o) => ids.nextId(o), (o) => ids.nextIds(3, o), (o) => ids.nextIdBigInt(o), (o) => ids.settled(o)]) {
    const c = new AbortController();
    const t = performance.now();
    const p = call({ signal: c.signal });
    setTimeout(() => c.abort(new Error("user went away")), 30);
    await assert.rejects(p, (e) => {
      assert.ok(e instanceof RangeIdError);
      assert.equal(e.code, "aborted");
      assert.equal(e.cause.message, "user went away");
      assert.match(e.message, /aborted \(Error: user went away\)/);
      return true;
    });
    assert.ok(performance.now() - t < 1000, "not at the 10 s deadline");
  }
  // AbortSignal.timeout's reason is a TimeoutError.
  await assert.rejects(ids.nextId({ signal: AbortSignal.timeout(20) }), (e) => e.code === "aborted" && e.cause.name === "TimeoutError");
  // An aborted signal rejects even when an ID is on hand, and takes none.
  hold = false;
  const got = await ids.nextIds(3);
  await assert.rejects(ids.nextId({ signal: AbortSignal.abort() }), (e) => e.code === "aborted");
  await assert.rejects(ids.nextIds(1, { signal: AbortSignal.abort() }), (e) => e.code === "aborted");
  const next = await ids.nextIds(2);
  a.check([...first, ...got, ...next], ids.incarnation);
  assert.equal(BigInt(next[0]), BigInt(got[2]) + 1n, "the aborted calls took nothing");
  await assert.rejects(ids.nextId({ signal: "soon" }), (e) => e.code === "invalid_request");
  await assert.rejects(ids.nextIds(1, null), (e) => e.code === "invalid_request");
  ids.close();

  // createGenerator: an abort during the wait for the first range closes it.
  const slow = silent();
  const c = new AbortController();
  const creating = createGenerator({ ...base, fetch: slow, signal: c.signal, deadlineMs: 10_000 });
  setTimeout(() => c.abort(), 30);
  await assert.rejects(creating, (e) => e.code === "aborted");
  const calls = slow.calls;
  await sleep(100);
  assert.equal(slow.calls, calls, "closed: nothing more is sent");
  const never = silent();
  await assert.rejects(createGenerator({ ...base, fetch: never, signal: AbortSignal.abort() }), (e) => e.code === "aborted");
  await sleep(20);
  assert.equal(never.calls, 0, "an aborted signal sends nothing");
  await assert.rejects(createGenerator({ ...base, fetch: a.fetch, signal: {} }), (e) => e.code === "invalid_config");
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test("await using closes a generator at the end of its scope; using does too", async () => {
  const a = fakeAuthority();
  let kept;
  {
    await using ids = await createGenerator({ ...base, fetch: a.fetch, rangeSize: 100 });
    kept = ids;
    assert.equal(await ids.nextId(), "1");
  }
  assert.equal(kept.stats().phase, "closed");
  assert.equal(kept.stats().abandoned, "99");
  await assert.rejects(kept.nextId(), (e) => e.code === "closed" && e.final === true);
  {
    using ids = await createGenerator({ ...base, fetch: a.fetch, rangeSize: 10 });
    kept = ids;
    await ids.nextId();
  }
  assert.equal(kept.stats().phase, "closed");
  const calls = a.state.calls;
  await sleep(50);
  assert.equal(a.state.calls, calls, "nothing is sent after it");
});

test("settled() with an aborted signal rejects, also with nothing in flight, and leaves no rejection unhandled", async () => {
  const a = fakeAuthority();
  const ids = await createGenerator({ ...base, fetch: a.fetch });
  await ids.settled();
  const unhandled = [];
  const onUnhandled = (e) => unhandled.push(e);
  process.on("unhandledRejection", onUnhandled);
  try {
    await assert.rejects(ids.settled({ signal: AbortSignal.abort() }), (e) => e.code === "aborted");
    const c = new AbortController();
    await ids.settled({ signal: c.signal });
    c.abort();
    await sleep(20);
    assert.deepEqual(unhandled, []);
  } finally {
    process.off("unhandledRejection", onUnhandled);
  }
  ids.close();
});
