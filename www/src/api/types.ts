// The authority's JSON shapes (GET /v1/openapi.json is authoritative).
// Every ID-valued field is a decimal string and stays one: arithmetic on
// it goes through BigInt (lib/decimal.ts), never a JS number.

/** A non-negative integer written in decimal, possibly past 2^53. */
export type Decimal = string;

export type Role = "generator" | "reader" | "admin";

export interface Session {
  sub: string;
  role: Role;
  /** Namespaces the token may use, or ["*"]. */
  ns: string[];
  /** Expiry, Unix seconds. */
  exp: number;
}

export interface Rate {
  ranges: number;
  idsPerSecond: number;
}

export interface Fence {
  mark: Decimal;
  skipped: Decimal;
  rollbacks: number;
  witnessBehind: number;
}

/** What callers may add (authorities from the limits on). */
export interface Limits {
  /** New grants per second one token sub may take. */
  grantsPerSecond: number;
  /** Rows the grant ledger may hold. */
  ledgerRows: number;
  /** Rows one token sub may hold. */
  subLedgerRows: number;
}

/** What the grant ledger holds. */
export interface Ledger {
  rows: number;
  /** The namespace object's storage, where the runtime says. */
  bytes: number | null;
  topSubs: { sub: string | null; rows: number }[];
}

export interface Summary {
  namespace: string;
  first: Decimal;
  next: Decimal;
  /** Inclusive. */
  max: Decimal;
  remaining: Decimal;
  maxCount: number;
  state: "active" | "frozen";
  rangesGranted: number;
  idsGranted: Decimal;
  createdAt: string;
  lastGrantAt: string | null;
  grantRate: { lastMinute: Rate; lastHour: Rate };
  exhaustion: { seconds: number; at: string | null } | null;
  fence?: Fence;
  limits?: Limits;
  ledger?: Ledger;
}

export interface NamespaceList {
  namespaces: Summary[];
  /** Absent from authorities that do not page yet: read as null. */
  nextAfter?: string | null;
}

export interface Grant {
  start: Decimal;
  /** Exclusive. */
  end: Decimal;
  count: number;
  incarnation: string;
  requestId: string;
  at: string;
  /** Who took it (the token's sub), on authorities that record it. */
  sub?: string | null;
  /** Present for a grant kept in a span: committed between `at` and `span.lastAt`. */
  span?: { firstRequestId: string; grants: number; lastAt: string };
}

export interface GrantList {
  grants: Grant[];
  nextBefore: string | null;
}

export interface Lookup extends Grant {
  namespace: string;
  id: Decimal;
}

export interface AuditEntry {
  id: string;
  at: string;
  actor: string;
  action: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  reason: string | null;
}

export interface AuditList {
  audit: AuditEntry[];
  nextBefore: string | null;
}

export type RateWindow = "1h" | "24h";

export interface Rates {
  namespace: string;
  window: RateWindow;
  bucketSeconds: number;
  from: string;
  to: string;
  /** Sparse: only buckets with grants. */
  buckets: { minute: string; ranges: number; ids: Decimal }[];
}

export interface CreateNamespace {
  namespace: string;
  first?: Decimal;
  max?: Decimal;
  maxCount?: number;
}
