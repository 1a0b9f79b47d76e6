// Signing keys and tokens for the rangeid authority, with the authority's
// rules (edge-authority/src/front/token.rs): the key map, which key signs,
// HS256 and EdDSA (Ed25519) tokens, lifetimes, and making keys. Node's
// built-ins only; the `rangeid keygen` and `rangeid token` commands
// (commands/tokens.mjs) are its user interface.
//
// The key map is a JSON object, kid -> key:
//   "kid": "<string>"                                   an HS256 secret (its UTF-8 bytes), as keys
//                                                       were written before creation times were kept
//   "kid": {"kty":"oct","alg":"HS256","k":b64url,"created":secs}           an HS256 secret
//   "kid": {"kty":"OKP","crv":"Ed25519","alg":"EdDSA","x":b64url,"d":b64url,"created":secs}
//                                                       an Ed25519 key pair; without "d", its public
//                                                       half, all the authority may hold
import { createHmac, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign } from "node:crypto";
import { NAMESPACE_RE, NAMESPACE_RULE } from "./names.mjs";

/** A refusal of bad input (a flag, a key map); the command exits 2. */
export class KeysError extends Error {}
const fail = (message) => {
  throw new KeysError(message);
};

export const KID_RE = /^[A-Za-z0-9._-]{1,64}$/;
const DIGITS_RE = /^[0-9]+$/;
const B64URL_RE = /^[A-Za-z0-9_-]*$/;
// The authority's limits (edge-authority/src/front/token.rs).
const MIN_SECRET_BYTES = 32;
const MAX_SUB_BYTES = 128;
const MAX_AUD_BYTES = 256;
const MAX_NAMESPACES = 256;
const DAY = 86_400;
/** The longest a token of each role may live, in seconds (the authority's
 * Role::max_lifetime_secs, which refuses longer): a generator's or a
 * reader's token is held by a deployed service and renewed with a yearly
 * key rotation; an admin's can freeze namespaces and raise floors, so it is
 * minted again each month. */
// The roles, in the authority's order (its OpenAPI document's Session.role;
// tests/npm/one-source.test.mjs checks this list against it).
export const MAX_TTL_SECONDS = { generator: 365 * DAY, reader: 365 * DAY, admin: 30 * DAY, relay: 365 * DAY };
export const ROLES = Object.keys(MAX_TTL_SECONDS);
const JWK_FIELDS = new Set(["kty", "crv", "alg", "k", "x", "d", "created"]);

// ---------------------------------------------------------------- the key map

/** Bytes from base64url without padding, canonical (as the authority reads it). */
function base64url(kid, field, text) {
  const bytes = typeof text === "string" && B64URL_RE.test(text) ? Buffer.from(text, "base64url") : null;
  if (!bytes || bytes.toString("base64url") !== text) fail(`signing keys: key ${JSON.stringify(kid)}: ${field} must be base64url without padding`);
  return bytes;
}

/** One entry checked: {kid, alg, secret?, jwk?, created?, value} (value: as written). */
function parseEntry(kid, value) {
  const err = (why) => fail(`signing keys: key ${JSON.stringify(kid)}: ${why}`);
  const secret = (bytes) => {
    if (bytes.length < MIN_SECRET_BYTES) fail(`signing keys: key ${JSON.stringify(kid)} is shorter than ${MIN_SECRET_BYTES} bytes`);
    return bytes;
  };
  if (typeof value === "string") return { kid, alg: "HS256", secret: secret(Buffer.from(value, "utf8")), value };
  if (value === null || typeof value !== "object" || Array.isArray(value)) err("must be a string (an HS256 secret) or a JWK object");
  const unknown = Object.keys(value).find((f) => !JWK_FIELDS.has(f));
  if (unknown !== undefined) err(`unknown field ${JSON.stringify(unknown)} (a key holds kty, crv, alg, k or x and d, and created)`);
  const { kty, crv, alg, k, x, d, created } = value;
  if (created !== undefined && !(Number.isSafeInteger(created) && created >= 0)) err("created must be a whole number of seconds since the Unix epoch");
  if (kty === "oct") {
    if (alg !== undefined && alg !== "HS256") err("alg must be HS256 for this key type");
    for (const f of ["crv", "x", "d"]) if (value[f] !== undefined) err(`an oct (HS256) key has no ${f}`);
    if (k === undefined) err("an oct key needs k");
    return { kid, alg: "HS256", secret: secret(base64url(kid, "k", k)), created, value };
  }
  if (kty === "OKP") {
    if (alg !== undefined && alg !== "EdDSA") err("alg must be EdDSA for this key type");
    if (crv !== "Ed25519") err("an OKP key must have crv Ed25519");
    if (k !== undefined) err("an OKP key has no k");
    if (x === undefined) err("an OKP key needs x");
    if (base64url(kid, "x", x).length !== 32) err("x must be 32 bytes");
    let privateKey;
    if (d !== undefined) {
      if (base64url(kid, "d", d).length !== 32) err("d must be 32 bytes");
      // The pair must match, or every token would be refused (Node checks
      // it on import too, on some versions).
      try {
        privateKey = createPrivateKey({ key: { kty, crv, x, d }, format: "jwk" });
      } catch {
        err("x is not the public half of d");
      }
      if (createPublicKey(privateKey).export({ format: "jwk" }).x !== x) err("x is not the public half of d");
    }
    return { kid, alg: "EdDSA", privateKey, created, value };
  }
  return err("kty must be oct (HS256) or OKP (Ed25519, EdDSA)");
}

