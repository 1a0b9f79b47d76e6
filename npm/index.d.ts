/// <reference lib="esnext.disposable" />
/**
 * rangeid: unique positive integer IDs per namespace, issued locally from
 * ranges the authority reserved for this process.
 *
 * Guaranteed: no ID is issued twice within a namespace (across every
 * generator, restart and lost reply). Not guaranteed: any order between
 * IDs, gapless numbering, or secrecy. IDs are decimal strings so they stay
 * exact past 2^53 (a JS number is used only for IDs below 2^53).
 */

/**
 * Every code a `RangeIdError` carries. Wire codes map one-to-one:
 * `namespace_exhausted` is `exhausted`, `namespace_frozen` is `frozen`, a
 * code this version does not know is `refused` (its text in
 * `authorityCode`); every other code is the wire code itself.
 */
export type RangeIdErrorCode =
  | "unavailable"
  | "exhausted"
  | "frozen"
  | "closed"
  | "aborted"
  | "invalid_config"
  | "refused"
  | "unauthenticated"
  | "forbidden"
  | "not_found"
  | "namespace_not_found"
  | "invalid_request"
  | "request_conflict"
  | "payload_too_large"
  | "method_not_allowed"
  | "grant_not_found"
  | "namespace_exists"
  | "floor_below_next";

interface RangeIdErrorBase extends Error {
  readonly name: "RangeIdError";
  /** The HTTP status of the answer, when there was one (from the authority, or from whatever answered instead). */
  readonly status?: number;
  /** The authority's wire code (`namespace_exhausted`, ...), when a rangeid authority answered. */
  readonly authorityCode?: string;
  /**
   * The first bytes (at most 160, whitespace collapsed) of an answer that
   * was not a rangeid authority's: a proxy's or firewall's page, a wrong
   * URL's 404. Absent when its body was empty or a rangeid authority answered.
   */
  readonly excerpt?: string;
  /**
   * On errors from a generator's calls: `true` when this generator can
   * never issue again (closed, exhausted, refused for good by the
   * authority); `false` when it keeps asking by itself and a later call may
   * succeed (`unavailable`, `frozen`, and a block: a 4xx from something
   * that is not the authority, or a token refused even fresh).
   */
  readonly final?: boolean;
}

/** No ID is ready: no range yet, and the authority is slow, busy or unreachable. */
export interface UnavailableError extends RangeIdErrorBase {
  readonly code: "unavailable";
  /** The authority's `Retry-After`, in ms, when it sent one. */
  readonly retryAfterMs?: number;
  /** The network error of the last attempt, when it got no answer. */
  readonly cause?: unknown;
}

/**
 * The namespace has no IDs left for this generator (final), or, from
 * `nextIds(n)`, fewer than `n` counting what this generator holds (no ID
 * was taken; a smaller batch may still come).
 */
export interface ExhaustedError extends RangeIdErrorBase {
  readonly code: "exhausted";
  /** How many IDs the namespace has left to grant, as a decimal string: "0", or from `nextIds` what it last said. */
  readonly remaining: string;
  /** From `nextIds(n)`: how many IDs this generator holds (decimal string), fewer than `n` with `remaining`. */
  readonly available?: string;
}

/**
 * A bad argument, or the authority refused a malformed request. From
 * `nextIds(n)` with `n` above what one call may ask for, `limit` says the
 * most (8 times the largest range: `maxRangeSize`, and the namespace's
 * `maxCount`); no ID was taken.
 */
export interface InvalidRequestError extends RangeIdErrorBase {
  readonly code: "invalid_request";
  readonly limit?: number;
}

/** A wait was ended by its `AbortSignal`; `cause` is the signal's reason. No ID was taken. */
export interface AbortedError extends RangeIdErrorBase {
  readonly code: "aborted";
  readonly cause: unknown;
}

/** The authority refused with a code this version does not know. Final. */
export interface RefusedError extends RangeIdErrorBase {
  readonly code: "refused";
  readonly status: number;
  readonly authorityCode: string;
}

