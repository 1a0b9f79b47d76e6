#!/usr/bin/env node
// rangeid: the command line of the rangeid package. Makes signing keys and
// tokens (locally, with the authority's rules) and talks to an authority's
// admin API (namespaces, grants, lookups, audit, status).
//
//   npx rangeid --help                  (in a project that installed rangeid)
//   node npm/bin/rangeid.mjs --help     (from a clone of the repository)
//
// Node's built-ins only. IDs are decimal strings from end to end: nothing
// here turns one into a JS number (capacity and percentages use BigInt).
//
// Exit status: 0 done; 1 the authority refused (its code and message on
// stderr) or is unhealthy; 2 usage error or bad local input (flags, names,
// the keys file); 3 the authority could not be reached, or what answered
// is not an authority.
import { closeSync, existsSync, fchmodSync, openSync, readFileSync, renameSync, rmSync, writeSync } from "node:fs";
import { parseArgs } from "node:util";
import { deployCommand } from "./commands/deploy.mjs";
import { devCommand } from "./commands/dev.mjs";
import { duration, percent } from "./format.mjs";
import { NAMESPACE_RE, NAMESPACE_RULE } from "./names.mjs";
import { authorityMap, datedKid, KEY_ALGS, KeysError, KID_RE, MAX_TTL_SECONDS, keyMapText, mintToken, newKey, parseKeyMap } from "./keys.mjs";

const VERSION = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version;
const TIMEOUT_MS = 30_000;
const DECIMAL_RE = /^[1-9][0-9]*$/;
const DIGITS_RE = /^[0-9]+$/;
const U64_MAX = (1n << 64n) - 1n;
// A namespace's default max and the largest maxCount: 2^53 - 1, exact in JS.
const DEFAULT_MAX = "9007199254740991";
const MAX_COUNT = "9007199254740991";
// Options whose values are numbers or durations, never negative: "--to -5"
// gets a plain message. Text options keep parseArgs' advice (--reason=-x).
const NUMERIC_FLAGS = new Set(["--to", "--first", "--max", "--max-count", "--limit", "--before", "--page-size", "--ttl"]);

/** A failure with its exit status: 1 refused, 2 usage, 3 unreachable. */
class Exit extends Error {
  constructor(status, message, { document } = {}) {
    super(message);
    this.status = status;
    this.document = document;
  }
}
const usage = (message) => new Exit(2, message);

// ---------------------------------------------------------------- keys and tokens

/** `fn()`, with a refusal of bad local input (keys.mjs) as a usage error (exit 2). */
function local(fn) {
  try {
    return fn();
  } catch (e) {
    if (e instanceof KeysError) throw usage(e.message);
    throw e;
  }
}

/** The text of a file named by a flag; a read error is a usage error. */
function readFlagFile(flag, file) {
  try {
    return readFileSync(file, "utf8");
  } catch (e) {
    throw usage(`${flag} ${file}: ${e.message}`);
  }
}

/** Writes `text` to a new `file` with mode 0600; never over an existing file. */
function writeNewSecretFile(file, text) {
  let fd;
  try {
    fd = openSync(file, "wx", 0o600);
  } catch (e) {
    if (e.code === "EEXIST") throw usage(`${file} exists; keygen never overwrites a key file`);
    throw usage(`${file}: ${e.message}`);
  }
  try {
    fchmodSync(fd, 0o600);
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

/** Replaces `file` with `text` at once (a new file, mode 0600, renamed over it). */
function replaceSecretFile(file, text) {
  const tmp = `${file}.${process.pid}.tmp`;
  writeNewSecretFile(tmp, text);
  try {
    renameSync(tmp, file);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw usage(`${file}: ${e.message}`);
  }
}

const DAYS = (role) => `${MAX_TTL_SECONDS[role] / 86_400}d`;

// ---------------------------------------------------------------- the authority

function connection(values) {
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
async function call(conn, method, path, { body, auth = true } = {}) {
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
function ok(res, accept = [200]) {
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

const nsPath = (name) => `v1/namespaces/${encodeURIComponent(name)}`;

/** One page of a namespace's newest-first listing (`grants`, `audit`): the
 * paging flags checked, the page printed, and how to get the next one. */
async function pagedList({ values, args, conn }, { command, empty, header, row }) {
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

function needNamespace(name) {
  if (name === undefined) throw usage("a namespace NAME is required");
  if (!NAMESPACE_RE.test(name)) throw usage(`${JSON.stringify(name)} is not a namespace name (${NAMESPACE_RULE})`);
  return name;
}

/** An ID-like value: a decimal from 1 to 2^64 - 1. */
function needDecimal(flag, value) {
  if (value === undefined) throw usage(`${flag} is required`);
  if (!DECIMAL_RE.test(value)) throw usage(`${flag} must be a positive decimal integer, got ${JSON.stringify(value)}`);
  if (BigInt(value) > U64_MAX) throw usage(`${flag} must be at most ${U64_MAX} (2^64 - 1), got ${value}`);
  return value;
}

/** An optional count from 1 to `max`, as the authority checks it. */
function needCount(flag, value, max) {
  if (value === undefined) return value;
  if (!DECIMAL_RE.test(value) || BigInt(value) > BigInt(max)) {
    throw usage(`${flag} must be a whole number from 1 to ${max}, got ${JSON.stringify(value)}`);
  }
  return value;
}

function needReason(value) {
  if (value === undefined || value.trim() === "") throw usage("--reason TEXT is required (it is kept in the audit log)");
  return value;
}

function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : "";
}

// ---------------------------------------------------------------- output

function out(text) {
  process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
}

/** Columns padded to their widest cell; the last column is not padded. */
function table(header, rows) {
  const all = [header, ...rows].map((r) => r.map((c) => String(c ?? "")));
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i].length)));
  return all.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join("  ").trimEnd()).join("\n");
}

