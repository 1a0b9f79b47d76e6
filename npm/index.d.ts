/**
 * rangeid: unique positive integer IDs per namespace, issued locally from
 * ranges the authority reserved for this process.
 *
 * Guaranteed: no ID is issued twice within a namespace (across every
 * generator, restart and lost reply). Not guaranteed: any order between
 * IDs, gapless numbering, or secrecy. IDs are decimal strings so they stay
 * exact past 2^53 (a JS number is used only for IDs below 2^53).
 */

/** Stable error codes. */
export type RangeIdErrorCode =
  | "unavailable"
  | "exhausted"
  | "frozen"
  | "closed"
  | "invalid_config"
  | "unauthenticated"
  | "forbidden"
  | "namespace_not_found"
  | "invalid_request"
  | "request_conflict"
  | "payload_too_large"
  | "not_found"
  | "method_not_allowed";

/** The one error class the package throws; switch on `code`. */
export declare class RangeIdError extends Error {
  readonly name: "RangeIdError";
  readonly code: RangeIdErrorCode;
}

export interface GeneratorOptions {
  /** The authority's base URL, e.g. `http://127.0.0.1:8787`. */
  url: string;
  /** A generator token for the namespace (`Authorization: Bearer`). */
  token: string;
  /** The namespace to issue from. */
  namespace: string;
  /** Fixed range size; sets the first request and both bounds unless they are given. */
  rangeSize?: number;
  /** Smallest range to ask for (default 1,000). */
  minRangeSize?: number;
  /** Largest range to ask for (default 1,000,000; keep within the namespace's maxCount). */
  maxRangeSize?: number;
  /** A range should last about this long at the measured rate (default 10,000 ms). */
  targetLifetimeMs?: number;
  /** Ask for the next range while this much time's worth of IDs is left (default 2,000 ms). */
  prefetchLeadMs?: number;
  /** Range requests in flight at most, 1 to 4 (default 2). */
  maxOutstanding?: number;
  /** Resend a request under the same requestId when no reply came within this long (default 2,000 ms). */
  requestTimeoutMs?: number;
  /** How long `nextId` and creation wait for a range before rejecting (default 5,000 ms). */
  deadlineMs?: number;
  /** A custom fetch: a Service Binding's `fetch`, or a test's fault injector. */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
}

export interface GeneratorStats {
  incarnation: string;
  /** `running`, `exhausted`, `closed`, or the code that stopped it. */
  phase: string;
  issued: number;
  rangesInstalled: number;
  replaysInstalled: number;
  duplicatesIgnored: number;
  grantsRefused: number;
  requests: number;
  retries: number;
  /** Calls that found no ID ready. */
  starved: number;
  /** IDs abandoned by close, as a decimal string. */
  abandoned: string;
  /** IDs reserved and not yet issued, as a decimal string. */
  available: string;
  outstanding: number;
  inFlight: number;
  ratePerSecond: number;
  lastGrantMs: number;
  maxGrantMs: number;
  grantLatencyMs: { count: number; p50: number | null; p99: number | null; max: number | null };
}

/** One incarnation issuing IDs for one namespace. */
export declare class Generator {
  /** This generator's incarnation: 32 hex digits, fresh for each generator. */
  readonly incarnation: string;
  /** The next ID; resolves at once from the reserved range, else waits up to `deadlineMs`. */
  nextId(): Promise<string>;
  /** The next ID, or `undefined` when none is ready. Never waits. */
  tryNextId(): string | undefined;
  /**
   * Up to `n` contiguous IDs, all from one reserved range: fewer than `n`
   * when that range has fewer left (it never joins two ranges). Waits like `nextId`.
   */
  nextIds(n: number): Promise<string[]>;
  /** Like `nextId`, as a BigInt. */
  nextIdBigInt(): Promise<bigint>;
  /**
   * Resolves once no range request is in flight. On Workers, pass it to
   * `ctx.waitUntil` so a prefetch started while serving one request is not
   * cancelled when that request ends.
   */
  settled(): Promise<void>;
  /** Counters and grant latencies. */
  stats(): GeneratorStats;
  /** Abandons the unused IDs and returns how many (decimal string); later calls reject with `closed`. */
  close(): string;
}

/**
 * Creates a generator (a new incarnation) and waits for its first range,
 * so bad credentials or an unknown namespace reject here.
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
