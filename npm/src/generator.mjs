// The generator: a thin JS driver around the wasm lease engine.
//
// The engine (Rust, in wasm) decides everything: which range to install,
// when to ask for the next one, how to retry. This file owns what wasm
// cannot: the clock, timers, fetch and promises. IDs are handed out from a
// small local block taken from the engine, so the JS/wasm boundary is
// crossed once per block, not once per ID.

import { RangeIdError, codeFromMessage } from "./errors.mjs";

const BLOCK = 1024;

/** Whether no ID can come from waiting: every code but these two is final. */
const isFinal = (code) => code !== "unavailable" && code !== "frozen";

const now = () => performance.now();

function checkCount(options, name, min, max) {
  const v = options[name];
  if (v === undefined) return undefined;
  if (!Number.isSafeInteger(v) || v < min || v > max) {
    throw new RangeIdError("invalid_config", `${name} must be a whole number from ${min} to ${max}`);
  }
  return v;
}

/** Checks user options and turns them into the engine's options JSON. */
export function engineOptions(options) {
  if (options === null || typeof options !== "object") {
    throw new RangeIdError("invalid_config", "options must be an object");
  }
  const known = new Set([
    "url", "token", "namespace", "rangeSize", "minRangeSize", "maxRangeSize",
    "targetLifetimeMs", "prefetchLeadMs", "maxOutstanding", "requestTimeoutMs",
    "deadlineMs", "fetch",
  ]);
  for (const key of Object.keys(options)) {
    if (!known.has(key)) throw new RangeIdError("invalid_config", `unknown option ${key}`);
  }
  const { url, token, namespace } = options;
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
  if (typeof token !== "string" || token.length === 0) {
    throw new RangeIdError("invalid_config", "token must be a non-empty string");
  }
  if (typeof namespace !== "string") throw new RangeIdError("invalid_config", "namespace must be a string");
  if (options.fetch !== undefined && typeof options.fetch !== "function") {
    throw new RangeIdError("invalid_config", "fetch must be a function");
  }
  const big = Number.MAX_SAFE_INTEGER;
  const json = { namespace };
  // These pass to the engine under the same names, checked here as whole numbers.
  for (const [name, min, max] of [
    ["rangeSize", 1, big], ["minRangeSize", 1, big], ["maxRangeSize", 1, big],
    ["targetLifetimeMs", 1, big], ["prefetchLeadMs", 0, big], ["maxOutstanding", 1, 4],
    ["requestTimeoutMs", 1, big],
  ]) {
    const v = checkCount(options, name, min, max);
    if (v !== undefined) json[name] = v;
  }
  const deadlineMs = checkCount(options, "deadlineMs", 1, 2 ** 31 - 1) ?? 5000;
  const endpoint = new URL("v1/ranges", base.href.endsWith("/") ? base.href : base.href + "/").href;
  return { json: JSON.stringify(json), endpoint, token, deadlineMs, fetch: options.fetch };
}

function retryAfterMs(header) {
  if (header === null) return -1;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(header);
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : -1;
}

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** One incarnation issuing IDs for one namespace. */
export class Generator {
  #engine;
  #endpoint;
  #token;
  #fetch;
  #deadlineMs;
  // The local block: numbers while every ID in it is exact, else BigInts.
  #next = 0;
  #end = 0;
  #bigNext = 0n;
  #bigEnd = 0n;
  #timer = undefined;
  #timerAt = Infinity;
  #waiters = [];
  // Requests in flight: requestId -> { abort, done }.
  #inflight = new Map();
  #latencies = [];
  #closed = false;
  #abandonedHere = 0n;