/** Every other failure: `frozen` (waiting may help), `closed`, `invalid_config`, and the authority's codes. */
export interface OtherRangeIdError extends RangeIdErrorBase {
  readonly code: Exclude<RangeIdErrorCode, "unavailable" | "exhausted" | "refused" | "invalid_request" | "aborted">;
}

/**
 * The one error class the package throws. After `e instanceof
 * RangeIdError`, `switch (e.code)` narrows to the fields that code carries.
 */
export type RangeIdError =
  | UnavailableError
  | ExhaustedError
  | RefusedError
  | InvalidRequestError
  | AbortedError
  | OtherRangeIdError;
export declare const RangeIdError: {
  new (code: RangeIdErrorCode, message: string, details?: object): RangeIdError;
  readonly prototype: RangeIdError;
};

/** A token source: called for every range request; `refresh` is true right after a 401. */
export type TokenSource = (context: { refresh: boolean }) => string | Promise<string>;

export interface GeneratorOptions {
  /** The authority's base URL, e.g. `http://127.0.0.1:8787`. */
  url: string;
  /**
   * A generator token for the namespace (`Authorization: Bearer`), or a
   * function returning one. After a 401 the function is called with
   * `{ refresh: true }` and the request retried at once; refused again, the
   * generator is blocked and asks again with backoff, each time with
   * `{ refresh: true }`. A rotated token must keep the same `sub`.
   */
  token: string | TokenSource;
  /** The namespace to issue from. */
  namespace: string;
  /**
   * Allow a plain `http:` url to another machine, which sends the token
   * unencrypted (default false: `http:` only to localhost, 127.0.0.0/8 and
   * `[::1]`; anything else must be `https:`).
   */
  allowInsecureHttp?: boolean;
  /**
   * The relay region that serves this generator: its range requests are sent
   * as `POST /v1/ranges?region=REGION`, so that while the namespace's relays
   * are on they go to that region's relay (one relay per namespace and
   * region; see the authority's docs/relays.md). 1 to 32 characters of
   * `a-z`, `0-9` and `-` (the authority's rule); anything else is refused
   * with `invalid_config` before any request is sent. Ignored while the
   * namespace's relays are off: requests go to the namespace object as
   * usual. Default: the region the request arrives from (on Cloudflare its
   * continent, else its data center; `default` where there is neither).
   */
  region?: string;
  /** Fixed range size; sets both bounds unless they are given. */
  rangeSize?: number;
  /** Smallest range to ask for, and the first request's size (default 1,000). */
  minRangeSize?: number;
  /** Largest range to ask for (default 1,000,000). */
  maxRangeSize?: number;
  /** Once the rate is known, a range should last about this long (default 10,000 ms). */
  targetLifetimeMs?: number;
  /** Ask for the next range while this much time's worth of IDs is left (default 2,000 ms). */
  prefetchLeadMs?: number;
  /** Range requests in flight at most, 1 to 4 (default 2). */
  maxOutstanding?: number;
  /** Send a request again under the same requestId when an attempt got no answer within this long (default 2,000 ms). */
  requestTimeoutMs?: number;
  /** The first retry backoff after a failure; it doubles per attempt (default 50 ms). */
  retryInitialMs?: number;
  /** The longest retry backoff (default 2,000 ms). */
  retryMaxMs?: number;
  /** How long `nextId` and creation wait for a range before rejecting (default 5,000 ms). */
  deadlineMs?: number;
  /** A custom fetch: a Service Binding's `fetch`, a test's fault injector, or `createTestAuthority().fetch` from `rangeid/testing`. */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  /** Aborts `createGenerator`'s wait for the first range (the generator is closed; it rejects with `aborted`). */
  signal?: AbortSignal;
}

/** Options of a call that may wait. */
export interface WaitOptions {
  /** Ends the wait: the call rejects with `aborted` (its `cause` the signal's reason) and takes no ID. */
  signal?: AbortSignal;
}