function pairs(list) {
  const width = Math.max(...list.map(([k]) => k.length));
  return list.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join("\n");
}

/** A rate for reading (3 significant digits). */
function rate(n) {
  if (typeof n !== "number") return String(n);
  return n >= 100 || Number.isInteger(n) ? String(Math.round(n)) : String(Number(n.toPrecision(3)));
}

/** remaining / (max - first + 1) as the admin page shows shares (BigInt). */
function percentLeft(summary) {
  const size = BigInt(summary.max) - BigInt(summary.first) + 1n;
  if (size <= 0n) return "-";
  return percent(BigInt(summary.remaining), size);
}

function exhaustionText(summary) {
  const e = summary.exhaustion;
  if (summary.remaining === "0") return "exhausted";
  if (!e) return "no grants lately";
  const d = duration(e.seconds);
  return `${d === "never" || d.startsWith(">") ? d : `in ${d}`}${e.at ? ` (${e.at})` : ""}`;
}

const SUMMARY_FIELDS = new Set(["namespace", "state", "first", "next", "max", "remaining", "maxCount", "rangesGranted", "idsGranted", "createdAt", "lastGrantAt", "grantRate", "exhaustion", "fence", "limits", "ledger"]);

/** A namespace's limits and ledger, on one line each (authorities before them have neither). */
function limitsPairs(s) {
  const out = [];
  if (s.limits) out.push(["limits", `${s.limits.grantsPerSecond} grants/s per sub, ${s.limits.ledgerRows} ledger rows, ${s.limits.subLedgerRows} per sub`]);
  if (s.ledger) {
    const top = s.ledger.topSubs.map((t) => `${t.sub ?? "(before subs)"} ${t.rows}`).join(", ");
    out.push(["ledger", `${s.ledger.rows} rows${s.ledger.bytes === null ? "" : `, ${s.ledger.bytes} bytes of storage`}${top ? `; most: ${top}` : ""}`]);
  }
  return out;
}

function summaryText(s) {
  const window = (w) => `${w.ranges} ranges, ${rate(w.idsPerSecond)} IDs/s`;
  return pairs([
    ["namespace", s.namespace],
    ["state", s.state],
    ["first", s.first],
    ["next", s.next],
    ["max", s.max],
    ["remaining", `${s.remaining} (${percentLeft(s)} left)`],
    ["maxCount", String(s.maxCount)],
    ["rangesGranted", String(s.rangesGranted)],
    ["idsGranted", s.idsGranted],
    ["createdAt", s.createdAt],
    ["lastGrantAt", s.lastGrantAt ?? "never"],
    ["last minute", window(s.grantRate.lastMinute)],
    ["last hour", window(s.grantRate.lastHour)],
    ["exhaustion", exhaustionText(s)],
    ["fence", `mark ${s.fence.mark}, skipped ${s.fence.skipped}, rollbacks ${s.fence.rollbacks}, witness behind ${s.fence.witnessBehind}`],
    ...limitsPairs(s),
    // Fields a newer authority adds are shown as they come.
    ...Object.entries(s)
      .filter(([k]) => !SUMMARY_FIELDS.has(k))
      .map(([k, v]) => [k, v !== null && typeof v === "object" ? Object.entries(v).map(([a, b]) => `${a} ${typeof b === "object" ? JSON.stringify(b) : b}`).join(", ") : String(v)]),
  ]);
}

const compact = (v) => (v === null || v === undefined ? "-" : JSON.stringify(v));

// ---------------------------------------------------------------- commands

const common = {
  url: { type: "string" },
  token: { type: "string" },
  json: { type: "boolean" },
};
const COMMON_HELP = `Options:
  --url URL      the authority (default: $RANGEID_URL), e.g. http://127.0.0.1:8787
  --token TOKEN  a token for it (default: $RANGEID_TOKEN; prefer the variable:
                 a flag shows in ps and in shell history)
  --json         print the authority's JSON document instead of text
  -h, --help     this help`;

/** Every page of the namespace listing, following nextAfter. */
async function allNamespaces(conn, pageSize = "1000") {
  const namespaces = [];
  let after;
  for (let page = 0; page < 100_000; page++) {
    const body = ok(await call(conn, "GET", `v1/namespaces${query({ limit: pageSize, after })}`));
    namespaces.push(...body.namespaces);
    // A page may be empty (names whose object is gone) and still have a next one.
    if (body.nextAfter === null || body.nextAfter === after) break;
    after = body.nextAfter;
  }
  return namespaces;
}

