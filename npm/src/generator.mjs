// The generator: a thin JS driver around the wasm engine (core's Lease).
//
// The engine decides everything: which range to install, when to ask, what
// an answer means, when to retry, what is final, which options are valid.
// This file owns what wasm cannot: the clock, timers, fetch, promises and
// a local block of IDs, so the JS/wasm boundary is crossed once per block,
// not once per ID.
//
// Re-entrancy: no user code (fetch, a token function, a promise's
// continuation) ever runs while this driver is between reading the engine
// and using what it read. Every engine call returns one value; the local
// block is replaced in one step; sends, waiter service and engine polls
// happen in a queued microtask, and fetch is only called from an async
// exchange after its first await.

import { RangeIdError, codeFromMessage } from "./errors.mjs";

const BLOCK = 1024;
const now = () => performance.now();
// Explicit resource management (`using`, `await using`); older runtimes
// get TypeScript's fallback symbols.
const DISPOSE = Symbol.dispose ?? Symbol.for("Symbol.dispose");
const ASYNC_DISPOSE = Symbol.asyncDispose ?? Symbol.for("Symbol.asyncDispose");

/** Whether `hostname` (as `URL` writes it) is this machine: localhost, 127.0.0.0/8 or [::1]. */
export function isLoopback(hostname) {
  return hostname === "localhost" || hostname === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/**
 * The authority's rule for a relay region (`POST /v1/ranges?region=`): 1 to
 * 32 of a-z, 0-9 and -. Its source is the authority's `Region::PATTERN`, as
 * the OpenAPI document states it; tests/npm/one-source.test.mjs checks this
 * copy against the document.
 */
export const REGION_RE = /^[a-z0-9-]{1,32}$/;

/** Checks the options only JS can check (url, token, fetch, allowInsecureHttp, signal, region); the rest go to the engine. */
export function driverOptions(options) {
  if (options === null || typeof options !== "object") {
    throw new RangeIdError("invalid_config", "options must be an object");
  }
  const { url, token, fetch, allowInsecureHttp, signal, region, ...engine } = options;
  if (typeof url !== "string") throw new RangeIdError("invalid_config", "url must be a string");
  let base;
  try {
    base = new URL(url);
  } catch {
    throw new RangeIdError("invalid_config", `url is not a valid URL: ${url}`);
  }
  if (base.protocol !== "http:" && base.protocol !== "https:") {
    throw new RangeIdError("invalid_config", "url must be http: or https:");
  }
  if (allowInsecureHttp !== undefined && typeof allowInsecureHttp !== "boolean") {
    throw new RangeIdError("invalid_config", "allowInsecureHttp must be true or false");
  }
  // A token sent in clear over a network can be read and replayed by anyone
  // on the way: plain http only to this machine, unless the caller says so.
  if (base.protocol === "http:" && !isLoopback(base.hostname) && allowInsecureHttp !== true) {
    throw new RangeIdError(
      "invalid_config",
      `url ${base.origin} sends the token unencrypted to another machine: use https:, or set allowInsecureHttp: true (plain http: is allowed without it only to localhost, 127.0.0.0/8 and [::1])`,
    );
  }

  const tokenOk = (typeof token === "string" && token.length > 0) || typeof token === "function";
  if (!tokenOk) {
    throw new RangeIdError("invalid_config", "token must be a non-empty string or a function returning one");
  }
  if (fetch !== undefined && typeof fetch !== "function") {
    throw new RangeIdError("invalid_config", "fetch must be a function");
  }
  if (signal !== undefined && !isAbortSignal(signal)) {
    throw new RangeIdError("invalid_config", "signal must be an AbortSignal");
  }
  if (region !== undefined && (typeof region !== "string" || !REGION_RE.test(region))) {
    const shown = typeof region === "string" ? JSON.stringify(region.length > 40 ? `${region.slice(0, 40)}...` : region) : typeof region;
    throw new RangeIdError("invalid_config", `region must be 1 to 32 characters of a-z, 0-9 and - (got ${shown})`);
  }
  const endpoint = new URL("v1/ranges", base.href.endsWith("/") ? base.href : base.href + "/");
  // The relay that serves this generator when the namespace's relays are on.
  if (region !== undefined) endpoint.searchParams.set("region", region);
  return { endpoint: endpoint.href, token, fetch, signal, engine };
}

/** Whether `s` looks like an AbortSignal (any realm, or a polyfill). */
function isAbortSignal(s) {
  return typeof s === "object" && s !== null && typeof s.aborted === "boolean" && typeof s.addEventListener === "function";
}

/** The `signal` of a call's options, checked. */
function signalOf(options) {
  if (options === undefined) return undefined;
  if (options === null || typeof options !== "object") {
    throw new RangeIdError("invalid_request", "options must be an object", { final: false });
  }
  if (options.signal !== undefined && !isAbortSignal(options.signal)) {
    throw new RangeIdError("invalid_request", "signal must be an AbortSignal", { final: false });
  }
  return options.signal;
}

/** The error a wait ends with when its signal aborts. */
function aborted(signal) {
  const why = signal.reason;
  const said = why instanceof Error ? `${why.name}: ${why.message}` : why === undefined ? "" : String(why);
  return new RangeIdError("aborted", `the wait was aborted${said ? ` (${said})` : ""}`, { cause: why, final: false });
}

/**
 * A network error's message with its causes' (fetch's "fetch failed" keeps
 * the reason, such as ECONNREFUSED, in `cause`), joined with ": ", without
 * a cause that repeats what came before it.
 */
function causes(error) {
  let out = String(error?.message ?? error);
  const seen = new Set([error]);
  for (let c = error?.cause; c != null && !seen.has(c); c = c.cause) {
    seen.add(c);
    const text = String(c.message ?? c);
    if (text && !out.includes(text)) out += `: ${text}`;
  }
  return out;
}

function retryAfterMs(header) {
  if (header === null || header === undefined) return -1;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(header);
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : -1;
}

/** The authority's message as the engine keeps it (escapes as written), decoded. */
function unescapeJson(text) {
  try {
    return JSON.parse(`"${text}"`);
  } catch {
    return text;
  }
}

/** Expands a block `[start, count]` into decimal strings. */
function expand(start, count, out = []) {
  if (typeof start === "bigint") {
    for (let i = 0n, n = BigInt(count); i < n; i++) out.push((start + i).toString());
  } else {
    for (let i = 0; i < count; i++) out.push(String(start + i));
  }
  return out;
}

/** One incarnation issuing IDs for one namespace. */
export class Generator {
  #engine;
  #namespace;
  #endpoint;
  #token;
  #fetch;
  #deadlineMs;
  #incarnation;
  // The local block lent by the engine: numbers while every ID in it is
  // exact, else BigInts.
  #next = 0;
  #end = 0;
  #bigNext = 0n;
  #bigEnd = 0n;
  #waiters = [];
  // Attempts in flight: "request:attempt" -> {request, attempt, abort, cancelled, done}.
  // A cancelled attempt is aborted and no longer waited for by `settled()`;
  // a transport that ignores the abort may still answer it.
  #attempts = new Map();
  #timer = undefined;
  #timerAt = Infinity;
  #queued = false;
  #servicing = false;
  #lastCause = undefined;
  #closed = false;
  #finalStats = undefined;
  #createSignal = undefined;
  // While createGenerator waits for the first range: a failure then closes
  // the generator, so its message promises no retry.
  #warming = false;

  constructor(Engine, options) {
    const o = driverOptions(options);
    try {
      this.#engine = new Engine(o.engine, now());
    } catch (e) {
      const message = String(e && e.message ? e.message : e);
      throw new RangeIdError(codeFromMessage(e), message.replace(/^[a-z_]+: /, ""));
    }
    this.#namespace = String(options.namespace);
    this.#endpoint = o.endpoint;
    this.#token = o.token;
    this.#fetch = o.fetch ?? globalThis.fetch.bind(globalThis);
    this.#deadlineMs = this.#engine.deadlineMs();
    this.#incarnation = this.#engine.incarnation();
    this.#createSignal = o.signal;
  }

  /** The next ID, or `undefined` when none is ready (never waits). */
  tryNextId() {
    if (this.#next < this.#end) return String(this.#next++);
    return this.#tryNextSlow();
  }

  #tryNextSlow() {
    if (this.#bigNext < this.#bigEnd) return (this.#bigNext++).toString();
    return this.#refill() ? this.tryNextId() : undefined;
  }

  #localLeft() {
    return this.#end - this.#next + Number(this.#bigEnd - this.#bigNext);
  }

  /** Replaces the (empty) local block with a block lent by the engine; false when none is ready. */
  #refill() {
    if (this.#closed) return false;
    const r = this.#engine.lend(BLOCK);
    if (typeof r === "string") {
      this.#queueService();
      return false;
    }
    this.#install(r[0], r[1]);
    if (r[2]) this.#queueService();
    return true;
  }

  #install(start, count) {
    if (typeof start === "bigint") {
      this.#bigNext = start;
      this.#bigEnd = start + BigInt(count);
      this.#next = this.#end = 0;
    } else {
      this.#next = start;
      this.#end = start + count;
      this.#bigNext = this.#bigEnd = 0n;
    }
  }

  /**
   * The next ID; waits for a range up to `deadlineMs`, then rejects.
   * `options.signal` aborts the wait.
   */
  nextId(options) {
    let signal;
    try {
      signal = signalOf(options);
    } catch (e) {
      return Promise.reject(e);
    }
    if (signal?.aborted) return Promise.reject(aborted(signal));
    const id = this.tryNextId();
    if (id !== undefined) return Promise.resolve(id);
    return this.#wait(() => this.tryNextId(), 1, signal);
  }

  /** Like `nextId`, as a BigInt. */
  async nextIdBigInt(options) {
    return BigInt(await this.nextId(options));
  }

  /**
   * Exactly `n` IDs, across ranges when it must; waits like `nextId`. All
   * or nothing: a call that fails (deadline, abort, too few left in the
   * namespace) takes no ID.
   */
  nextIds(n, options) {
    let signal;
    let got;
    try {
      if (!Number.isSafeInteger(n) || n < 1 || n > 2 ** 32 - 1) {
        throw new RangeIdError("invalid_request", "n must be a whole number from 1 to 2^32 - 1", { final: false });
      }
      signal = signalOf(options);
      if (signal?.aborted) throw aborted(signal);
      got = this.#tryBatch(n);
    } catch (e) {
      return Promise.reject(e);
    }
    if (got !== undefined) return Promise.resolve(got);
    return this.#wait(() => this.#tryBatch(n), n, signal);
  }

  /**
   * Exactly `n` IDs (the local block's rest first), or `undefined` when the
   * engine may still gather them; throws when it cannot now (the namespace
   * has too few left, the batch is too large, the engine is blocked or
   * stopped).
   */
  #tryBatch(n) {
    if (this.#closed) return undefined;
    const r = this.#engine.takeExact(n, this.#localLeft());
    if (!Array.isArray(r)) {
      if (r.wait) {
        this.#queueService();
        return undefined;
      }
      throw this.#batchError(n, r);
    }
    const out = [];
    const fromLocal = r[0];
    if (fromLocal > 0) {
      if (this.#end > this.#next) {
        expand(this.#next, fromLocal, out);
        this.#next += fromLocal;
      } else {
        expand(this.#bigNext, fromLocal, out);
        this.#bigNext += BigInt(fromLocal);
      }
    }
    for (let i = 2; i < r.length; i += 2) expand(r[i], r[i + 1], out);
    if (r[1]) this.#queueService();
    return out;
  }

  /** The error of a batch that cannot be had: what is left and held, or the limit. */
  #batchError(n, f) {
    if (f.available !== undefined) {
      return new RangeIdError(
        "exhausted",
        `nextIds(${n}): namespace ${this.#namespace} has ${f.remaining} IDs left to grant and this generator holds ${f.available}, fewer than ${n}; no ID was taken (a smaller batch or nextId can still have them)`,
        { remaining: f.remaining, available: f.available, final: false },
      );
    }
    if (f.limit !== undefined) {
      return new RangeIdError(
        "invalid_request",
        `nextIds(${n}): at most ${f.limit} IDs per call here (the largest range it asks for: maxRangeSize, and the namespace's maxCount); no ID was taken`,
        { limit: f.limit, final: false },
      );
    }
    return this.#error(f);
  }

  /**
   * Waits for `attempt()` to return a value (it returns `undefined` while
   * none is ready, or throws to fail this call), for at most `deadlineMs`.
   * `need` IDs count towards what the engine is told callers wait for.
   */
  #wait(attempt, need, signal) {
    if (this.#closed) return Promise.reject(this.#error());
    const failure = this.#engine.failure();
    if (!failure.wait) return Promise.reject(this.#error(failure));
    if (signal?.aborted) return Promise.reject(aborted(signal));
    return new Promise((resolve, reject) => {
      const waiter = { attempt, need, resolve, reject, timer: undefined, signal, onAbort: undefined };
      waiter.timer = setTimeout(() => {
        this.#drop(waiter);
        reject(this.#error(undefined, `no ID within ${this.#deadlineMs} ms`));
      }, this.#deadlineMs);
      if (signal) {
        waiter.onAbort = () => {
          this.#drop(waiter);
          reject(aborted(signal));
        };
        signal.addEventListener("abort", waiter.onAbort, { once: true });
      }
      this.#waiters.push(waiter);
      // Arm the wake-up timer afresh in this context: on Workers, timers and
      // fetches started while serving an earlier request die with it.
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#timerAt = Infinity;
      this.#queueService();
    });
  }

  /** Takes `waiter` out of the queue and releases its timer and signal. */
  #drop(waiter) {
    this.#waiters = this.#waiters.filter((w) => w !== waiter);
    clearTimeout(waiter.timer);
    waiter.signal?.removeEventListener("abort", waiter.onAbort);
  }

  /** Runs `#service` once, soon, outside whatever called this. */
  #queueService() {
    if (this.#queued || this.#servicing || this.#closed) return;
    this.#queued = true;
    queueMicrotask(() => {
      this.#queued = false;
      this.#service();
    });
  }

  /** Serves waiters, then carries out what the engine asks for. */
  #service() {
    if (this.#closed) return;
    this.#servicing = true;
    const actions = [];
    try {
      this.#serveWaiters();
      this.#engine.setDemand(this.#waiters.reduce((sum, w) => sum + w.need, 0), this.#localLeft());
      const t = now();
      for (let a; (a = this.#engine.poll(t)) !== undefined;) actions.push(a);
      this.#armTimer();
    } finally {
      this.#servicing = false;
    }
    for (const a of actions) {
      if (a[0] === "send") this.#send(a[1], a[2], a[3], a[4]);
      else this.#cancel(a[1], a[2]);
    }
  }

  #serveWaiters() {
    while (this.#waiters.length > 0) {
      const w = this.#waiters[0];
      let v;
      try {
        v = w.attempt();
      } catch (e) {
        this.#drop(w);
        w.reject(e);
        continue;
      }
      if (v === undefined) break;
      this.#drop(w);
      w.resolve(v);
    }
    if (this.#waiters.length === 0) return;
    // Told at once when waiting cannot help now: a final answer, or a block
    // (the engine keeps asking by itself; a later call may succeed).
    const failure = this.#engine.failure();
    if (failure.wait) return;
    for (const w of [...this.#waiters]) {
      this.#drop(w);
      w.reject(this.#error(failure));
    }
  }

  #armTimer() {
    const deadline = this.#engine.nextDeadline();
    if (deadline < 0 || deadline >= this.#timerAt) return;
    clearTimeout(this.#timer);
    this.#timerAt = deadline;
    this.#timer = setTimeout(() => {
      this.#timerAt = Infinity;
      this.#timer = undefined;
      this.#queueService();
    }, Math.max(0, Math.ceil(deadline - now())));
    this.#timer?.unref?.();
  }

  #send(request, attempt, body, fresh) {
    const entry = { request, attempt, abort: new AbortController(), cancelled: false, done: undefined, cancelledNow: undefined };
    entry.cancelledNow = new Promise((resolve) => entry.abort.signal.addEventListener("abort", resolve, { once: true }));
    const key = `${request}:${attempt}`;
    this.#attempts.set(key, entry);
    entry.done = this.#exchange(entry, body, fresh).finally(() => {
      if (this.#attempts.get(key) === entry) this.#attempts.delete(key);
    });
  }

  #cancel(request, upTo) {
    for (const e of this.#attempts.values()) {
      if (e.request === request && e.attempt <= upTo && !e.cancelled) {
        e.cancelled = true;
        e.abort.abort();
      }
    }
  }

  /** The token for one attempt. A token function that fails is retried
   * like a lost answer (a secret store may be down for a moment); the
   * error a caller gets then says no request was sent, and why. */
  async #credentials(fresh) {
    if (typeof this.#token !== "function") return this.#token;
    const beforeSend = (message, cause) => Object.assign(new Error(message, cause === undefined ? undefined : { cause }), { beforeSend: true });
    let token;
    try {
      token = await this.#token({ refresh: fresh });
    } catch (e) {
      throw beforeSend(`the token function failed: ${e?.message ?? e}`, e);
    }
    if (typeof token !== "string" || token.length === 0) {
      throw beforeSend(`the token function must return a non-empty string, returned ${token === "" ? '""' : typeof token}`);
    }
    return token;
  }

  async #exchange(entry, body, fresh) {
    // Leave the service loop before any user code (the token function,
    // fetch) runs.
    await null;
    if (this.#closed || entry.cancelled) return;
    let answer;
    let failure;
    try {
      const token = await this.#credentials(fresh);
      if (this.#closed || entry.cancelled) return;
      const response = await this.#fetch(this.#endpoint, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body,
        signal: entry.abort.signal,
      });
      const text = await response.text();
      answer = [response.status, text, retryAfterMs(response.headers.get("retry-after"))];
    } catch (e) {
      failure = e;
    }
    // Whatever came back goes to the engine, cancelled or not: a late grant
    // is a duplicate it ignores, a late failure a stale one.
    if (this.#closed) return;
    if (answer) {
      this.#engine.handleAnswer(entry.request, entry.attempt, answer[0], answer[1], answer[2], now());
    } else {
      if (!entry.cancelled) this.#lastCause = failure;
      this.#engine.handleNoAnswer(entry.request, entry.attempt, now());
    }
    this.#queueService();
  }

  /** A RangeIdError from the engine's account of why no ID is ready. */
  #error(failure, prefix) {
    if (this.#closed) return new RangeIdError("closed", "the generator was closed", { final: true });
    const f = failure ?? this.#engine.failure();
    if (f.message) f.message = unescapeJson(f.message);
    const where = `POST ${this.#endpoint}`;
    let said;
    if (f.noAnswer) {
      const c = this.#lastCause;
      said = c?.beforeSend ? `no request sent: ${c.message}` : `${where} got no answer${c ? `: ${causes(c)}` : ""}`;
    } else if (f.authorityCode !== undefined) {
      // The wire code only where it says more than this error's code.
      const code = f.authorityCode === f.code ? "" : ` ${f.authorityCode}`;
      said = `${where} answered ${f.status}${code}${f.message ? `: ${f.message}` : ""}`;
    } else if (f.status !== undefined) {
      const body = f.excerpt ? `: ${JSON.stringify(f.excerpt)}` : " (empty body)";
      said = `${where} answered ${f.status}, not a rangeid authority's answer (is the url right? a proxy or firewall in the way?)${body}`;
    }
    if (f.blockedUntil !== undefined) {
      // A fixed token string cannot be refreshed: say so rather than promise a fresh one.
      const fresh = f.code !== "unauthenticated" ? ""
        : typeof this.#token === "function" ? " with a fresh token"
        : " with the same token (it is a fixed string: pass a token function to supply a fresh one)";
      said = this.#warming
        ? `${said ?? where}; the generator closed before its first range, so nothing asks again: fix this and start a new one`
        : `${said ?? where}; the generator asks again by itself${fresh} in ${Math.max(0, Math.ceil((f.blockedUntil - now()) / 1000))} s`;
    }
    // The code is the error's own (RangeIdError shows it): the head repeats
    // it only when nothing the authority said follows.
    const head = prefix ?? (
      f.code === "unavailable" ? "no ID is ready"
      : f.code === "frozen" ? "the namespace is frozen"
      : f.code === "exhausted" ? `namespace ${this.#namespace} is exhausted (${f.remaining ?? "0"} IDs left)`
      : f.blockedUntil !== undefined ? (said ? "blocked" : `blocked (${f.code})`)
      : said ? "the authority refused this generator" : `refused (${f.code})`);
    const message = said ? `${head}: ${said}` : prefix ? `${head}: waiting on ${where}` : head;
    return new RangeIdError(f.code, message, {
      status: f.status,
      authorityCode: f.authorityCode,
      excerpt: f.excerpt,
      remaining: f.remaining,
      retryAfterMs: f.retryAfterMs,
      final: f.final,
      cause: f.noAnswer ? this.#lastCause : undefined,
    });
  }

  /** Counters from the engine: IDs issued, reserved and abandoned, requests, retries, grant latencies. */
  stats() {
    if (this.#closed) return { ...this.#finalStats, grantLatencyMs: { ...this.#finalStats.grantLatencyMs } };
    const s = this.#engine.stats(this.#localLeft());
    s.inFlight = [...this.#attempts.values()].filter((e) => !e.cancelled).length;
    return s;
  }

  /**
   * Resolves once no range request is in flight. On Workers, pass it to
   * `ctx.waitUntil` so a prefetch started while serving one request is not
   * cancelled when that request ends.
   */
  async settled(options) {
    const signal = signalOf(options);
    if (signal?.aborted) throw aborted(signal);
    let abort;
    const aborting = signal && new Promise((_, reject) => {
      abort = () => reject(aborted(signal));
      signal.addEventListener("abort", abort, { once: true });
    });
    // Awaited only while something is in flight; never left unhandled.
    aborting?.catch(() => {});
    try {
      for (;;) {
        const live = [...this.#attempts.values()].filter((e) => !e.cancelled);
        if (live.length === 0) return;
        const waits = [Promise.allSettled(live.map((e) => e.done)), ...live.map((e) => e.cancelledNow)];
        await Promise.race(aborting ? [...waits, aborting] : waits);
      }
    } finally {
      signal?.removeEventListener("abort", abort);
    }
  }

  /** The incarnation: 32 hex digits, fresh for each generator. */
  get incarnation() {
    return this.#incarnation;
  }

  /**
   * Stops: abandons the unused IDs (returns how many, as a decimal string),
   * aborts requests in flight, rejects waiters with `closed` and frees the
   * engine.
   */
  close() {
    if (this.#closed) return "0";
    const abandoned = this.#engine.close(this.#localLeft());
    this.#next = this.#end = 0;
    this.#bigNext = this.#bigEnd = 0n;
    this.#finalStats = { ...this.#engine.stats(0), inFlight: 0 };
    this.#closed = true;
    this.#engine.free();
    clearTimeout(this.#timer);
    for (const e of this.#attempts.values()) {
      e.cancelled = true;
      e.abort.abort();
    }
    for (const w of [...this.#waiters]) {
      this.#drop(w);
      w.reject(new RangeIdError("closed", "the generator was closed", { final: true }));
    }
    return abandoned;
  }

  /** `using ids = ...`: closes the generator at the end of the scope. */
  [DISPOSE]() {
    this.close();
  }

  /** `await using ids = await createGenerator(...)`: closes it at the end of the scope. */
  async [ASYNC_DISPOSE]() {
    this.close();
  }

  /**
   * Waits (up to `deadlineMs`) for the first range without issuing from it,
   * so misconfiguration fails at creation. Closes the generator on failure.
   */
  async warm() {
    // Asks without taking: a call that finds no ID counts as starved, and
    // waiting for the first range is not a caller going without.
    if (this.#closed) throw this.#error();
    const ready = () => !this.#closed && (this.#localLeft() > 0 || this.#engine.stats(0).available !== "0");
    if (ready()) return;
    this.#warming = true;
    try {
      await this.#wait(() => (ready() ? true : undefined), 0, this.#createSignal);
    } catch (e) {
      this.close();
      throw e;
    } finally {
      this.#warming = false;
    }
  }
}