export interface GeneratorStats {
  incarnation: string;
  /**
   * `running`; `blocked` while something other than the authority refuses
   * its requests, or the token is refused even fresh (it asks again by
   * itself); `exhausted`, `closed`, or the code that stopped it for good.
   */
  phase: string;
  /** IDs returned to callers. */
  issued: number;
  rangesInstalled: number;
  replaysInstalled: number;
  /** Grants that repeated one already installed (a duplicated reply), ignored. */
  duplicatesIgnored: number;
  /**
   * Grants received but not installed: for no request of this generator, or
   * inconsistent with the request (a misrouted or misbehaving authority; a
   * refusal by the authority is not counted here).
   */
  grantsRefused: number;
  /** Failures of superseded attempts, ignored. */
  staleIgnored: number;
  requests: number;
  retries: number;
  /** Requests given up unanswered after 10 minutes (a new one replaces each). */
  requestsExpired: number;
  /** Calls that found no ID ready. */
  starved: number;
  /** Times the generator became blocked (a 4xx not from the authority, or the token refused even fresh). */
  blocks: number;
  /** Times a block ended: the authority answered again. */
  unblocks: number;
  /** IDs abandoned by close, as a decimal string. */
  abandoned: string;
  /** IDs installed and not yet issued, as a decimal string. */
  available: string;
  /** IDs reserved ahead: installed and not issued, plus requests in flight (decimal string). */
  reservedAhead: string;
  /**
   * IDs reserved in all by this generator: every range granted to it, and
   * requests given up unanswered (their ranges may have been committed).
   * Only grows (decimal string); requests in flight are in `reservedAhead`.
   */
  reserved: string;
  /** Range requests in flight. */
  outstanding: number;
  /** Attempts the driver is waiting on. */
  inFlight: number;
  ratePerSecond: number;
  /** Grant round trips in ms: p50 and p99 over the last 64, the longest ever. */
  grantLatencyMs: { count: number; p50: number; p99: number; max: number };
}

/** One incarnation issuing IDs for one namespace. */
export declare class Generator {
  /** This generator's incarnation: 32 hex digits, fresh for each generator. */
  readonly incarnation: string;
  /** The next ID; resolves at once from the reserved range, else waits up to `deadlineMs`. */
  nextId(options?: WaitOptions): Promise<string>;
  /** The next ID, or `undefined` when none is ready. Never waits. */
  tryNextId(): string | undefined;
  /**
   * Exactly `n` IDs (1 to 8 times the largest range), in no particular
   * relation to each other: across ranges when it must, so not necessarily
   * contiguous. Waits like `nextId`; all or nothing: a call that fails
   * (deadline, abort, fewer than `n` left in the namespace: `exhausted`
   * with `remaining` and `available`) takes no ID.
   */
  nextIds(n: number, options?: WaitOptions): Promise<string[]>;
  /** Like `nextId`, as a BigInt. */
  nextIdBigInt(options?: WaitOptions): Promise<bigint>;
  /**
   * Resolves once no range request is in flight. On Workers, pass it to
   * `ctx.waitUntil` so a prefetch started while serving one request is not
   * cancelled when that request ends.
   */
  settled(options?: WaitOptions): Promise<void>;
  /** Counters and grant latencies. */
  stats(): GeneratorStats;
  /** Abandons the unused IDs and returns how many (decimal string); later calls reject with `closed`. */
  close(): string;
  /** `using ids = ...`: `close()` at the end of the scope. */
  [Symbol.dispose](): void;
  /** `await using ids = await createGenerator(...)`: `close()` at the end of the scope. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Creates a generator (a new incarnation) and waits for its first range,
 * so bad credentials, an unknown namespace or a wrong URL reject here.
 */
export declare function createGenerator(options: GeneratorOptions): Promise<Generator>;

/**
 * Loads the wasm module explicitly: a `WebAssembly.Module` (Workers), bytes,
 * or a URL. Node, browsers and Workers load it on their own; other runtimes
 * must call this first.
 */
export declare function init(moduleOrBytes: WebAssembly.Module | BufferSource | URL | string | Response): Promise<void>;

/** Like `init`, synchronously, from a `WebAssembly.Module` or bytes. */
export declare function initSync(moduleOrBytes: WebAssembly.Module | BufferSource): void;