function namespacesTable(list) {
  return table(
    ["NAMESPACE", "STATE", "NEXT", "REMAINING", "LEFT", "IDS/S (1H)", "EXHAUSTION"],
    list.map((s) => [s.namespace, s.state, s.next, s.remaining, percentLeft(s), rate(s.grantRate.lastHour.idsPerSecond), exhaustionText(s)]),
  );
}

/** `ns freeze` and `ns unfreeze`: one entry, the action its only difference. */
function stateCommand(action, about) {
  return {
    usage: `rangeid ns ${action} NAME --reason TEXT`,
    about,
    args: ["NAME"],
    options: { reason: { type: "string" } },
    optionsHelp: "  --reason TEXT  why (1 to 256 printable characters); kept in the audit log",
    async run({ values, args, conn }) {
      const name = needNamespace(args[0]);
      const body = JSON.stringify({ reason: needReason(values.reason) });
      const res = await call(conn, "POST", `${nsPath(name)}/${action}`, { body });
      const state = ok(res).state;
      out(values.json ? res.text : `${name}: ${state}`);
    },
  };
}

const COMMANDS = {
  keygen: {
    usage: "rangeid keygen [--alg HS256|EdDSA] [--kid KID] [--out FILE | --add FILE] | keygen --public FILE [--out FILE]",
    about: `Makes signing keys, in the key map format the authority reads from
RANGEID_SIGNING_KEYS and \`rangeid token\` signs with: a JSON object of kid ->
key, each key with its creation time (\`token\` signs with the newest).

  keygen [--alg A] [--kid KID] [--out FILE]   a new map with one new key
  keygen --add FILE [--alg A] [--kid KID]     adds a new key to the map in FILE
  keygen --public FILE [--out FILE]           the map the authority holds

HS256 (the default) is a shared secret: the authority holds the same key and
could mint with it. EdDSA is an Ed25519 key pair: the map keygen writes holds
both halves and stays with whoever mints; the authority holds only the
public halves (--public), so a leak of its configuration mints nothing. Both
kinds may sit in one map during a rotation.

To rotate: keygen --add FILE; give the authority the new map (--public);
mint new tokens (the newest key signs them); once no old token is in use,
remove the old kid from FILE and give the authority the map again. Maps are
written with mode 0600, never over an existing file (--add replaces FILE at
once, atomically).`,
    options: {
      kid: { type: "string" }, out: { type: "string" }, alg: { type: "string" },
      add: { type: "string" }, public: { type: "string" },
    },
    optionsHelp: `  --alg A        HS256 (a shared secret, the default) or EdDSA (Ed25519)
  --kid KID      the new key's name, 1 to 64 of A-Z a-z 0-9 . _ - (default:
                 local-1 for a new map, key-YYYYMMDD-HHMMSS (UTC) with --add)
  --out FILE     write to a new FILE (mode 0600) instead of stdout
  --add FILE     add the new key to the map in FILE, keeping its other keys
  --public FILE  print the map in FILE as the authority holds it: Ed25519 keys'
                 public halves, HS256 secrets as they are (keep those secret)`,
    local: true,
    async run({ values }) {
      if (values.public !== undefined) {
        for (const f of ["add", "alg", "kid"]) if (values[f] !== undefined) throw usage(`--public takes no --${f}`);
        const { text, secrets } = local(() => authorityMap(parseKeyMap(readFlagFile("--public", values.public))));
        if (values.out === undefined) out(`${text}\n`);
        else writeNewSecretFile(values.out, `${text}\n`);
        if (secrets) process.stderr.write("rangeid: this map holds HS256 secrets, which the authority needs as they are; keep it secret\n");
        return;
      }
      if (values.add !== undefined && values.out !== undefined) throw usage("--add writes FILE itself; it takes no --out");
      const now = Math.floor(Date.now() / 1000);
      const kid = values.kid ?? (values.add === undefined ? "local-1" : datedKid(now));
      if (!KID_RE.test(kid)) throw usage(`--kid ${JSON.stringify(kid)}: a kid is 1 to 64 of A-Z a-z 0-9 . _ -`);
      if (values.add !== undefined) {
        if (!existsSync(values.add)) throw usage(`--add ${values.add}: no such file (make a new map with keygen --out)`);
        const entries = local(() => parseKeyMap(readFlagFile("--add", values.add)));
        // A rotation keeps the map's kind unless --alg says otherwise: the
        // newest key's (an EdDSA map must not gain an HS256 secret unasked).
        const newest = entries.reduce((a, e) => ((e.created ?? -1) >= (a?.created ?? -1) ? e : a), undefined);
        const key = local(() => newKey(values.alg ?? newest?.alg ?? "HS256", now));
        if (entries.some((e) => e.kid === kid)) throw usage(`--add ${values.add}: it already has a key named ${JSON.stringify(kid)}; pick another --kid`);
        replaceSecretFile(values.add, `${keyMapText([...entries, { kid, value: key }])}\n`);
        process.stderr.write(`rangeid: added ${key.alg} key ${kid} to ${values.add}; \`rangeid token\` now signs with it\n`);
        return;
      }
      const key = local(() => newKey(values.alg, now));
      const text = `${keyMapText([{ kid, value: key }])}\n`;
      if (values.out === undefined) return out(text);
      writeNewSecretFile(values.out, text);
      process.stderr.write(`rangeid: wrote a new ${key.alg} signing key to ${values.out} (mode 0600); keep it secret\n`);
    },
  },

  token: {
    usage: "rangeid token --role generator|reader|admin --ns NS[,NS...]|'*' [--ttl 30d] [--sub NAME] [--aud AUDIENCE] [--kid KID] [--keys FILE]",
    about: `Mints a token for the authority and prints the token alone: HS256 or EdDSA,
as its key is. Keys come from --keys FILE (a key map, as keygen writes it) or
the RANGEID_SIGNING_KEYS environment variable; the newest key signs unless
--kid names one.

A generator's sub is who its requests belong to: the authority identifies a
grant request by (sub, incarnation, requestId). Without --sub, a generator
token gets a unique sub (generator-<16 hex digits>, printed on stderr), so
no two generators share one. When you rotate a generator's token (a new key,
a new expiry), keep its sub: its retries then replay exactly. A changed sub
is safe too, but a request in flight during the switch is then a new
request, and the IDs of its first grant are skipped (a gap, never a
duplicate).`,
    options: {
      role: { type: "string" }, ns: { type: "string" }, ttl: { type: "string" }, sub: { type: "string" },
      aud: { type: "string" }, kid: { type: "string" }, keys: { type: "string" },
    },
    optionsHelp: `  --role R     generator (takes ranges), reader (reads), admin (reads, creates,
               freezes, floors); required
  --ns LIST    namespaces, comma-separated, or '*' for all; required
  --ttl T      lifetime: 30d, 12h, 15m, 90s or seconds (default 30d); at most
               ${DAYS("generator")} for a generator or a reader, ${DAYS("admin")} for an admin (the
               authority refuses longer-lived tokens)
  --sub NAME   who holds it, 1 to 128 bytes; recorded with grants and in the
               audit log (default: a unique generator-<hex> for a generator,
               printed on stderr; the role's name otherwise). A generator's
               rotated token must keep its sub.
  --aud A      audience, when the authority sets RANGEID_TOKEN_AUDIENCE
  --kid KID    the key to sign with (default: the newest by its creation time)
  --keys FILE  the key map (default: $RANGEID_SIGNING_KEYS)`,
    local: true,
    async run({ values }) {
      const keysText = values.keys !== undefined ? readFlagFile("--keys", values.keys) : process.env.RANGEID_SIGNING_KEYS;
      const minted = local(() => mintToken({ ...values, keysText }));
      out(minted.token);
      if (minted.generatedSub) {
        process.stderr.write(`rangeid: sub ${minted.sub} (unique, as no --sub was given); mint this generator's next token with --sub ${minted.sub}\n`);
      }
    },
  },

  // The prebuilt authority (the package rangeid-authority): bin/commands/.
  dev: devCommand({ Exit, out }),
  deploy: deployCommand({ Exit, out }),

  "ns create": {
    usage: "rangeid ns create NAME [--first N] [--max N] [--max-count N]",
    about: `Creates a namespace (admin). Creating it again with the same configuration
succeeds and changes nothing; another configuration is refused
(namespace_exists).`,
    args: ["NAME"],
    options: { first: { type: "string" }, max: { type: "string" }, "max-count": { type: "string" } },
    optionsHelp: `  --first N      the first ID (default 1)
  --max N        the last ID, inclusive (default 2^53 - 1; up to 2^64 - 1)
  --max-count N  the most IDs one grant may hold (default 10,000,000)`,
    async run({ values, args, conn }) {
      const name = needNamespace(args[0]);
      if (values.first !== undefined) needDecimal("--first", values.first);
      if (values.max !== undefined) needDecimal("--max", values.max);
      needCount("--max-count", values["max-count"], MAX_COUNT);
      const first = BigInt(values.first ?? "1");
      const max = BigInt(values.max ?? DEFAULT_MAX);
      if (max < first) {
        throw usage(values.max === undefined
          ? `--first ${first} is above the default --max (${DEFAULT_MAX}, 2^53 - 1); pass --max`
          : `--max ${max} is below --first ${first}`);
      }
      // Written by hand: IDs as strings, maxCount as the digits given (never rounded).
      const fields = [`"namespace":${JSON.stringify(name)}`];
      if (values.first !== undefined) fields.push(`"first":"${values.first}"`);
      if (values.max !== undefined) fields.push(`"max":"${values.max}"`);
      if (values["max-count"] !== undefined) fields.push(`"maxCount":${BigInt(values["max-count"])}`);
      const res = await call(conn, "POST", "v1/namespaces", { body: `{${fields.join(",")}}` });
      const body = ok(res, [200, 201]);
      if (values.json) return out(res.text);
      out(`${res.status === 201 ? "created" : "exists already, with this configuration:"} ${name}\n${summaryText(body)}`);
    },
  },

  "ns list": {
    usage: "rangeid ns list [--limit N] [--after NAME]",
    about: `Lists the namespaces the token may read (reader), by name. Without --limit or
--after it follows every page; with them it prints that one page (and, with
--json, the authority's document as is, nextAfter included).`,
    options: { limit: { type: "string" }, after: { type: "string" } },
    optionsHelp: `  --limit N     namespaces per page, 1 to 1000
  --after NAME  the previous page's nextAfter`,
    async run({ values, conn }) {
      needCount("--limit", values.limit, 1000);
      if (values.after !== undefined) needNamespace(values.after);
      if (values.limit !== undefined || values.after !== undefined) {
        const res = await call(conn, "GET", `v1/namespaces${query({ limit: values.limit, after: values.after })}`);
        const body = ok(res);
        if (values.json) return out(res.text);
        out(namespacesTable(body.namespaces));
        if (body.nextAfter !== null) out(`more: rangeid ns list --after ${body.nextAfter}${values.limit ? ` --limit ${values.limit}` : ""}`);
        return;
      }
      const namespaces = await allNamespaces(conn);
      if (values.json) return out(JSON.stringify({ namespaces, nextAfter: null }));
      out(namespaces.length ? namespacesTable(namespaces) : "no namespaces");
    },
  },

  "ns show": {
    usage: "rangeid ns show NAME",
    about: "Shows a namespace's summary (reader): bounds, what is left, grant rates, time to exhaustion, the fence.",
    args: ["NAME"],
    async run({ values, args, conn }) {
      const res = await call(conn, "GET", nsPath(needNamespace(args[0])));
      const body = ok(res);
      out(values.json ? res.text : summaryText(body));
    },
  },

  "ns freeze": stateCommand("freeze", "Freezes a namespace (admin): it refuses new grants (423) but still answers replays. Audited with the reason."),

  "ns unfreeze": stateCommand("unfreeze", `Unfreezes a namespace (admin): grants resume. Audited with the reason.
A namespace exported from here (ns export) is retired here and stays frozen
(namespace_exported): import its document on the destination to use it.`),

  "ns export": {
    usage: "rangeid ns export NAME --reason TEXT [--out FILE]",
    about: `Exports a namespace to move it to another authority (admin): the authority
reads its witness's mark, freezes the namespace and answers its export
document (configuration, next, fence, witness mark, where the destination
starts, a SHA-256 check), audited with the reason. Prints the document, or
writes it to a new FILE. The namespace stays frozen here: import the document
on the destination with \`rangeid ns import FILE\`.`,
    args: ["NAME"],
    options: { reason: { type: "string" }, out: { type: "string" } },
    optionsHelp: `  --reason TEXT  why (1 to 256 printable characters); kept in both audit logs
  --out FILE     write the document to FILE (never over an existing file)
                 instead of stdout`,
    async run({ values, args, conn }) {
      const name = needNamespace(args[0]);
      const reason = needReason(values.reason);
      const res = await call(conn, "POST", `${nsPath(name)}/export`, { body: JSON.stringify({ reason }) });
      const doc = ok(res);
      const text = res.text.endsWith("\n") ? res.text : `${res.text}\n`;
      if (values.out === undefined) out(text);
      else {
        let fd;
        try {
          fd = openSync(values.out, "wx", 0o600);
        } catch (e) {
          if (e.code === "EEXIST") throw usage(`${values.out} exists; export never overwrites a file (the namespace is exported and frozen: export again to a new file)`);
          throw usage(`${values.out}: ${e.message}`);
        }
        try {
          writeSync(fd, text);
        } finally {
          closeSync(fd);
        }
      }
      process.stderr.write(`rangeid: exported ${name} (next ${doc.next}, fence ${doc.fence}, witness ${doc.witness}); the destination starts at ${doc.start}. ${name} stays frozen here.\n`);
    },
  },

  "ns import": {
    usage: "rangeid ns import FILE [--as NAME]",
    about: `Creates a namespace from an export document (admin), with its next at the
document's start: never below any ID the source granted. FILE is the
document as \`rangeid ns export\` wrote it ('-' reads stdin). The authority
refuses, changing nothing: a document edited or cut (export_invalid), not a
rangeid export or of another version (export_unsupported), another
namespace's (export_namespace_mismatch), one imported here already
(already_imported), a namespace that exists (namespace_exists).`,
    args: ["FILE"],
    options: { as: { type: "string" } },
    optionsHelp: "  --as NAME  the namespace to import into (default: the document's); must be the document's",
    async run({ values, args, conn }) {
      let text;
      try {
        text = readFileSync(args[0] === "-" ? 0 : args[0], "utf8");
      } catch (e) {
        throw usage(`${args[0]}: ${e.message}`);
      }
      let name = values.as;
      if (name === undefined) {
        let doc;
        try {
          doc = JSON.parse(text);
        } catch {
          throw usage(`${args[0]} is not an export document (not JSON); pass --as NAME to send it anyway`);
        }
        if (typeof doc?.namespace !== "string") throw usage(`${args[0]} is not an export document (no namespace); pass --as NAME to send it anyway`);
        name = doc.namespace;
      }
      needNamespace(name);
      const res = await call(conn, "POST", `${nsPath(name)}/import`, { body: text });
      const body = ok(res, [201]);
      out(values.json ? res.text : `imported ${name}\n${summaryText(body)}`);
    },
  },

  "ns floor": {
    usage: "rangeid ns floor NAME --to N",
    about: `Raises a namespace's next ID to N (admin); a floor never lowers it
(floor_below_next). After restoring a whole system from a backup, raise
every namespace's floor past every ID in use before letting generators in.`,
    args: ["NAME"],
    options: { to: { type: "string" } },
    optionsHelp: "  --to N  the new next ID (a decimal integer up to 2^64 - 1)",
    async run({ values, args, conn }) {
      const name = needNamespace(args[0]);
      const floor = needDecimal("--to", values.to);
      const res = await call(conn, "POST", `${nsPath(name)}/floor`, { body: `{"floor":"${floor}"}` });
      const body = ok(res);
      out(values.json ? res.text : `${name}: next is now ${body.next} (${body.remaining} IDs remain)`);
    },
  },

  "ns limits": {
    usage: "rangeid ns limits NAME [--grants-per-second N] [--ledger-rows N] [--sub-ledger-rows N]",
    about: `Shows a namespace's limits on what callers add and what its grant ledger holds
(reader), or changes them (admin; audited as limits). Each token sub takes at
most --grants-per-second new grants a second and holds at most
--sub-ledger-rows ledger rows; the ledger holds at most --ledger-rows rows.
Past one, a grant is refused 429 (rate_limited, ledger_full) with Retry-After,
which generators wait out. "default" puts a limit back to the default; a
limit not given is kept.`,
    args: ["NAME"],
    options: { "grants-per-second": { type: "string" }, "ledger-rows": { type: "string" }, "sub-ledger-rows": { type: "string" } },
    optionsHelp: `  --grants-per-second N  new grants per second per sub, 1 to 1000000 (default 5000)
  --ledger-rows N        rows the ledger may hold, 1 to 1000000000 (default 32000000)
  --sub-ledger-rows N    rows one sub may hold, at most --ledger-rows (default 8000000)`,
    async run({ values, args, conn }) {
      const name = needNamespace(args[0]);
      const fields = [];
      for (const [flag, key, max] of [["grants-per-second", "grantsPerSecond", 1_000_000], ["ledger-rows", "ledgerRows", 1_000_000_000], ["sub-ledger-rows", "subLedgerRows", 1_000_000_000]]) {
        const v = values[flag];
        if (v === undefined) continue;
        fields.push(`"${key}":${v === "default" ? "null" : needCount(`--${flag}`, v, max)}`);
      }
      const res = fields.length
        ? await call(conn, "POST", `${nsPath(name)}/limits`, { body: `{${fields.join(",")}}` })
        : await call(conn, "GET", nsPath(name));
      const body = ok(res);
      if (values.json) return out(res.text);
      if (!body.limits) throw new Exit(1, `${conn.base.origin} has no limits (an authority from before them)`);
      out(pairs([["namespace", body.namespace], ...limitsPairs(body)]));
    },
  },

  grants: {
    usage: "rangeid grants NAME [--limit N] [--before START]",
    about: "Lists a namespace's retained grants (reader), newest first, with the token sub that took each.",
    args: ["NAME"],
    options: { limit: { type: "string" }, before: { type: "string" } },
    optionsHelp: `  --limit N       grants per page, 1 to 1000 (default 100)
  --before START  the previous page's nextBefore`,
    run: (ctx) => pagedList(ctx, {
      command: "grants",
      empty: "no retained grants",
      header: ["START", "END", "COUNT", "INCARNATION", "REQUEST", "SUB", "AT"],
      row: (g) => [g.start, g.end, g.count, g.incarnation, g.requestId, g.sub, g.at],
    }),
  },

  lookup: {
    usage: "rangeid lookup NAME ID",
    about: "Finds the retained grant holding ID (reader): who took it, when, and under which incarnation.",
    args: ["NAME", "ID"],
    async run({ values, args, conn }) {
      const name = needNamespace(args[0]);
      const id = needDecimal("ID", args[1]);
      const res = await call(conn, "GET", `${nsPath(name)}/lookup${query({ id })}`);
      const g = ok(res);
      if (values.json) return out(res.text);
      out(pairs([
        ["id", g.id],
        ["namespace", g.namespace],
        ["range", `[${g.start}, ${g.end}) (${g.count} IDs)`],
        ["incarnation", g.incarnation],
        ["requestId", g.requestId],
        ["sub", g.sub],
        ["at", g.at],
      ]));
    },
  },

  audit: {
    usage: "rangeid audit NAME [--limit N] [--before ID]",
    about: "Lists a namespace's audit entries (admin), newest first: create, floor, freeze, unfreeze, limits, export, import, fence_forward, witness_behind.",
    args: ["NAME"],
    options: { limit: { type: "string" }, before: { type: "string" } },
    optionsHelp: `  --limit N    entries per page, 1 to 1000 (default 100)
  --before ID  the previous page's nextBefore`,
    run: (ctx) => pagedList(ctx, {
      command: "audit",
      empty: "no audit entries",
      header: ["ID", "AT", "ACTOR", "ACTION", "BEFORE", "AFTER", "REASON"],
      row: (a) => [a.id, a.at, a.actor, a.action, compact(a.before), compact(a.after), a.reason ?? "-"],
    }),
  },

  status: {
    usage: "rangeid status [--page-size N]",
    about: `One screen: the authority's health, who the token is, and every namespace it
may read with its state, exact capacity left and time to exhaustion at the
last hour's rate. Needs a reader or admin token for the namespaces.`,
    options: { "page-size": { type: "string" } },
    optionsHelp: "  --page-size N  namespaces per listing request, 1 to 1000 (default 1000)",
    async run({ values, conn }) {
      needCount("--page-size", values["page-size"], 1000);
      const started = performance.now();
      const health = await call(conn, "GET", "healthz", { auth: false });
      const ms = Math.round(performance.now() - started);
      if (health.status !== 200 && health.body?.error) {
        throw new Exit(1, `${conn.base.origin} is not healthy: ${health.body.error.code}: ${health.body.error.message} [HTTP ${health.status}]`, { document: health.text });
      }
      ok(health); // anything else but a 200 JSON document: not an authority

      const session = ok(await call(conn, "GET", "v1/session"));
      let namespaces;
      let refusal;
      try {
        namespaces = await allNamespaces(conn, values["page-size"]);
      } catch (e) {
        refusal = e;
      }
      if (values.json) {
        if (refusal) throw refusal;
        return out(JSON.stringify({ health: health.body, session, namespaces }));
      }
      const expMs = session.exp * 1000;
      const exp = expMs < 8.64e15 ? new Date(expMs).toISOString().replace(".000Z", "Z") : "beyond the year 275760";
      const inactive = namespaces?.filter((s) => s.state !== "active").length;
      out(pairs([
        ["authority", `${conn.base.href} healthy (${ms} ms)`],
        ["token", `sub ${session.sub}, role ${session.role}, ns ${session.ns.join(",")}, expires ${exp} (in ${duration(session.exp - Date.now() / 1000)})`],
        ["namespaces", namespaces ? `${namespaces.length}${inactive ? ` (${inactive} not active)` : ""}` : "(not readable with this token)"],
      ]));
      if (refusal) throw refusal;
      if (namespaces.length) out(`\n${namespacesTable(namespaces)}`);
    },
  },
};

