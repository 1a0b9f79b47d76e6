// The driver under the transport faults of the fault catalogue, against the
// fake authority: every ID is checked against the ledger of granted ranges,
// and no fault may cause a duplicate.
import { test } from "node:test";
import { createServer } from "node:net";
import assert from "node:assert/strict";
import { createGenerator, RangeIdError } from "../src/node.mjs";
import { fakeAuthority } from "./fake-authority.mjs";

const base = { url: "https://authority.test", token: "t", namespace: "orders" };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * A fetch whose request reaches the authority at once (and commits) but
 * whose answer takes `ms`, honouring `signal` unless told not to.
 */
function delayed(a, ms, { honourAbort = true } = {}) {
  return (url, init) => new Promise((resolve, reject) => {
    const answer = a.fetch(url, init);
    const t = setTimeout(() => resolve(answer), ms);
    if (honourAbort) {
      init.signal?.addEventListener("abort", () => {
        clearTimeout(t);
        reject(new DOMException("aborted", "AbortError"));
      }, { once: true });
    }
  });
}

test("a fetch that throws synchronously (Defect 1): 4,000 concurrent nextId, no duplicate", async () => {
  const a = fakeAuthority();
  let calls = 0;
  const throwing = (url, init) => {
    if (++calls === 2) throw new TypeError("synchronous failure");
    return a.fetch(url, init);
  };
  const ids = await createGenerator({ ...base, fetch: throwing, rangeSize: 1500 });
  const got = await Promise.all(Array.from({ length: 4000 }, () => ids.nextId()));
  a.check(got, ids.incarnation);
  assert.ok(calls >= 3, "the throw was met and retried");
  ids.close();
});

test("a fetch that re-enters the generator from inside fetch: no duplicate", async () => {
  const a = fakeAuthority();
  let ids;
  const taken = [];
  const reentrant = (url, init) => {
    // A user's fetch wrapper that itself takes IDs (for tracing, say), at
    // once or by waiting.
    if (ids) {
      const id = ids.tryNextId();
      if (id !== undefined) taken.push(Promise.resolve(id));
      taken.push(ids.nextId());
    }
    return a.fetch(url, init);
  };
  ids = await createGenerator({ ...base, fetch: reentrant, rangeSize: 700 });
  const got = await Promise.all(Array.from({ length: 5000 }, () => ids.nextId()));
  assert.ok(taken.length > 0, "fetch did re-enter");
  a.check([...got, ...(await Promise.all(taken))], ids.incarnation);
  ids.close();
});

/**
 * A transport whose first attempt misbehaves as `first(init)` says, while
 * every later attempt reaches the authority at once and answers after
 * `ms`: slower than the first backoffs, inside the request timeout. A
 * driver that lets the first attempt's trouble reschedule the retry in
 * flight sends again and again; a correct one sends twice.
 */
function troubledFirst(a, first, ms = 250) {
  const sends = [];
  const fetch = (url, init) => {
    sends.push(performance.now());
    return sends.length === 1 ? first(init) : delayed(a, ms)(url, init);
  };
  return { fetch, sends };
}

const rejectOnAbort = (init) => new Promise((_, reject) => {
  init.signal.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")), { once: true });
});

test("a fetch that rejects (late, after its retry went out): two sends, no duplicate", async () => {
  const a = fakeAuthority();
  const t = troubledFirst(a, () => sleep(600).then(() => Promise.reject(new TypeError("connection reset"))));
  const ids = await createGenerator({ ...base, fetch: t.fetch, requestTimeoutMs: 500 });
  await sleep(400);
  assert.equal(t.sends.length, 2, `${t.sends.length} sends`);
  const got = await Promise.all(Array.from({ length: 1500 }, () => ids.nextId()));
  a.check(got, ids.incarnation);
  ids.close();
});