  constructor(Engine, options) {
    const o = engineOptions(options);
    try {
      this.#engine = new Engine(o.json, now());
    } catch (e) {
      throw new RangeIdError(codeFromMessage(e), String(e && e.message ? e.message : e));
    }
    this.#endpoint = o.endpoint;
    this.#token = o.token;
    this.#deadlineMs = o.deadlineMs;
    this.#fetch = o.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /** The next ID, or `undefined` when none is ready (never waits). */
  tryNextId() {
    if (this.#next < this.#end) return String(this.#next++);
    return this.#tryNextSlow();
  }

  #tryNextSlow() {
    if (this.#bigNext < this.#bigEnd) return (this.#bigNext++).toString();
    return this.#fill(BLOCK) ? this.tryNextId() : undefined;
  }

  #localLeft() {
    return this.#next < this.#end || this.#bigNext < this.#bigEnd;
  }

  /**
   * Moves up to `n` IDs of one range from the engine into the local block
   * (which must be empty); false when none is ready. The one place the
   * boundary is crossed to issue.
   */
  #fill(n) {
    if (this.#closed) return false;
    const count = this.#engine.take(n);
    if (this.#engine.shouldPoll()) this.#pump();
    if (count === 0) return false;
    if (this.#engine.blockIsSafe()) {
      this.#next = this.#engine.blockStartNumber();
      this.#end = this.#next + count;
      this.#bigNext = this.#bigEnd = 0n;
    } else {
      this.#bigNext = BigInt(this.#engine.blockStartString());
      this.#bigEnd = this.#bigNext + BigInt(count);
      this.#next = this.#end = 0;
    }
    return true;
  }

  /** The next ID; waits for a range up to `deadlineMs`, then rejects. */
  nextId() {
    const id = this.tryNextId();
    if (id !== undefined) return Promise.resolve(id);
    return this.#wait((resolve) => {
      const v = this.tryNextId();
      if (v === undefined) return false;
      resolve(v);
      return true;
    });
  }

  /** Like `nextId`, as a BigInt. */
  async nextIdBigInt() {
    return BigInt(await this.nextId());
  }