// ---------------------------------------------------------------- dispatch

const GROUPS = { ns: ["create", "list", "show", "freeze", "unfreeze", "floor", "limits", "export", "import"] };
// Long names of groups.
const ALIASES = { namespace: "ns" };

const MAIN_HELP = `rangeid ${VERSION}: keys, tokens and the authority's admin API from the shell

Usage: rangeid <command> [options]        (npx rangeid ..., or node npm/bin/rangeid.mjs ... from a clone)

Keys and tokens (local; nothing is sent anywhere):
  keygen [--alg HS256|EdDSA] [--kid KID] [--out FILE]   a new signing key map
  keygen --add FILE | --public FILE          add a key to a map; the authority's map
  token --role R --ns LIST [--ttl 30d] ...   a token, printed alone

The prebuilt authority (npm install --save-dev rangeid-authority):
  dev [--port N] [--state DIR]               run it locally on workerd (no Rust, no wrangler)
  deploy [--dry-run] [--keys FILE] ...       deploy it to Cloudflare with wrangler

The authority (--url or RANGEID_URL, --token or RANGEID_TOKEN):
  status                                      health, the token, every namespace on one screen
  ns create NAME [--first N] [--max N] [--max-count N]     admin
  ns list [--limit N] [--after NAME]                       reader
  ns show NAME                                             reader
  ns freeze NAME --reason TEXT                             admin
  ns unfreeze NAME --reason TEXT                           admin
  ns floor NAME --to N                                     admin
  ns export NAME --reason TEXT [--out FILE]                admin: freeze, print the document
  ns import FILE [--as NAME]                               admin: create from a document
  ns limits NAME [--grants-per-second N] [--ledger-rows N] [--sub-ledger-rows N]
                                             reader; admin to change
  grants NAME [--limit N] [--before START]                 reader
  lookup NAME ID                                           reader
  audit NAME [--limit N] [--before ID]                     admin

\`namespace\` is a synonym of \`ns\`. Every authority command takes --json (the authority's JSON, one document) and
prints IDs exactly as decimal strings. \`rangeid <command> --help\` for more.

Exit status: 0 done; 1 the authority refused (its code and message on stderr)
or is unhealthy; 2 usage error or bad local input; 3 the authority could not be
reached, or what answered is not an authority.`;

