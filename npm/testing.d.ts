/**
 * rangeid/testing: an in-process rangeid authority for your own tests.
 * Hand its `fetch` to `createGenerator` in place of the network; its
 * decisions (grants, replays, exhaustion, freezes, what every answer says)
 * are the authority's own, from the same Rust core compiled to wasm. Node,
 * Deno and Bun.
 *
 * ```js
 * const authority = createTestAuthority();
 * const ids = await createGenerator({ url: authority.url, token: "test", namespace: "orders", fetch: authority.fetch });
 * authority.unavailable({ times: 2, retryAfter: 0 });
 * ```
 */

/** A namespace's bounds: IDs as decimal strings, BigInts or safe integers. */
export interface TestNamespace {
  /** The first ID (default 1). */
  first?: string | bigint | number;
  /** The last ID, inclusive (default 2^53 - 1). */
  max?: string | bigint | number;
  /** The largest range one request may take (default 10,000,000). */
  maxCount?: number;
}

export interface TestAuthorityOptions extends TestNamespace {
  /**
   * The namespaces that exist, by name (with their own bounds) or as a list
   * of names; any other is answered `404 namespace_not_found`. Without it,
   * every namespace asked for is made on first use with the bounds above.
   */
  namespaces?: string[] | Record<string, TestNamespace>;
  /** The bearer tokens accepted (default: any); others get `401 unauthenticated`. */
  tokens?: string[];
  /** The base URL it answers for (default `https://rangeid.test`); any URL ending in `/v1/ranges` is served. */
  url?: string;
}

/** A range the authority granted. */
export interface TestGrant {
  namespace: string;
  incarnation: string;
  requestId: string;
  /** The first ID (decimal string). */
  start: string;
  /** One past the last ID (decimal string). */
  end: string;
  /** The token it was granted to. */
  token: string;
}

export interface TestAuthority {
  /** The base URL to give `createGenerator`. */
  readonly url: string;
  /** The endpoint requests go to (`url` + `/v1/ranges`). */
  readonly endpoint: string;
  /** The `fetch` to give `createGenerator`. */
  readonly fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
  /** Requests served, and answers per injected fault, so far. */
  readonly counts: { requests: number; lost: number; unavailable: number; proxy: number; unauthenticated: number };
  /** The next `times` range requests (default: until `heal()`) are answered `503 unavailable`, with `Retry-After: retryAfter` seconds (default 1, as the authority). */
  unavailable(options?: { times?: number; retryAfter?: number }): this;
  /** The next `times` replies (default 1) are lost after the authority committed them: the fetch rejects with a TypeError. */
  loseReplies(options?: { times?: number }): this;
  /** Every answer takes `ms` (0: none again); an aborted request rejects at once. */
  slow(ms: number): this;
  /** A proxy in front answers the next `times` requests (default: until `heal()`) with its own page (default a 403 HTML page). */
  proxyError(options?: { status?: number; body?: string; times?: number }): this;
  /** Ends every injected fault (not a freeze or an exhaustion). */
  heal(): this;
  /** Freezes a namespace (every one when none is named, those made later too): new ranges are refused with `423 namespace_frozen`. */
  freeze(namespace?: string): this;
  /** Thaws it. */
  thaw(namespace?: string): this;
  /** Leaves a namespace (every one when none is named, those made later too) with no ID to grant: `409 namespace_exhausted`. */
  exhaust(namespace?: string): this;
  /** Raises a namespace's next ID to `to`, as an operator's floor (never lowers it; throws below). */
  floor(namespace: string, to: string | bigint | number): this;
  /** What a namespace has left to grant (decimal string). */
  remaining(namespace: string): string;
  /** Every range granted so far. */
  readonly grants: TestGrant[];
  /** Throws unless every ID is distinct and inside a range granted (in `namespace`, when named); returns how many were checked. */
  check(ids: Iterable<string | bigint>, namespace?: string): number;
}

/** A new in-process authority; throws a TypeError or `invalid_config: ...` for bad options. */
export declare function createTestAuthority(options?: TestAuthorityOptions): TestAuthority;
