// rangeid/testing: an in-process authority for users' own tests, handed to
// createGenerator in place of fetch. Its decisions are core's (decide and
// the authority's wire encoder, in wasm/testing/); this file only routes,
// checks the bearer token and injects the faults a test asks for.

/** What a blocking proxy answers by default. */
const PROXY_PAGE = "<html><head><title>403 Forbidden</title></head><body><h1>403 Forbidden</h1>Request blocked (rangeid/testing).</body></html>";

const abortError = (signal) => signal.reason ?? new DOMException("This operation was aborted", "AbortError");

/** Waits `ms`, or rejects when `signal` aborts (as fetch does). */
function delay(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal));
    const onAbort = () => {
      clearTimeout(t);
      reject(abortError(signal));
    };
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function checkTimes(times, name) {
  if (times === Infinity) return times;
  if (!Number.isSafeInteger(times) || times < 0) throw new TypeError(`${name}: times must be a whole number or Infinity`);
  return times;
}

function decimalOption(value, name) {
  if (value === undefined) return undefined;
  if (typeof value === "bigint" || (typeof value === "number" && Number.isSafeInteger(value))) return String(value);
  if (typeof value === "string") return value;
  throw new TypeError(`${name} must be a decimal string, a BigInt or a safe integer`);
}

/** Builds `createTestAuthority` over the wasm glue, loaded by `load()` on first use. */
export function makeCreateTestAuthority(load) {
  return function createTestAuthority(options = {}) {
    if (options === null || typeof options !== "object") throw new TypeError("options must be an object");
    const { TestAuthority } = load();
    const { namespaces, tokens, first, max, maxCount, url = "https://rangeid.test" } = options;
    const wasm = new TestAuthority(decimalOption(first, "first"), decimalOption(max, "max"), maxCount, namespaces === undefined);
    if (namespaces !== undefined) {
      const list = Array.isArray(namespaces) ? namespaces.map((n) => [n, {}]) : Object.entries(namespaces);
      for (const [name, c = {}] of list) {
        wasm.addNamespace(name, decimalOption(c.first ?? first, "first"), decimalOption(c.max ?? max, "max"), c.maxCount ?? maxCount);
      }
    }
    const allowed = tokens === undefined ? undefined : new Set(tokens);
    // A grant replays only to its owner; tokens are kept whole here and
    // handed to the decision as short, distinct owner names.
    const owners = new Map();
    const tokenOf = new Map();
    const ownerOf = (token) => {
      let owner = owners.get(token);
      if (owner === undefined) {
        owner = `token-${owners.size + 1}`;
        owners.set(token, owner);
        tokenOf.set(owner, token);
      }
      return owner;
    };
    const endpoint = new URL("v1/ranges", url.endsWith("/") ? url : `${url}/`).href;
    const faults = { unavailable: 0, retryAfter: undefined, lost: 0, slowMs: 0, proxy: 0, proxyStatus: 403, proxyBody: PROXY_PAGE };
    const counts = { requests: 0, lost: 0, unavailable: 0, proxy: 0, unauthenticated: 0 };

    const respond = ([status, retryAfter, body]) => {
      const headers = { "content-type": "application/json" };
      if (retryAfter >= 0) headers["retry-after"] = String(retryAfter);
      return new Response(body, { status, headers });
    };

    async function fetch(input, init) {
      const request = new Request(input, init);
      const signal = init?.signal ?? undefined;
      if (signal?.aborted) throw abortError(signal);
      counts.requests++;
      if (faults.slowMs > 0) await delay(faults.slowMs, signal);
      if (faults.proxy > 0) {
        faults.proxy--;
        counts.proxy++;
        return new Response(faults.proxyBody, { status: faults.proxyStatus, headers: { "content-type": "text/html" } });
      }
      const path = new URL(request.url).pathname;
      if (!path.endsWith("/v1/ranges")) return respond(TestAuthority.error("not_found", `no route ${path}`));
      if (request.method !== "POST") return respond(TestAuthority.error("method_not_allowed", "use POST"));
      const token = /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1];
      if (token === undefined || (allowed !== undefined && !allowed.has(token))) {
        counts.unauthenticated++;
        return respond(TestAuthority.error("unauthenticated", "the token is missing or not accepted (rangeid/testing)"));
      }
      if (faults.unavailable > 0) {
        faults.unavailable--;
        counts.unavailable++;
        const [status, retryAfter, body] = TestAuthority.error("unavailable", "unavailable (rangeid/testing)");
        return respond([status, faults.retryAfter ?? retryAfter, body]);
      }
      const body = await request.text();
      const answer = wasm.rangeRequest(body, ownerOf(token), Date.now());
      if (faults.lost > 0) {
        // Decided and committed, but the reply never arrives.
        faults.lost--;
        counts.lost++;
        throw new TypeError("fetch failed: the reply was lost after the commit (rangeid/testing)");
      }
      return respond(answer);
    }

    const authority = {
      /** The base URL to give `createGenerator` (any URL works with this fetch). */
      url,
      /** The endpoint requests go to. */
      endpoint,
      /** The `fetch` to give `createGenerator`. */
      fetch,
      /** Requests, and answers per injected fault, so far. */
      counts,
      /** The next `times` range requests (default: until `heal()`) are answered 503 `unavailable`; `retryAfter` in seconds (default the authority's, 1). */
      unavailable({ times = Infinity, retryAfter } = {}) {
        faults.unavailable = checkTimes(times, "unavailable");
        faults.retryAfter = retryAfter;
        return authority;
      },
      /** The next `times` replies (default 1) are lost after the authority committed them: the fetch rejects. */
      loseReplies({ times = 1 } = {}) {
        faults.lost = checkTimes(times, "loseReplies");
        return authority;
      },
      /** Every answer takes `ms` (0: none); the fetch still honours its abort signal. */
      slow(ms) {
        if (!(ms >= 0 && Number.isFinite(ms))) throw new TypeError("slow: ms must be a number of milliseconds");
        faults.slowMs = ms;
        return authority;
      },
      /** A proxy in front answers the next `times` requests (default: until `heal()`) with its own page. */
      proxyError({ status = 403, body = PROXY_PAGE, times = Infinity } = {}) {
        faults.proxy = checkTimes(times, "proxyError");
        faults.proxyStatus = status;
        faults.proxyBody = body;
        return authority;
      },
      /** Ends every injected fault (not a freeze or an exhaustion). */
      heal() {
        Object.assign(faults, { unavailable: 0, retryAfter: undefined, lost: 0, slowMs: 0, proxy: 0 });
        return authority;
      },
      /** Freezes a namespace (every one when none is named): new ranges are refused with `namespace_frozen`. */
      freeze(namespace) {
        wasm.setFrozen(namespace, true);
        return authority;
      },
      /** Thaws it again. */
      thaw(namespace) {
        wasm.setFrozen(namespace, false);
        return authority;
      },
      /** Leaves a namespace (every one when none is named) with no IDs to grant. */
      exhaust(namespace) {
        wasm.exhaust(namespace);
        return authority;
      },
      /** Raises a namespace's next ID to `to`, as an operator's floor. */
      floor(namespace, to) {
        wasm.floor(namespace, decimalOption(to, "to"));
        return authority;
      },
      /** What a namespace has left to grant (decimal string). */
      remaining(namespace) {
        return wasm.remaining(namespace);
      },
      /** Every range granted: `{ namespace, incarnation, requestId, start, end, token }` (IDs as decimal strings; `end` exclusive). */
      get grants() {
        return wasm.grants().map(([namespace, incarnation, requestId, start, end, owner]) => ({ namespace, incarnation, requestId, start, end, token: tokenOf.get(owner) }));
      },
      /**
       * Throws unless every ID is distinct and inside a range granted (in
       * `namespace`, when named). Returns the number checked.
       */
      check(ids, namespace) {
        const ranges = authority.grants
          .filter((g) => namespace === undefined || g.namespace === namespace)
          .map((g) => [BigInt(g.start), BigInt(g.end)])
          .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
        const seen = new Set();
        for (const id of ids) {
          const key = String(id);
          if (seen.has(key)) throw new Error(`ID ${key} was issued twice`);
          seen.add(key);
          const v = BigInt(key);
          let lo = 0;
          let hi = ranges.length;
          while (lo < hi) {
            const mid = (lo + hi) >> 1;
            if (ranges[mid][0] <= v) lo = mid + 1;
            else hi = mid;
          }
          if (lo === 0 || v >= ranges[lo - 1][1]) throw new Error(`ID ${key} was never granted${namespace ? ` in ${namespace}` : ""}`);
        }
        return seen.size;
      },
    };
    return authority;
  };
}