/**
 * Parses a key map as the authority does (and, unlike it, accepts the
 * private half `d` of an Ed25519 key, which minting needs). Returns its
 * entries in the order written; throws KeysError for anything the
 * authority would refuse: a kid given twice, an invalid kid, a short
 * secret, a malformed JWK, no key.
 */
export function parseKeyMap(text) {
  const entries = topLevelEntries(text);
  const seen = new Set();
  const out = [];
  for (const [kid, value] of entries) {
    if (!KID_RE.test(kid)) fail(`signing keys: invalid kid ${JSON.stringify(kid)} (1 to 64 of A-Z a-z 0-9 . _ -)`);
    if (seen.has(kid)) fail(`signing keys: kid ${JSON.stringify(kid)} is given twice`);
    seen.add(kid);
    out.push(parseEntry(kid, value));
  }
  if (out.length === 0) fail("signing keys: no signing keys configured");
  return out;
}

/**
 * A JSON object's [key, value] pairs in the order written, repeated keys
 * kept. JSON.parse reads the text (and refuses what is not JSON); as it
 * keeps only the last of a repeated key, and puts integer-like keys first,
 * the keys and their order come from a scan of the text JSON.parse has just
 * accepted: in valid JSON, a string followed by ":" one level deep is a key.
 */
function topLevelEntries(text) {
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    fail(`signing keys must be a JSON object of kid to key: ${e.message}`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    fail("signing keys must be a JSON object of kid to key");
  }
  const keys = [];
  let depth = 0;
  let last;
  for (const [token] of text.matchAll(/"(?:[^"\\]|\\.)*"|[{}[\]:]/g)) {
    if (token === "{" || token === "[") depth++;
    else if (token === "}" || token === "]") depth--;
    else if (token === ":" && depth === 1) keys.push(JSON.parse(last));
    last = token;
  }
  return keys.map((key) => [key, parsed[key]]);
}

/** A key map's text, one line, in the given order. */
export function keyMapText(entries) {
  return `{${entries.map(({ kid, value }) => `${JSON.stringify(kid)}:${JSON.stringify(value)}`).join(",")}}`;
}

/**
 * The key that signs: the one named `kid`, or else the newest, by its
 * `created` (the later entry on a tie). Keys without `created` (written
 * before it was kept) count as older than any key with one; if no key has
 * one, a single key is the newest and several are refused rather than
 * guessed. The key must be able to sign: an HS256 secret, or an Ed25519
 * key with its private half.
 */
export function signingKey(entries, kid) {
  let entry;
  if (kid !== undefined) {
    entry = entries.find((e) => e.kid === kid);
    if (!entry) fail(`no key named ${JSON.stringify(kid)}`);
  } else {
    const dated = entries.filter((e) => e.created !== undefined);
    if (dated.length > 0) entry = dated.reduce((a, b) => (b.created >= a.created ? b : a));
    else if (entries.length === 1) entry = entries[0];
    else {
      fail(`${entries.length} keys and none records when it was made, so which is newest is unknown: pass --kid KID (keys added by \`rangeid keygen --add\` record it)`);
    }
  }
  if (entry.alg === "EdDSA" && !entry.privateKey) {
    fail(`key ${JSON.stringify(entry.kid)} is an Ed25519 public key: minting needs its private half (d), in the map keygen wrote, not the authority's`);
  }
  return entry;
}

// ---------------------------------------------------------------- tokens

/** `30d`, `12h`, `15m`, `90s` or bare seconds: a positive number of seconds, or null. */
export function parseTtl(text) {
  let digits = text;
  let unit = "s";
  if (/[A-Za-z]$/.test(text)) {
    digits = text.slice(0, -1);
    unit = text.slice(-1);
  }
  if (!DIGITS_RE.test(digits)) return null;
  const mult = { s: 1, m: 60, h: 3600, d: DAY }[unit];
  if (mult === undefined) return null;
  const seconds = BigInt(digits) * BigInt(mult);
  return seconds > 0n && seconds <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(seconds) : null;
}

/** A generator's unique default `sub`: `generator-` and 16 random hex digits. */
export function uniqueGeneratorSub() {
  return `generator-${randomBytes(8).toString("hex")}`;
}