  /**
   * Up to `n` contiguous IDs from one range: fewer than `n` when the range
   * has fewer left (never joining two ranges). Waits like `nextId`.
   */
  nextIds(n) {
    if (!Number.isSafeInteger(n) || n < 1 || n > 2 ** 32 - 1) {
      return Promise.reject(new RangeIdError("invalid_request", "n must be a whole number from 1 to 2^32 - 1"));
    }
    const got = this.#tryTake(n);
    if (got !== undefined) return Promise.resolve(got);
    return this.#wait((resolve) => {
      const v = this.#tryTake(n);
      if (v === undefined) return false;
      resolve(v);
      return true;
    });
  }

  // The local block is part of one range, so a batch from it is too.
  #tryTake(n) {
    if (!this.#localLeft() && !this.#fill(n)) return undefined;
    const out = [];
    if (this.#next < this.#end) {
      const k = Math.min(n, this.#end - this.#next);
      for (let i = 0; i < k; i++) out.push(String(this.#next++));
    } else {
      const left = this.#bigEnd - this.#bigNext;
      const k = BigInt(n) < left ? BigInt(n) : left;
      for (let i = 0n; i < k; i++) out.push((this.#bigNext++).toString());
    }
    return out;
  }

  #why() {
    return this.#closed ? "closed" : this.#engine.why();
  }

  #wait(attempt) {
    const final = this.#why();
    if (isFinal(final)) return Promise.reject(new RangeIdError(final, `no ID: ${final}`));
    return new Promise((resolve, reject) => {
      const waiter = { attempt, resolve, reject, timer: undefined };
      waiter.timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        const code = this.#why();
        reject(new RangeIdError(code, `no ID within ${this.#deadlineMs} ms: ${code}`));
      }, this.#deadlineMs);
      this.#waiters.push(waiter);
      // Arm the wake-up timer afresh in this context: on Workers, timers and
      // fetches started while serving an earlier request die with it.
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#timerAt = Infinity;
      this.#pump();
    });
  }

  #serveWaiters() {
    while (this.#waiters.length > 0) {
      const w = this.#waiters[0];
      if (!w.attempt(w.resolve)) break;
      clearTimeout(w.timer);
      this.#waiters.shift();
    }
    const code = this.#why();
    if (this.#waiters.length > 0 && isFinal(code)) {
      for (const w of this.#waiters.splice(0)) {
        clearTimeout(w.timer);
        w.reject(new RangeIdError(code, `no ID: ${code}`));
      }
    }
  }

  /** Sends whatever the engine wants sent, and schedules its next wake-up. */
  #pump() {
    if (this.#closed) return;
    let body;
    while ((body = this.#engine.pollRequest(now())) !== undefined) {
      this.#send(this.#engine.lastRequestId(), body);
    }
    const deadline = this.#engine.nextDeadline();
    if (deadline >= 0 && deadline < this.#timerAt) {
      clearTimeout(this.#timer);
      this.#timerAt = deadline;
      this.#timer = setTimeout(() => {
        this.#timerAt = Infinity;
        this.#timer = undefined;
        this.#pump();
      }, Math.max(0, Math.ceil(deadline - now())));
      this.#timer?.unref?.();
    }
  }

  #send(requestId, body) {
    // A retry replaces the attempt still in flight under the same id.
    this.#inflight.get(requestId)?.abort.abort();
    const entry = { abort: new AbortController(), done: undefined };
    this.#inflight.set(requestId, entry);
    entry.done = this.#exchange(requestId, body, entry);
  }

  async #exchange(requestId, body, entry) {
    const started = now();
    let outcome;
    try {
      const response = await this.#fetch(this.#endpoint, {
        method: "POST",
        headers: { authorization: `Bearer ${this.#token}`, "content-type": "application/json" },
        body,
        signal: entry.abort.signal,
      });
      const text = await response.text();
      if (this.#closed) return;
      outcome = this.#engine.handleResponse(
        requestId, response.status, text, retryAfterMs(response.headers.get("retry-after")), now(),
      );
      if (outcome === "installed") {
        this.#latencies.push(now() - started);
        if (this.#latencies.length > 4096) this.#latencies.splice(0, 2048);
      }
    } catch {
      if (this.#closed) return;
      this.#engine.handleTransportError(requestId, now());
    } finally {
      if (this.#inflight.get(requestId) === entry) this.#inflight.delete(requestId);
    }
    this.#serveWaiters();
    this.#pump();
  }

  /** Counters from the engine, plus grant latencies (ms) seen here. */
  stats() {
    const s = JSON.parse(this.#engine.stats());
    const sorted = [...this.#latencies].sort((a, b) => a - b);
    const local = this.#end - this.#next + Number(this.#bigEnd - this.#bigNext);
    s.available = (BigInt(s.available) + BigInt(local)).toString();
    s.abandoned = (BigInt(s.abandoned) + this.#abandonedHere).toString();
    s.issued -= local;
    s.grantLatencyMs = { count: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? null };
    s.inFlight = this.#inflight.size;
    return s;
  }

  /**
   * Resolves once no range request is in flight. On Workers, pass it to
   * `ctx.waitUntil` so a prefetch started while serving one request is not
   * cancelled when that request ends.
   */
  async settled() {
    while (this.#inflight.size > 0) await Promise.allSettled([...this.#inflight.values()].map((e) => e.done));
  }

  /** The incarnation: 32 hex digits, fresh for each generator. */
  get incarnation() {
    return this.#engine.incarnation();
  }

  /**
   * Stops: abandons the unused IDs (returns how many, as a decimal string),
   * aborts requests in flight and rejects waiters with `closed`.
   */
  close() {
    if (this.#closed) return "0";
    const local = BigInt(this.#end - this.#next) + (this.#bigEnd - this.#bigNext);
    this.#abandonedHere += local;
    this.#next = this.#end = 0;
    this.#bigNext = this.#bigEnd = 0n;
    this.#closed = true;
    const abandoned = (BigInt(this.#engine.close()) + local).toString();
    clearTimeout(this.#timer);
    for (const e of this.#inflight.values()) e.abort.abort();
    this.#inflight.clear();
    for (const w of this.#waiters.splice(0)) {
      clearTimeout(w.timer);
      w.reject(new RangeIdError("closed", "the generator was closed"));
    }
    return abandoned;
  }

  /**
   * Waits (up to `deadlineMs`) for the first range without issuing from it,
   * so misconfiguration fails at creation. Closes the generator on failure.
   */
  async warm() {
    const ready = () => this.#localLeft() || this.#fill(BLOCK);
    if (ready()) return;
    try {
      await this.#wait((resolve) => ready() && (resolve(), true));
    } catch (e) {
      this.close();
      throw e;
    }
  }
}
