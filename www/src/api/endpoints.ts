// The API v1 calls the page makes, one function each.
import { request } from "./http";
import type {
  AuditEntry, AuditList, CreateNamespace, Decimal, GrantList, Limits, Lookup, NamespaceList, Rates, RateWindow, Session, Summary,
} from "./types";

const ns = (name: string) => `/v1/namespaces/${encodeURIComponent(name)}`;

function query(params: Record<string, string | number | null | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined) q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : "";
}

export const getSession = (token: string) => request<Session>(token, "GET", "/v1/session");

/** Every namespace the token may read, fetched page by page (1,000 a page). */
export async function listNamespaces(token: string): Promise<Summary[]> {
  const all: Summary[] = [];
  let after: string | null = null;
  do {
    const page: NamespaceList = await request<NamespaceList>(token, "GET", `/v1/namespaces${query({ limit: 1000, after })}`);
    all.push(...page.namespaces);
    after = page.nextAfter ?? null;
  } while (after !== null);
  return all;
}

export const getSummary = (token: string, name: string) => request<Summary>(token, "GET", ns(name));

export const listGrants = (token: string, name: string, limit: number, before: string | null) =>
  request<GrantList>(token, "GET", `${ns(name)}/grants${query({ limit, before })}`);

export const lookup = (token: string, name: string, id: Decimal) =>
  request<Lookup>(token, "GET", `${ns(name)}/lookup${query({ id })}`);

export const getRates = (token: string, name: string, window: RateWindow) =>
  request<Rates>(token, "GET", `${ns(name)}/rates${query({ window })}`);

export const listAudit = (token: string, name: string, limit: number, before: string | null) =>
  request<AuditList>(token, "GET", `${ns(name)}/audit${query({ limit, before })}`);

/** The namespace's newest audit entry: what an admin action just wrote. */
export async function latestAudit(token: string, name: string): Promise<AuditEntry | null> {
  const page = await listAudit(token, name, 1, null);
  return page.audit[0] ?? null;
}

export const createNamespace = (token: string, body: CreateNamespace) =>
  request<Summary>(token, "POST", "/v1/namespaces", body);

export const raiseFloor = (token: string, name: string, floor: Decimal) =>
  request<Summary>(token, "POST", `${ns(name)}/floor`, { floor });

export const setFrozen = (token: string, name: string, frozen: boolean, reason: string) =>
  request<Summary>(token, "POST", `${ns(name)}/${frozen ? "freeze" : "unfreeze"}`, { reason });

/** Sets the limits given (a number sets one, null puts it back to the default). */
export const setLimits = (token: string, name: string, limits: { [K in keyof Limits]?: number | null }) =>
  request<Summary>(token, "POST", `${ns(name)}/limits`, limits);