function commandHelp(name) {
  const c = COMMANDS[name];
  const options = [c.optionsHelp, c.local ? "  -h, --help  this help" : COMMON_HELP.replace(/^Options:\n/, "")].filter(Boolean).join("\n");
  return `Usage: ${c.usage}\n\n${c.about}\n\nOptions:\n${options}\n`;
}

const STRING_OPTIONS = new Set(
  Object.values(COMMANDS).flatMap((c) => Object.entries({ ...common, ...c.options }).filter(([, o]) => o.type === "string").map(([k]) => k)),
);

/** Splits argv into the command's words and the rest (options may come anywhere). */
function split(argv) {
  const words = [];
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") {
      rest.push(...argv.slice(i));
      break;
    }
    if (a.startsWith("-") && a !== "-") {
      rest.push(a);
      if (a.startsWith("--") && !a.includes("=") && STRING_OPTIONS.has(a.slice(2)) && i + 1 < argv.length) rest.push(argv[++i]);
      continue;
    }
    // A command is one word, or a group and its subcommand; `help` takes either.
    const path = words[0] === "help" ? words.slice(1) : words;
    const complete = words.length > 0 && (path.length === 2 || (path.length === 1 && !(path[0] in GROUPS)));
    if (!complete) words.push(path.length === 0 && Object.hasOwn(ALIASES, a) ? ALIASES[a] : a);
    else rest.push(a);
  }
  return { words, rest };
}