/**
 * Mints a token with the authority's claims. Returns {token, sub,
 * generatedSub}: a generator minted without `sub` gets a unique one
 * (generatedSub true), which its rotated tokens must keep; a reader or an
 * admin gets the role's name. `now` is seconds since the epoch.
 */
export function mintToken({ role, ns, ttl = "30d", sub, aud, kid, keysText }, now = Math.floor(Date.now() / 1000)) {
  if (role === undefined) fail("--role is required");
  if (!ROLES.includes(role)) fail(`--role must be ${ROLES.slice(0, -1).join(", ")} or ${ROLES.at(-1)}`);
  if (ns === undefined) fail("--ns is required");
  let scope;
  if (ns === "*") scope = ["*"];
  else {
    scope = ns.split(",").map((n) => n.trim());
    for (const n of scope) {
      if (!NAMESPACE_RE.test(n)) fail(`--ns ${JSON.stringify(n)}: a namespace name is ${NAMESPACE_RULE}`);
    }
    if (scope.length > MAX_NAMESPACES) fail(`--ns lists ${scope.length} namespaces; a token holds at most ${MAX_NAMESPACES} (or '*')`);
  }
  const seconds = parseTtl(ttl);
  if (seconds === null) fail("--ttl must look like 30d, 12h, 15m or 90s");
  const cap = MAX_TTL_SECONDS[role];
  if (seconds > cap) fail(`--ttl ${ttl}: ${role === "admin" ? "an" : "a"} ${role} token lives at most ${cap / DAY}d (the authority refuses longer)`);
  const generatedSub = sub === undefined && role === "generator";
  if (sub === undefined) sub = generatedSub ? uniqueGeneratorSub() : role;
  if (sub.length === 0 || Buffer.byteLength(sub, "utf8") > MAX_SUB_BYTES || /[\u0000-\u001f\u007f-\u009f]/.test(sub)) {
    fail("--sub must be 1 to 128 bytes without control characters");
  }
  if (aud !== undefined && (aud.length === 0 || Buffer.byteLength(aud, "utf8") > MAX_AUD_BYTES)) {
    fail("--aud must be 1 to 256 characters");
  }
  if (keysText === undefined) fail("no --keys FILE and no RANGEID_SIGNING_KEYS in the environment");
  const key = signingKey(parseKeyMap(keysText), kid);
  const b64 = (s) => Buffer.from(s, "utf8").toString("base64url");
  const header = b64(JSON.stringify({ alg: key.alg, kid: key.kid, typ: "JWT" }));
  const claims = b64(JSON.stringify({ sub, role, ns: scope, iat: now, exp: now + seconds, ...(aud === undefined ? {} : { aud }) }));
  const input = `${header}.${claims}`;
  const signature = key.alg === "HS256"
    ? createHmac("sha256", key.secret).update(input).digest("base64url")
    : sign(null, Buffer.from(input, "utf8"), key.privateKey).toString("base64url");
  return { token: `${input}.${signature}`, sub, generatedSub };
}

// ---------------------------------------------------------------- making keys

/** The algorithms keygen makes keys for. */
export const KEY_ALGS = ["HS256", "EdDSA"];

/**
 * A new key's map entry: an HS256 secret of 32 random bytes, or an Ed25519
 * key pair (public and private halves), with its creation time.
 */
export function newKey(alg = "HS256", now = Math.floor(Date.now() / 1000)) {
  if (alg === "HS256") return { kty: "oct", alg: "HS256", k: randomBytes(32).toString("base64url"), created: now };
  if (alg === "EdDSA") {
    const { privateKey } = generateKeyPairSync("ed25519");
    const { x, d } = privateKey.export({ format: "jwk" });
    return { kty: "OKP", crv: "Ed25519", alg: "EdDSA", x, d, created: now };
  }
  return fail(`--alg must be ${KEY_ALGS.join(" or ")}`);
}

/** A kid for a key made at `now` (seconds): `key-YYYYMMDD-HHMMSS`, UTC. */
export function datedKid(now = Math.floor(Date.now() / 1000)) {
  const t = new Date(now * 1000).toISOString();
  return `key-${t.slice(0, 10).replaceAll("-", "")}-${t.slice(11, 19).replaceAll(":", "")}`;
}

/**
 * The map the authority holds: every Ed25519 key's public half (without
 * `d`), HS256 secrets as they are (the authority needs them to verify).
 * Returns {text, secrets}: secrets is true when the map holds any HS256
 * secret, and must then be kept secret.
 */
export function authorityMap(entries) {
  const out = entries.map(({ kid, alg, value }) => {
    if (alg !== "EdDSA") return { kid, value };
    const { d: _private, ...publicHalf } = value;
    return { kid, value: publicHalf };
  });
  return { text: keyMapText(out), secrets: entries.some((e) => e.alg === "HS256") };
}
