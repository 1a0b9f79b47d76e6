// The authority's admin API as the commands call it: the connection (--url,
// --token), one request with its timeout and its refusals as exit statuses,
// listings page by page, and the checks of arguments before anything is sent.
import { NAMESPACE_RE, NAMESPACE_RULE } from "./names.mjs";
import { Exit, out, usage } from "./exit.mjs";
import { table } from "./summary.mjs";

const TIMEOUT_MS = 30_000;
const DECIMAL_RE = /^[1-9][0-9]*$/;
const U64_MAX = (1n << 64n) - 1n;


export function connection(values) {
  const url = values.url ?? process.env.RANGEID_URL;
  const token = values.token ?? process.env.RANGEID_TOKEN;
  if (!url) throw usage("no authority URL: pass --url URL or set RANGEID_URL");
  let base;
  try {
    base = new URL(url);
  } catch {
    throw usage(`--url is not a URL: ${url}`);
  }
  if (base.protocol !== "http:" && base.protocol !== "https:") throw usage("--url must be http: or https:");
  if (!base.pathname.endsWith("/")) base.pathname += "/";
  if (/\/v1\/$/.test(base.pathname)) throw usage(`--url is the authority's root, without /v1: ${url.replace(/\/v1\/?$/, "")}`);
  return { base, token };
}

/** One request; resolves to {status, text, body} (body: parsed JSON or undefined). */
export async function call(conn, method, path, { body, auth = true } = {}) {
  if (auth && !conn.token) throw usage("no token: pass --token TOKEN or set RANGEID_TOKEN (mint one with `rangeid token`)");
  const url = new URL(path.replace(/^\//, ""), conn.base);
  const headers = { accept: "application/json" };
  if (auth) headers.authorization = `Bearer ${conn.token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  let response;
  let text;
  try {
    response = await fetch(url, { method, headers, body, signal: AbortSignal.timeout(TIMEOUT_MS) });
    text = await response.text();
  } catch (e) {
    const why = e?.name === "TimeoutError" ? `no answer within ${TIMEOUT_MS / 1000} s` : String(e?.cause?.code ?? e?.cause?.message ?? e?.message ?? e);
    throw new Exit(3, `could not reach the authority at ${url.origin}: ${why}`);
  }
  let parsed;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, text, body: parsed, url };
}

/** The answer's JSON when it is a success; throws the authority's refusal otherwise. */
export function ok(res, accept = [200]) {
  if (accept.includes(res.status) && res.body !== undefined) return res.body;
  const err = res.body?.error;
  if (err && typeof err.code === "string") {
    const extra = Object.entries(err)
      .filter(([k]) => k !== "code" && k !== "message")
      .map(([k, v]) => `${k} ${typeof v === "string" ? v : JSON.stringify(v)}`);
    const hint = res.status === 401 ? " (check --token / RANGEID_TOKEN)" : "";
    throw new Exit(1, `${err.code}: ${err.message}${extra.length ? ` (${extra.join(", ")})` : ""} [HTTP ${res.status}]${hint}`, { document: res.text });
  }
  if (res.status >= 200 && res.status < 300) {
    throw new Exit(3, `${res.url.origin} answered HTTP ${res.status} with something that is not JSON: is --url the authority?`);
  }
  const snippet = res.text.replace(/\s+/g, " ").slice(0, 160);
  throw new Exit(3, `${res.url.origin} answered HTTP ${res.status} without an error document${snippet ? `: ${snippet}` : ""}: is --url the authority?`);
}

export const nsPath = (name) => `v1/namespaces/${encodeURIComponent(name)}`;

/** One page of a namespace's newest-first listing (`grants`, `audit`): the
 * paging flags checked, the page printed, and how to get the next one. */
export async function pagedList({ values, args, conn }, { command, empty, header, row }) {
  const name = needNamespace(args[0]);
  needCount("--limit", values.limit, 1000);
  if (values.before !== undefined) needDecimal("--before", values.before);
  const res = await call(conn, "GET", `${nsPath(name)}/${command}${query({ limit: values.limit, before: values.before })}`);
  const body = ok(res);
  if (values.json) return out(res.text);
  const items = body[command];
  out(items.length === 0 ? empty : table(header, items.map(row)));
  if (body.nextBefore !== null) out(`more: rangeid ${command} ${name} --before ${body.nextBefore}${values.limit ? ` --limit ${values.limit}` : ""}`);
}

export function needNamespace(name) {
  if (name === undefined) throw usage("a namespace NAME is required");
  if (!NAMESPACE_RE.test(name)) throw usage(`${JSON.stringify(name)} is not a namespace name (${NAMESPACE_RULE})`);
  return name;
}

/** An ID-like value: a decimal from 1 to 2^64 - 1. */
export function needDecimal(flag, value) {
  if (value === undefined) throw usage(`${flag} is required`);
  if (!DECIMAL_RE.test(value)) throw usage(`${flag} must be a positive decimal integer, got ${JSON.stringify(value)}`);
  if (BigInt(value) > U64_MAX) throw usage(`${flag} must be at most ${U64_MAX} (2^64 - 1), got ${value}`);
  return value;
}

/** An optional count from 1 to `max`, as the authority checks it. */
export function needCount(flag, value, max) {
  if (value === undefined) return value;
  if (!DECIMAL_RE.test(value) || BigInt(value) > BigInt(max)) {
    throw usage(`${flag} must be a whole number from 1 to ${max}, got ${JSON.stringify(value)}`);
  }
  return value;
}

export function needReason(value) {
  if (value === undefined || value.trim() === "") throw usage("--reason TEXT is required (it is kept in the audit log)");
  return value;
}

export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : "";
}