async function main(argv) {
  const { words, rest } = split(argv);
  if (words.length === 0) {
    if (rest.includes("--version") || rest.includes("-v")) return out(VERSION);
    if (rest.length === 0 || rest.includes("--help") || rest.includes("-h")) return out(MAIN_HELP);
    throw usage(`expected a command before ${rest[0]}`);
  }
  if (words[0] === "help") {
    const name = words.slice(1).join(" ");
    if (!name) return out(MAIN_HELP);
    if (COMMANDS[name]) return out(commandHelp(name));
    if (GROUPS[name]) return out(groupHelp(name));
    throw usage(`no command ${JSON.stringify(name)}`);
  }
  if (words[0] in GROUPS && words.length === 1) {
    if (rest.includes("--help") || rest.includes("-h")) return out(groupHelp(words[0]));
    throw usage(`${words[0]} needs a subcommand: ${GROUPS[words[0]].join(", ")}`);
  }
  const name = words.join(" ");
  const command = COMMANDS[name];
  if (!command) throw usage(`unknown command ${JSON.stringify(name)}`);
  // What follows `--` goes, as it is, to the program a command runs (deploy: wrangler).
  const cut = command.passThrough ? rest.indexOf("--") : -1;
  const passThrough = cut === -1 ? undefined : rest.slice(cut + 1);
  let parsed;
  try {
    parsed = parseArgs({
      args: cut === -1 ? rest : rest.slice(0, cut),
      options: { ...(command.local ? {} : common), ...command.options, help: { type: "boolean", short: "h" } },
      allowPositionals: true,
      strict: true,
    });
  } catch (e) {
    // `--to -5`: parseArgs takes a value starting with "-" for an option.
    const ambiguous = /^Option '(--[a-z-]+)[^']*' argument is ambiguous/.exec(e.message);
    if (ambiguous && NUMERIC_FLAGS.has(ambiguous[1])) {
      throw usage(`${ambiguous[1]} needs a value, and values here are never negative (got one starting with "-")`);
    }
    throw usage(e.message);
  }
  const { values, positionals } = parsed;
  if (values.help) return out(commandHelp(name));
  const expected = command.args ?? [];
  if (positionals.length > expected.length) throw usage(`unexpected argument ${JSON.stringify(positionals[expected.length])}`);
  if (positionals.length < expected.length) throw usage(`missing ${expected.slice(positionals.length).join(" ")}`);
  const conn = command.local ? undefined : connection(values);
  await command.run({ values, args: positionals, conn, passThrough });
}

function groupHelp(group) {
  return `Usage: rangeid ${group} <${GROUPS[group].join("|")}> ...\n\n${GROUPS[group].map((s) => `  ${COMMANDS[`${group} ${s}`].usage.replace(/^rangeid /, "")}`).join("\n")}\n\n\`rangeid ${group} <subcommand> --help\` for more.\n`;
}

// `rangeid ns list | head -1`: a closed pipe ends the command quietly.
process.stdout.on("error", (e) => {
  if (e.code === "EPIPE") process.exit(process.exitCode ?? 0);
  throw e;
});

main(process.argv.slice(2)).catch((e) => {
  if (!(e instanceof Exit)) {
    // A bug, not a refusal: show where.
    process.stderr.write(`rangeid: ${e?.stack ?? e}\n`);
    process.exitCode = 1;
    return;
  }
  if (e.document && process.argv.includes("--json")) out(e.document);
  process.stderr.write(`rangeid: ${e.message}\n`);
  if (e.status === 2) process.stderr.write("(rangeid --help for usage)\n");
  process.exitCode = e.status;
});