test("a fetch that rejects every other call: every ID arrives, none twice", async () => {
  const a = fakeAuthority();
  let calls = 0;
  const flaky = async (url, init) => {
    if (++calls % 2 === 0) throw new TypeError("connection reset");
    return a.fetch(url, init);
  };
  const ids = await createGenerator({ ...base, fetch: flaky, rangeSize: 300 });
  const got = await Promise.all(Array.from({ length: 3000 }, () => ids.nextId()));
  a.check(got, ids.incarnation);
  assert.ok(ids.stats().retries > 0);
  ids.close();
});

test("a fetch that never settles (until aborted): two sends; close and settled do not hang", async () => {
  const a = fakeAuthority();
  const t = troubledFirst(a, rejectOnAbort);
  const ids = await createGenerator({ ...base, fetch: t.fetch, requestTimeoutMs: 500 });
  assert.equal(t.sends.length, 2, `${t.sends.length} sends before the first range`);
  const got = await Promise.all(Array.from({ length: 2000 }, () => ids.nextId()));
  a.check(got, ids.incarnation);
  await ids.settled();
  ids.close();
  await ids.settled();
});

test("a fetch that never settles and ignores its abort: the retry gets the range", async () => {
  const a = fakeAuthority();
  let calls = 0;
  const hanging = (url, init) => (++calls === 1 ? new Promise(() => {}) : a.fetch(url, init));
  const ids = await createGenerator({ ...base, fetch: hanging, rangeSize: 500, requestTimeoutMs: 100 });
  const got = await Promise.all(Array.from({ length: 2000 }, () => ids.nextId()));
  a.check(got, ids.incarnation);
  await ids.settled();
  ids.close();
});

test("a fetch that ignores its abort signal and answers a failure late: two sends", async () => {
  const a = fakeAuthority();
  const busy = () => Response.json({ error: { code: "unavailable", message: "late" } }, { status: 503, headers: { "retry-after": "0" } });
  const t = troubledFirst(a, () => sleep(600).then(busy));
  const ids = await createGenerator({ ...base, fetch: t.fetch, requestTimeoutMs: 500 });
  await sleep(400);
  assert.equal(t.sends.length, 2, `${t.sends.length} sends`);
  assert.ok(ids.stats().staleIgnored >= 1, "the late failure reached the engine and was ignored");
  const got = await Promise.all(Array.from({ length: 1500 }, () => ids.nextId()));
  a.check(got, ids.incarnation);
  ids.close();
});

