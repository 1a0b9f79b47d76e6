// The authority's JSON shapes, as the page reads them. They are not written
// here: schema.gen.ts is generated from the authority's OpenAPI document
// (edge-authority/src/front/openapi.rs, the one source; www/scripts/api-types.mjs),
// and this file only names its schemas and says where the page also reads
// authorities from before a field existed (those fields are optional here).
// Every ID-valued field is a decimal string and stays one: arithmetic on it
// goes through BigInt (lib/decimal.ts), never a JS number.
import type { components } from "./schema.gen";

type Schemas = components["schemas"];
/** `T` with the fields `K` optional: absent from older authorities. */
type Older<T, K extends keyof T> = Omit<T, K> & Partial<Pick<T, K>>;

/** A non-negative integer written in decimal, possibly past 2^53. */
export type Decimal = string;

export type Session = Schemas["Session"];
export type Role = Session["role"];

export type Limits = Schemas["Limits"];
export type SetLimits = Schemas["SetLimits"];

/** A namespace's summary; fence, limits, ledger and refusals are absent from
 * authorities before them. */
export type Summary = Older<Schemas["Summary"], "fence" | "limits" | "ledger" | "refusals" | "relays">;
export type Rate = Summary["grantRate"]["lastHour"];
export type Fence = Schemas["Summary"]["fence"];
export type Ledger = Schemas["Summary"]["ledger"];
/** One relay's reports; instances, live and refused are absent from
 * authorities before relays' instances were kept apart. */
export type RelayReport = Older<NonNullable<Ledger["relays"]>[number], "instances" | "live" | "refused">;

/** nextAfter is absent from authorities that do not page yet: read as null. */
export type NamespaceList = Omit<Older<Schemas["NamespaceList"], "nextAfter">, "namespaces"> & { namespaces: Summary[] };

/** A retained grant; sub is absent from authorities that did not record it. */
export type Grant = Older<Schemas["GrantEntry"], "sub">;
export type GrantList = Omit<Schemas["GrantList"], "grants"> & { grants: Grant[] };
export type Lookup = Older<Schemas["Lookup"], "sub">;

/** An audit entry; its action is kept open, as newer authorities add actions. */
export type AuditEntry = Omit<Schemas["AuditEntry"], "action"> & { action: string };
export type AuditList = Omit<Schemas["AuditList"], "audit"> & { audit: AuditEntry[] };

export type Rates = Schemas["Rates"];
export type RateWindow = Rates["window"];

export type CreateNamespace = Schemas["CreateNamespace"];
