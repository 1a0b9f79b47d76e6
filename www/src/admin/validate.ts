// Checks of the admin forms' input, before anything is sent. Each returns
// the request to send or the problems, per field, in words.
import type { CreateNamespace, Decimal } from "../api/types";
import { grouped, MAX_SAFE, MAX_U64, parseDecimal } from "../lib/decimal";

export const DEFAULTS = { first: "1", max: MAX_SAFE.toString(), maxCount: "10000000" } as const;
export const REASON_MAX = 1024;
/** The namespace-name rule; core's `Namespace::PATTERN` is the source, and
 *  tests/npm/one-source.test.mjs fails if this copy drifts from it. */
export const NAMESPACE_RE = /^[a-z0-9][a-z0-9._-]{0,62}$/;

export type Problems<K extends string> = Partial<Record<K, string>>;
export type Checked<T, K extends string> = { ok: T; warnings: Problems<K> } | { problems: Problems<K>; warnings: Problems<K> };

export interface CreateInput {
  namespace: string;
  first: string;
  max: string;
  maxCount: string;
}

export function checkCreate(input: CreateInput): Checked<CreateNamespace, keyof CreateInput> {
  const problems: Problems<keyof CreateInput> = {};
  const warnings: Problems<keyof CreateInput> = {};
  const namespace = input.namespace.trim();
  if (!NAMESPACE_RE.test(namespace)) {
    problems.namespace = "1 to 63 of a-z, 0-9, '.', '_' and '-', starting with a letter or digit.";
  }
  const first = parseDecimal(input.first);
  const max = parseDecimal(input.max);
  const maxCount = parseDecimal(input.maxCount);
  if (first === null || first < 1n || first > MAX_U64) problems.first = `A whole number from 1 to ${grouped(MAX_U64)}.`;
  if (max === null || max > MAX_U64) problems.max = `A whole number up to ${grouped(MAX_U64)}.`;
  else if (first !== null && max < first) problems.max = "At least the first ID.";
  else if (max > MAX_SAFE) {
    warnings.max = "Past 2^53 - 1 (9,007,199,254,740,991): IDs there are not exact as JavaScript numbers, so every client must keep them as strings or BigInt.";
  }
  if (maxCount === null || maxCount < 1n || maxCount > MAX_SAFE) problems.maxCount = `A whole number from 1 to ${grouped(MAX_SAFE)}.`;
  if (Object.keys(problems).length > 0) return { problems, warnings };
  return {
    ok: { namespace, first: first!.toString(), max: max!.toString(), maxCount: Number(maxCount!) },
    warnings,
  };
}

/** A new `next` above the current one and at most one past `max`. */
export function checkFloor(text: string, next: Decimal, max: Decimal): { ok: Decimal } | { problem: string } {
  const floor = parseDecimal(text);
  if (floor === null) return { problem: "A whole number in decimal digits." };
  if (floor <= BigInt(next)) return { problem: `Above the current next ID, ${next}: a floor only moves up.` };
  if (floor > BigInt(max) + 1n) return { problem: `At most ${BigInt(max) + 1n} (one past the max ID; that exhausts the namespace).` };
  return { ok: floor.toString() };
}

export function checkReason(text: string): { ok: string } | { problem: string } {
  const reason = text.trim();
  const length = [...reason].length;
  if (length === 0) return { problem: "Say why: it goes into the audit log." };
  if (length > REASON_MAX) return { problem: `At most ${REASON_MAX} characters (now ${length}).` };
  return { ok: reason };
}

export const LIMIT_MAX = { grantsPerSecond: 1_000_000n, ledgerRows: 1_000_000_000n, subLedgerRows: 1_000_000_000n } as const;

export interface LimitsInput {
  grantsPerSecond: string;
  ledgerRows: string;
  subLedgerRows: string;
}

/** Whole numbers within their bounds, a sub's rows within the ledger's. */
export function checkLimits(input: LimitsInput): Checked<{ grantsPerSecond: number; ledgerRows: number; subLedgerRows: number }, keyof LimitsInput> {
  const problems: Problems<keyof LimitsInput> = {};
  const values: Partial<Record<keyof LimitsInput, bigint>> = {};
  for (const key of Object.keys(LIMIT_MAX) as (keyof LimitsInput)[]) {
    const v = parseDecimal(input[key]);
    if (v === null || v < 1n || v > LIMIT_MAX[key]) problems[key] = `A whole number from 1 to ${grouped(LIMIT_MAX[key])}.`;
    else values[key] = v;
  }
  if (values.subLedgerRows !== undefined && values.ledgerRows !== undefined && values.subLedgerRows > values.ledgerRows) {
    problems.subLedgerRows = "At most the ledger's rows.";
  }
  if (Object.keys(problems).length > 0) return { problems, warnings: {} };
  return {
    ok: { grantsPerSecond: Number(values.grantsPerSecond!), ledgerRows: Number(values.ledgerRows!), subLedgerRows: Number(values.subLedgerRows!) },
    warnings: {},
  };
}