test("a slow authority is not starved (Defect 2): at most 2 sends before the first range", async () => {
  const a = fakeAuthority();
  const sends = [];
  // The first attempt never answers (it honours its abort); every later one
  // answers after 2.5 s, inside the 5 s request timeout.
  const slow = (url, init) => {
    sends.push(performance.now());
    if (sends.length === 1) {
      return new Promise((_, reject) => init.signal.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError"))));
    }
    return delayed(a, 2500)(url, init);
  };
  const ids = await createGenerator({ ...base, fetch: slow, requestTimeoutMs: 5000, deadlineMs: 15000 });
  assert.ok(sends.length <= 2, `${sends.length} sends before the first range`);
  a.check([await ids.nextId()], ids.incarnation);
  ids.close();
});

test("a rotated token: after a 401 the token function is asked afresh, once", async () => {
  const a = fakeAuthority({ tokens: ["old"] });
  const asked = [];
  // A token source that caches its token and mints a new one only when
  // asked to refresh, as a user's would.
  let cached = "old";
  let minted = "old";
  const token = async ({ refresh }) => {
    asked.push(refresh);
    if (refresh) cached = minted;
    return cached;
  };
  const ids = await createGenerator({ ...base, token, fetch: a.fetch, rangeSize: 100, maxOutstanding: 1 });
  assert.ok(asked.length >= 1 && !asked.includes(true), `${asked}`);
  // The old token is revoked and a new one issued.
  a.state.tokens = new Set(["new"]);
  minted = "new";
  const got = [];
  for (let i = 0; i < 350; i++) got.push(await ids.nextId());
  a.check(got, ids.incarnation);
  assert.equal(asked.filter((r) => r).length, 1, `asked afresh once after the 401: ${asked}`);
  assert.equal(ids.stats().phase, "running");
  // A token that stays refused, even fresh, blocks the generator: calls
  // are told at once, and it is not final.
  a.state.tokens = new Set();
  await assert.rejects(
    (async () => { for (;;) await ids.nextId(); })(),
    (e) => e instanceof RangeIdError && e.code === "unauthenticated" && e.status === 401 && e.final === false,
  );
  ids.close();
});

/** Waits until `ready()` holds, polling every 10 ms, for at most `ms`. */
async function until(ready, ms, what) {
  const end = performance.now() + ms;
  while (!ready()) {
    if (performance.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(10);
  }
}

/** Takes IDs until a call rejects; returns them, the error and how long the failing call took. */
async function drainUntilError(ids) {
  const got = [];
  for (;;) {
    const t = performance.now();
    try {
      got.push(await ids.nextId());
    } catch (error) {
      return { got, error, ms: performance.now() - t };
    }
  }
}

const WAF_PAGE = "<html>\n<head><title>403 Forbidden</title></head>\n<body><center><h1>403 Forbidden</h1></center><hr><center>cloudfront</center>"
  + " Request blocked. ".repeat(50) + "</body></html>";

test("a proxy's 4xx: waiting calls fail at once with its status and first bytes; the generator recovers by itself", async () => {
  const a = fakeAuthority();
  const proxy = { blocking: false, blocked: 0 };
  const fetch = async (url, init) => {
    if (proxy.blocking) {
      proxy.blocked++;
      return new Response(WAF_PAGE, { status: 403, headers: { "content-type": "text/html" } });
    }
    return a.fetch(url, init);
  };
  const ids = await createGenerator({ ...base, fetch, rangeSize: 100, maxOutstanding: 1, retryMaxMs: 100, deadlineMs: 5000 });
  proxy.blocking = true;
  const { got, error: e, ms } = await drainUntilError(ids);
  assert.ok(ms < 1000, `the call waited ${ms.toFixed(0)} ms of its 5,000 ms deadline`);
  assert.ok(e instanceof RangeIdError);
  assert.equal(e.code, "forbidden");
  assert.equal(e.status, 403);
  assert.equal(e.final, false, "not final: the generator asks again");
  assert.equal(e.authorityCode, undefined, "no rangeid authority said it");
  assert.ok(e.excerpt.startsWith("<html> <head><title>403 Forbidden</title></head> <body>"), e.excerpt);
  assert.ok(e.excerpt.length <= 160, `${e.excerpt.length} characters`);
  assert.match(e.message, /answered 403, not a rangeid authority's answer/);
  assert.match(e.message, /403 Forbidden/);
  assert.match(e.message, /asks again by itself in \d+ s/);
  assert.equal(ids.stats().phase, "blocked");
  assert.equal(ids.stats().blocks, 1);
  // Later calls are told at once too, while the generator backs off: over
  // 1 s its probes are spaced 100, 200, 400, 800 ms (jittered), not 50 ms.
  const before = proxy.blocked;
  const t = performance.now();
  await assert.rejects(ids.nextIds(3), (x) => x.code === "forbidden" && x.status === 403);
  assert.ok(performance.now() - t < 200);
  await sleep(1000);
  const probes = proxy.blocked - before;
  assert.ok(probes >= 1 && probes <= 5, `${probes} probes in 1 s`);
  // The proxy lets requests through again: no new generator needed.
  proxy.blocking = false;
  await until(() => ids.stats().phase === "running", 3000, "the generator unblocks");
  const more = [];
  for (let i = 0; i < 250; i++) more.push(await ids.nextId());
  a.check([...got, ...more], ids.incarnation);
  const s = ids.stats();
  assert.deepEqual([s.blocks, s.unblocks], [1, 1]);
  ids.close();
});

test("credentials refused even fresh: calls fail at once, and a token function that mends is heard", async () => {
  const a = fakeAuthority({ tokens: ["one"] });
  let current = "one";
  const asked = [];
  const token = ({ refresh }) => {
    asked.push(refresh);
    return current;
  };
  const ids = await createGenerator({ ...base, token, fetch: a.fetch, rangeSize: 50, maxOutstanding: 1, retryMaxMs: 50 });
  // The authority's keys rotate before the token source learns the new token.
  a.state.tokens = new Set(["two"]);
  const { got, error: e, ms } = await drainUntilError(ids);
  assert.ok(ms < 1000, `waited ${ms.toFixed(0)} ms`);
  assert.equal(e.code, "unauthenticated");
  assert.equal(e.status, 401);
  assert.equal(e.authorityCode, "unauthenticated");
  assert.equal(e.final, false);
  assert.match(e.message, /asks again by itself with a fresh token/);
  const refreshesBefore = asked.filter((r) => r).length;
  assert.ok(refreshesBefore >= 1);
  await sleep(300);
  assert.ok(asked.filter((r) => r).length > refreshesBefore, "each probe asks for a fresh token");
  current = "two";
  await until(() => ids.stats().phase === "running", 3000, "the generator unblocks");
  const more = [];
  for (let i = 0; i < 120; i++) more.push(await ids.nextId());
  a.check([...got, ...more], ids.incarnation);
  assert.equal(ids.stats().unblocks, 1);
  ids.close();
});

test("a rangeid authority's own final answer stays final: no probe after it", async () => {
  const a = fakeAuthority();
  let forbid = false;
  let after = 0;
  const fetch = async (url, init) => {
    if (!forbid) return a.fetch(url, init);
    after++;
    return Response.json({ error: { code: "forbidden", message: "this token may not take ranges in orders" } }, { status: 403 });
  };
  const ids = await createGenerator({ ...base, fetch, rangeSize: 20, maxOutstanding: 1, retryMaxMs: 50 });
  forbid = true;
  const { error: e, ms } = await drainUntilError(ids);
  assert.ok(ms < 1000);
  assert.deepEqual([e.code, e.status, e.authorityCode, e.final], ["forbidden", 403, "forbidden", true]);
  // The code once (RangeIdError shows it), then what the authority said.
  assert.equal(e.message, "the authority refused this generator: POST https://authority.test/v1/ranges answered 403: this token may not take ranges in orders");
  const calls = after;
  await sleep(300);
  assert.equal(after, calls, "a final answer is not asked again");
  assert.equal(ids.stats().phase, "forbidden");
  assert.equal(ids.stats().blocks, 0);
  ids.close();
});

test("a WAF that inspects answers replaces a committed grant with its 403: the probe's replay installs it, once", async () => {
  const a = fakeAuthority();
  const waf = { on: false, replaced: 0 };
  const fetch = async (url, init) => {
    const answer = await a.fetch(url, init); // the authority commits first
    if (!waf.on) return answer;
    waf.replaced++;
    return new Response(WAF_PAGE, { status: 403 });
  };
  const ids = await createGenerator({ ...base, fetch, rangeSize: 40, maxOutstanding: 1, retryMaxMs: 50 });
  waf.on = true;
  const { got, error } = await drainUntilError(ids);
  assert.equal(error.code, "forbidden");
  const committed = a.state.ledger.length;
  await sleep(150);
  waf.on = false;
  await until(() => ids.stats().phase === "running", 3000, "the generator unblocks");
  const more = [];
  for (let i = 0; i < 100; i++) more.push(await ids.nextId());
  a.check([...got, ...more], ids.incarnation);
  assert.ok(waf.replaced >= 2, `${waf.replaced} answers replaced`);
  assert.ok(ids.stats().replaysInstalled >= 1, "the range committed behind the WAF came back as a replay");
  assert.equal(a.state.grants.size, a.state.ledger.length, "one range per request id");
  assert.ok(a.state.ledger.length >= committed);
  ids.close();
});

test("429 and 503 pages without Retry-After are retried, never a block", async () => {
  const a = fakeAuthority();
  let n = 0;
  const fetch = async (url, init) => {
    n++;
    if (n === 1) return new Response("<html>Too Many Requests</html>", { status: 429 });
    if (n === 2) return new Response("", { status: 503 });
    return a.fetch(url, init);
  };
  const ids = await createGenerator({ ...base, fetch, retryInitialMs: 1 });
  a.check([await ids.nextId()], ids.incarnation);
  assert.equal(ids.stats().blocks, 0);
  assert.equal(ids.stats().retries, 2);
  ids.close();
});

test("a 4xx with an empty body blocks too, and says so", async () => {
  const empty = async () => new Response(null, { status: 405 });
  await assert.rejects(createGenerator({ ...base, fetch: empty }), (e) => {
    assert.deepEqual([e.code, e.status, e.final, e.excerpt], ["method_not_allowed", 405, false, undefined]);
    assert.match(e.message, /answered 405, not a rangeid authority's answer .* \(empty body\)/);
    return true;
  });
});

test("plain http: only to this machine unless allowInsecureHttp is set", async () => {
  const a = fakeAuthority();
  for (const url of ["http://ids.example.com", "http://10.0.0.7:8787", "http://127.0.0.1.nip.io", "http://localhost.example.com", "http://[::2]:8787"]) {
    await assert.rejects(createGenerator({ ...base, url, fetch: a.fetch }), (e) => {
      assert.equal(e.code, "invalid_config", url);
      assert.match(e.message, /unencrypted.*allowInsecureHttp: true/, url);
      return true;
    });
  }
  await assert.rejects(createGenerator({ ...base, url: "http://ids.example.com", allowInsecureHttp: "yes", fetch: a.fetch }), (e) => e.code === "invalid_config");
  await assert.rejects(createGenerator({ ...base, url: "http://ids.example.com", allowInsecureHttp: false, fetch: a.fetch }), (e) => e.code === "invalid_config");
  assert.equal(a.state.calls, 0, "nothing was sent");
  for (const url of ["http://localhost:8787", "http://127.0.0.1:8787", "http://127.9.8.7", "http://[::1]:8787", "https://ids.example.com"]) {
    const ids = await createGenerator({ ...base, url, fetch: a.fetch });
    ids.close();
  }
  const ids = await createGenerator({ ...base, url: "http://ids.example.com", allowInsecureHttp: true, fetch: a.fetch });
  assert.ok(await ids.nextId());
  ids.close();
});

test("a wrong URL rejects promptly, naming the URL and the status", async () => {
  const notFound = async () => new Response("<html><h1>404 Not Found</h1></html>", { status: 404, headers: { "content-type": "text/html" } });
  const t = performance.now();
  await assert.rejects(createGenerator({ ...base, url: "https://wrong.example/api", fetch: notFound, deadlineMs: 5000 }), (e) => {
    assert.ok(e instanceof RangeIdError);
    assert.equal(e.code, "not_found");
    assert.equal(e.status, 404);
    assert.match(e.message, /https:\/\/wrong\.example\/api\/v1\/ranges/);
    assert.match(e.message, /404/);
    assert.equal(e.authorityCode, undefined, "no rangeid authority said anything");
    assert.equal(e.excerpt, "<html><h1>404 Not Found</h1></html>");
    return true;
  });
  assert.ok(performance.now() - t < 1000, "not at the deadline");
});

test("a token function that fails: retried, and the error says no request was sent and why", async () => {
  let calls = 0;
  const token = async () => {
    calls += 1;
    throw new Error("vault down");
  };
  const fetch = async () => assert.fail("nothing may be sent without a token");
  await assert.rejects(createGenerator({ ...base, token, fetch, deadlineMs: 400 }), (e) => {
    assert.ok(e instanceof RangeIdError);
    assert.equal(e.code, "unavailable");
    assert.match(e.message, /no request sent: the token function failed: vault down/);
    return true;
  });
  assert.ok(calls >= 2, `asked again: ${calls}`);
  const empty = async () => "";
  await assert.rejects(createGenerator({ ...base, token: empty, fetch, deadlineMs: 300 }), (e) => {
    assert.match(e.message, /the token function must return a non-empty string, returned ""/);
    return true;
  });
});

test("errors keep what the authority said: status, message, remaining, retryAfterMs, cause", async () => {
  const busy = async () => Response.json({ error: { code: "unavailable", message: "storage busy" } }, { status: 503, headers: { "retry-after": "1" } });
  await assert.rejects(createGenerator({ ...base, fetch: busy, deadlineMs: 300 }), (e) => {
    assert.equal(e.code, "unavailable");
    assert.equal(e.status, 503);
    assert.equal(e.retryAfterMs, 1000);
    assert.match(e.message, /storage busy/);
    return true;
  });
  const down = async () => { throw new TypeError("ECONNREFUSED 127.0.0.1:1"); };
  await assert.rejects(createGenerator({ ...base, fetch: down, deadlineMs: 200 }), (e) => {
    assert.equal(e.code, "unavailable");
    assert.ok(e.cause instanceof TypeError);
    assert.match(e.message, /ECONNREFUSED/);
    return true;
  });
  // Node's own fetch says only "fetch failed"; the reason is in its cause.
  const closed = await new Promise((resolve) => {
    const srv = createServer().listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
  await assert.rejects(createGenerator({ ...base, url: `http://127.0.0.1:${closed}`, deadlineMs: 300 }), (e) => {
    assert.equal(e.code, "unavailable");
    assert.match(e.message, /got no answer: fetch failed: .*ECONNREFUSED/);
    return true;
  });
  // A block while createGenerator waits: it closes the generator, so the
  // message promises no retry.
  const waf = async () => new Response("<html>blocked</html>", { status: 403 });
  await assert.rejects(createGenerator({ ...base, fetch: waf }), (e) => {
    assert.equal(e.code, "forbidden");
    assert.doesNotMatch(e.message, /asks again by itself/);
    assert.match(e.message, /; the generator closed before its first range, so nothing asks again: fix this and start a new one$/);
    return true;
  });
  const a = fakeAuthority({ first: 1n, max: 5n });
  const ids = await createGenerator({ ...base, fetch: a.fetch, rangeSize: 5 });
  for (let i = 0; i < 5; i++) await ids.nextId();
  await assert.rejects(ids.nextId(), (e) => e.code === "exhausted" && e.status === 409 && e.remaining === "0");
  const unknown = async () => Response.json({ error: { code: "brand_new_refusal", message: 'another "sub"\tmade it' } }, { status: 403 });
  await assert.rejects(createGenerator({ ...base, fetch: unknown }), (e) => {
    assert.equal(e.code, "refused");
    assert.equal(e.authorityCode, "brand_new_refusal");
    assert.ok(e.message.includes('another "sub"\tmade it'), e.message);
    return true;
  });
});

test("answers this version does not know: extra fields are read, an unreadable 200 is retried", async () => {
  const a = fakeAuthority();
  let calls = 0;
  const odd = async (url, init) => {
    const r = await a.fetch(url, init);
    const text = await r.text();
    calls++;
    if (calls === 1) return new Response(text.slice(0, 40), { status: 200 });
    return new Response(text.replace("{", '{"addedLater":{"x":[1,2]},'), { status: r.status });
  };
  const ids = await createGenerator({ ...base, fetch: odd, rangeSize: 100, retryInitialMs: 1 });
  const got = [];
  for (let i = 0; i < 250; i++) got.push(await ids.nextId());
  a.check(got, ids.incarnation);
  assert.equal(ids.stats().replaysInstalled, 1, "the truncated grant was replayed, not lost");
  ids.close();
});

test("nextIds(n) returns exactly n: the local block's rest, then the range, then the next ones", async () => {
  const a = fakeAuthority();
  const ids = await createGenerator({ ...base, fetch: a.fetch, rangeSize: 10_000 });
  assert.equal(await ids.nextId(), "1");
  const batch = await ids.nextIds(2000);
  assert.equal(batch.length, 2000);
  assert.deepEqual([batch[0], batch[1999]], ["2", "2001"]);
  const rest = await ids.nextIds(20_000);
  assert.equal(rest.length, 20_000, "across ranges, exactly");
  assert.equal(rest[0], "2002");
  a.check([...batch, ...rest], ids.incarnation);
  ids.close();
});

test("exact batches of every size, mixed with nextId, across many small ranges and prefetches", async () => {
  const a = fakeAuthority();
  const ids = await createGenerator({ ...base, fetch: a.fetch, rangeSize: 7, maxOutstanding: 2 });
  const all = [];
  let seed = 7;
  for (let i = 0; i < 300; i++) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    const n = 1 + (seed % 50);
    if (i % 3 === 0) all.push(await ids.nextId());
    const batch = await ids.nextIds(n);
    assert.equal(batch.length, n);
    all.push(...batch);
  }
  a.check(all, ids.incarnation);
  // Concurrent batches and single IDs: each gets exactly what it asked for.
  const calls = Array.from({ length: 40 }, (_, i) => (i % 4 === 0 ? ids.nextId().then((x) => [x]) : ids.nextIds(3 + (i % 29))));
  const got = await Promise.all(calls);
  got.forEach((g, i) => assert.equal(g.length, i % 4 === 0 ? 1 : 3 + (i % 29)));
  a.check([...all, ...got.flat()], ids.incarnation);
  ids.close();
});

test("a batch the namespace cannot supply rejects at once with exhausted, and takes nothing", async () => {
  const a = fakeAuthority({ first: 1n, max: 25n });
  // As a real authority does, grants say what the namespace has left.
  const withCapacity = async (url, init) => {
    const r = await a.fetch(url, init);
    if (r.status !== 200) return r;
    const g = await r.json();
    return Response.json({ ...g, maxCount: 10_000_000, remaining: (a.state.max + 1n - a.state.next).toString() });
  };
  const ids = await createGenerator({ ...base, fetch: withCapacity, rangeSize: 10 });
  const five = [];
  for (let i = 0; i < 5; i++) five.push(await ids.nextId());
  const t = performance.now();
  await assert.rejects(ids.nextIds(30), (e) => {
    assert.ok(e instanceof RangeIdError);
    assert.equal(e.code, "exhausted");
    assert.equal(e.remaining, "15", "what the namespace has left to grant");
    assert.equal(e.available, "5", "what this generator holds");
    assert.equal(e.final, false);
    assert.match(e.message, /no ID was taken/);
    return true;
  });
  assert.ok(performance.now() - t < 500, "at once, not at the deadline");
  assert.equal(ids.stats().available, "5", "nothing was taken");
  // Everything that is left still comes, exactly.
  const twenty = await ids.nextIds(20);
  assert.equal(twenty.length, 20);
  a.check([...five, ...twenty], ids.incarnation);
  assert.equal(twenty.at(-1), "25");
  await assert.rejects(ids.nextIds(1), (e) => e.code === "exhausted" && e.remaining === "0");
  await assert.rejects(ids.nextId(), (e) => e.code === "exhausted" && e.final === true);
  ids.close();
});

test("a batch above what a generator gathers is invalid_request with the limit; one at it comes whole", async () => {
  const a = fakeAuthority();
  const ids = await createGenerator({ ...base, fetch: a.fetch, rangeSize: 10 });
  await assert.rejects(ids.nextIds(81), (e) => {
    assert.deepEqual([e.code, e.limit, e.final], ["invalid_request", 80, false]);
    assert.match(e.message, /at most 80 IDs per call/);
    return true;
  });
  assert.equal(ids.stats().issued, 0);
  const got = await ids.nextIds(80);
  assert.equal(got.length, 80);
  a.check(got, ids.incarnation);
  ids.close();
});

test("a batch that times out takes nothing: the IDs it waited beside go to later calls", async () => {
  const a = fakeAuthority();
  let hold = false;
  const fetch = (url, init) => (hold ? rejectOnAbort(init) : a.fetch(url, init));
  const ids = await createGenerator({ ...base, fetch, rangeSize: 10, maxOutstanding: 1, deadlineMs: 200, requestTimeoutMs: 5000 });
  const head = [await ids.nextId(), await ids.nextId()];
  hold = true;
  await assert.rejects(ids.nextIds(15), (e) => e.code === "unavailable" && /no ID within 200 ms/.test(e.message));
  assert.equal(ids.stats().available, "8", "the 8 on hand were not taken");
  hold = false;
  const after = await ids.nextIds(8);
  assert.deepEqual(after, ["3", "4", "5", "6", "7", "8", "9", "10"]);
  a.check([...head, ...after], ids.incarnation);
  ids.close();
});

test("close during an exchange: no token call and no fetch after it", async () => {
  const a = fakeAuthority();
  let afterClose = 0;
  let closed = false;
  const token = () => {
    if (closed) afterClose++;
    return "t";
  };
  const fetch = (url, init) => {
    if (closed) afterClose++;
    return a.fetch(url, init);
  };
  const ids = await createGenerator({ ...base, token, fetch, rangeSize: 5 });
  // Empty the range so a prefetch is queued, then close before it runs.
  for (let i = 0; i < 5; i++) ids.tryNextId();
  ids.close();
  closed = true;
  await sleep(50);
  assert.equal(afterClose, 0);
});

test("retryInitialMs and retryMaxMs are the engine's, checked by it", async () => {
  const a = fakeAuthority();
  await assert.rejects(
    createGenerator({ ...base, fetch: a.fetch, retryInitialMs: 500, retryMaxMs: 100 }),
    (e) => e.code === "invalid_config" && /retryInitialMs/.test(e.message),
  );
  await assert.rejects(
    createGenerator({ ...base, fetch: a.fetch, retryMaxMs: 0.5 }),
    (e) => e.code === "invalid_config" && /retryMaxMs/.test(e.message),
  );
  assert.equal(a.state.calls, 0);
});

test("short lives reserve little: at most max(2 x minRangeSize, 4N), by the authority's ledger", async () => {
  const rows = [];
  for (const n of [1, 10, 100, 10_000, 1_000_000]) {
    const a = fakeAuthority();
    const ids = await createGenerator({ ...base, fetch: a.fetch });
    for (let i = 0; i < n; i++) {
      if (ids.tryNextId() === undefined) await ids.nextId();
    }
    await ids.settled();
    const s = ids.stats();
    ids.close();
    const reserved = a.reserved();
    const bound = BigInt(Math.max(2 * 1000, 4 * n));
    rows.push(`${n}: ${reserved} reserved, ${s.requests} requests`);
    assert.ok(reserved <= bound, `returned ${n}, reserved ${reserved} > ${bound}`);
    assert.equal(s.issued, n);
    assert.equal(BigInt(s.reserved), reserved, "stats agree with the ledger");
  }
  console.log(`lifetimes (IDs returned: reserved from the namespace): ${rows.join("; ")}`);
});

test("a small namespace is asked for little: never more than its maxCount", async () => {
  const a = fakeAuthority({ max: 2n ** 31n - 1n, maxCount: 500 });
  // The fake says nothing of capacity, so the first request is minRangeSize;
  // a real authority's grants carry maxCount and remaining.
  const withCapacity = async (url, init) => {
    const r = await a.fetch(url, init);
    if (r.status !== 200) return r;
    const g = await r.json();
    return Response.json({ ...g, maxCount: 500, remaining: (a.state.max + 1n - a.state.next).toString() });
  };
  const ids = await createGenerator({ ...base, fetch: withCapacity, minRangeSize: 100 });
  for (let i = 0; i < 5000; i++) await ids.nextId();
  assert.ok(a.state.ledger.every(([s, e]) => e - s <= 500n), "no request above maxCount");
  ids.close();
});
