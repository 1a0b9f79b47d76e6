// The `rangeid` command from the packed package (node_modules/.bin/rangeid,
// as `npx rangeid` runs it) against the real local authority on workerd.
// The authority runs with a key map the command's own `keygen` wrote, and
// every token below is minted by its `token`: nothing here signs with the
// test harness's key.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Authority, uniqueNs } from "../authority/harness.mjs";
import { installPacked } from "./harness.mjs";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
// The Rust reference minting tool, when a build left it (cargo test builds it).
const rustTool = process.env.RANGEID_TOKEN_BIN ?? join(repo, "target", "debug", "rangeid-token");
const TWO_53 = 9007199254740992n;

let pkg;
let bin;
let work;
let keysFile;
let authority;
let admin;
let reader;

/** Runs a command; resolves {code, stdout, stderr} (never rejects on exit status). */
function exec(file, args, { env = {}, cwd } = {}) {
  const clean = { ...process.env };
  for (const k of ["RANGEID_URL", "RANGEID_TOKEN", "RANGEID_SIGNING_KEYS"]) delete clean[k];
  return new Promise((resolve) => {
    execFile(file, args, { env: { ...clean, ...env }, cwd: cwd ?? work, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === "number" ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

/** The installed `rangeid` bin. */
const cli = (args, opts) => exec(bin, args, opts);
/** The installed bin against the test authority, with `token`. */
const api = (args, token = admin, opts = {}) => cli(args, { ...opts, env: { RANGEID_URL: authority.base, RANGEID_TOKEN: token, ...opts.env } });

/** Mints with the CLI; asserts it worked and printed the token alone. */
async function mint(args) {
  const r = await cli(["token", ...args, "--keys", keysFile]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\n$/, "the token alone on one line");
  return r.stdout.trim();
}

function decode(token) {
  const [h, p] = token.split(".");
  return { header: JSON.parse(Buffer.from(h, "base64url")), claims: JSON.parse(Buffer.from(p, "base64url")) };
}

/** HS256 checked with WebCrypto (not node:crypto's createHmac, which the CLI uses). */
async function verifiesWith(token, key) {
  const [h, p, s] = token.split(".");
  const k = await crypto.subtle.importKey("raw", new TextEncoder().encode(key), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  return crypto.subtle.verify("HMAC", k, Buffer.from(s, "base64url"), new TextEncoder().encode(`${h}.${p}`));
}

async function session(token) {
  return authority.req("GET", "/v1/session", { token });
}

before(async () => {
  pkg = installPacked();
  bin = join(pkg.scratch, "node_modules", ".bin", "rangeid");
  work = mkdtempSync(join(tmpdir(), "rangeid-cli-"));
  keysFile = join(work, "keys.json");
  // Two keys, as after a rotation: "2026-01" and the newer "2026-06".
  const older = await cli(["keygen", "--kid", "2026-01", "--out", join(work, "older.json")]);
  assert.equal(older.code, 0, older.stderr);
  const newer = await cli(["keygen", "--kid", "2026-06"]);
  assert.equal(newer.code, 0, newer.stderr);
  const map = { ...JSON.parse(readFileSync(join(work, "older.json"), "utf8")), ...JSON.parse(newer.stdout) };
  writeFileSync(keysFile, JSON.stringify(map), { mode: 0o600 });
  authority = await new Authority({ runtime: process.env.RANGEID_TEST_RUNTIME || "workerd", keysText: JSON.stringify(map) }).start();
  admin = await mint(["--role", "admin", "--ns", "*", "--ttl", "1h", "--sub", "cli-admin"]);
  reader = await mint(["--role", "reader", "--ns", "*", "--ttl", "1h", "--sub", "cli-reader"]);
});

after(async () => {
  await authority?.stop();
  authority?.cleanup();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("keygen and token", () => {
  test("keygen writes a key map the authority reads, mode 0600, and never overwrites it", async () => {
    const file = join(work, "older.json");
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const map = JSON.parse(readFileSync(file, "utf8"));
    assert.deepEqual(Object.keys(map), ["2026-01"]);
    assert.match(map["2026-01"], /^[0-9a-f]{64}$/, "64 hex digits from 32 random bytes");
    const again = await cli(["keygen", "--kid", "other", "--out", file]);
    assert.equal(again.code, 2);
    assert.match(again.stderr, /exists/);
    assert.deepEqual(JSON.parse(readFileSync(file, "utf8")), map, "the file is untouched");
    const plain = await cli(["keygen"]);
    assert.deepEqual(Object.keys(JSON.parse(plain.stdout)), ["local-1"], "default kid");
    assert.notEqual(JSON.parse(plain.stdout)["local-1"], map["2026-01"]);
    const bad = await cli(["keygen", "--kid", "no spaces"]);
    assert.equal(bad.code, 2);
    assert.equal(bad.stdout, "");
  });

  test("token: signed with the newest kid, verified by WebCrypto and accepted by the authority", async () => {
    const keys = JSON.parse(readFileSync(keysFile, "utf8"));
    const t = await mint(["--role", "generator", "--ns", "orders, users", "--ttl", "2h", "--sub", "svc-1", "--aud", "ids.example"]);
    const { header, claims } = decode(t);
    assert.deepEqual(header, { alg: "HS256", kid: "2026-06", typ: "JWT" });
    assert.equal(claims.sub, "svc-1");
    assert.equal(claims.role, "generator");
    assert.deepEqual(claims.ns, ["orders", "users"]);
    assert.equal(claims.aud, "ids.example");
    const now = Math.floor(Date.now() / 1000);
    assert.ok(Math.abs(claims.exp - (now + 7200)) <= 5, `exp ${claims.exp}`);
    assert.equal(await verifiesWith(t, keys["2026-06"]), true, "HMAC-SHA256 over header.claims with the key's UTF-8 bytes");
    assert.equal(await verifiesWith(t, keys["2026-01"]), false);
    const s = await session(t);
    assert.equal(s.status, 200, s.text);
    assert.deepEqual(s.body, { sub: "svc-1", role: "generator", ns: ["orders", "users"], exp: claims.exp });

    const old = await mint(["--role", "reader", "--ns", "*", "--kid", "2026-01"]);
    assert.equal(decode(old).header.kid, "2026-01");
    assert.equal(await verifiesWith(old, keys["2026-01"]), true);
    const os = await session(old);
    assert.equal(os.status, 200);
    assert.deepEqual({ ...os.body, exp: 0 }, { sub: "reader", role: "reader", ns: ["*"], exp: 0 }, "sub defaults to the role");
    assert.ok(Math.abs(os.body.exp - (now + 30 * 86400)) <= 5, "ttl defaults to 30 days");

    // The same from RANGEID_SIGNING_KEYS instead of --keys.
    const fromEnv = await cli(["token", "--role", "admin", "--ns", "*"], { env: { RANGEID_SIGNING_KEYS: JSON.stringify(keys) } });
    assert.equal(fromEnv.code, 0, fromEnv.stderr);
    assert.equal((await session(fromEnv.stdout.trim())).status, 200);

    // A token the authority must refuse: signed with a key it does not hold.
    const stranger = join(work, "stranger.json");
    assert.equal((await cli(["keygen", "--kid", "2026-06", "--out", stranger])).code, 0);
    const forged = await cli(["token", "--role", "admin", "--ns", "*", "--keys", stranger]);
    const refused = await session(forged.stdout.trim());
    assert.equal(refused.status, 401);
  });

  test("token refuses what the Rust tool refuses, with exit 2 and nothing on stdout", async () => {
    const other = join(work, "short.json");
    writeFileSync(other, '{"k":"too short"}');
    const dup = join(work, "dup.json");
    writeFileSync(dup, `{"k":"${"a".repeat(32)}","k":"${"b".repeat(32)}"}`);
    const cases = [
      [["--role", "root", "--ns", "orders"], /--role/],
      [["--ns", "orders"], /--role is required/],
      [["--role", "admin"], /--ns is required/],
      [["--role", "admin", "--ns", "Bad Name"], /--ns/],
      [["--role", "admin", "--ns", "a,,b"], /--ns/],
      [["--role", "admin", "--ns", "x", "--ttl", "soon"], /--ttl/],
      [["--role", "admin", "--ns", "x", "--ttl", "0d"], /--ttl/],
      [["--role", "admin", "--ns", "x", "--ttl", "1w"], /--ttl/],
      [["--role", "admin", "--ns", "x", "--ttl", "99999999999999999999d"], /--ttl/],
      [["--role", "admin", "--ns", "x", "--kid", "missing"], /no key named/],
      [["--role", "admin", "--ns", "x", "--sub", ""], /--sub/],
      [["--role", "admin", "--ns", "x", "--sub", "x".repeat(129)], /--sub/],
      [["--role", "admin", "--ns", "x", "--sub", "tab\there"], /--sub/],
      [["--role", "admin", "--ns", "x", "--aud", ""], /--aud/],
      [["--role", "admin", "--ns", "x", "--bogus", "1"], /bogus/],
      [["--role", "admin", "--ns", "x", "stray"], /stray/],
    ];
    const runs = await Promise.all(cases.map(([args]) => cli(["token", ...args, "--keys", keysFile])));
    for (const [i, [args, why]] of cases.entries()) {
      const r = runs[i];
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.equal(r.stdout, "", args.join(" "));
      assert.match(r.stderr, why, args.join(" "));
    }
    for (const [file, why] of [[other, /shorter than 32 bytes/], [dup, /given twice/], [join(work, "absent.json"), /ENOENT/]]) {
      const r = await cli(["token", "--role", "admin", "--ns", "x", "--keys", file]);
      assert.equal(r.code, 2);
      assert.match(r.stderr, why);
    }
    const none = await cli(["token", "--role", "admin", "--ns", "x"]);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /RANGEID_SIGNING_KEYS/);
    // 128 bytes of sub is fine, 129 is not; counted in UTF-8 bytes.
    assert.equal((await cli(["token", "--role", "admin", "--ns", "x", "--sub", "é".repeat(64), "--keys", keysFile])).code, 0);
    assert.equal((await cli(["token", "--role", "admin", "--ns", "x", "--sub", `${"é".repeat(64)}x`, "--keys", keysFile])).code, 2);
  });

  test("the Rust tool and the CLI agree: same claims, same kid, same refusals; each accepts the other's keys", { skip: !existsSync(rustTool) && `no ${rustTool} (built by cargo test); the WebCrypto check above covers the signature` }, async () => {
    const args = ["--role", "admin", "--ns", "a,b", "--ttl", "1h", "--sub", "ops", "--aud", "ids.example", "--keys", keysFile];
    const rust = await exec(rustTool, ["token", ...args]);
    assert.equal(rust.code, 0, rust.stderr);
    const mine = await cli(["token", ...args]);
    const r = decode(rust.stdout.trim());
    const m = decode(mine.stdout.trim());
    assert.deepEqual({ ...m.header }, { ...r.header }, "same header fields (alg, kid, typ)");
    assert.ok(Math.abs(r.claims.exp - m.claims.exp) <= 2);
    assert.deepEqual({ ...m.claims, exp: 0 }, { ...r.claims, exp: 0 });
    // Rust's tokens from the CLI's keys work; the CLI's tokens from Rust's keys work.
    assert.equal((await session(rust.stdout.trim())).status, 200);
    const rustKeys = await exec(rustTool, ["keygen", "--kid", "rust-1"]);
    const fromRustKeys = await cli(["token", "--role", "admin", "--ns", "*"], { env: { RANGEID_SIGNING_KEYS: rustKeys.stdout.trim() } });
    assert.equal(fromRustKeys.code, 0, fromRustKeys.stderr);
    const key = JSON.parse(rustKeys.stdout)["rust-1"];
    assert.equal(await verifiesWith(fromRustKeys.stdout.trim(), key), true);
    for (const bad of [["--role", "root", "--ns", "x"], ["--role", "admin", "--ns", "Bad"], ["--role", "admin", "--ns", "x", "--ttl", "1.5h"], ["--role", "admin", "--ns", "x", "--kid", "nope"], ["--role", "admin", "--ns", "x", "--sub", ""]]) {
      const a = await exec(rustTool, ["token", ...bad, "--keys", keysFile]);
      const b = await cli(["token", ...bad, "--keys", keysFile]);
      assert.equal(a.code, 2, bad.join(" "));
      assert.equal(b.code, 2, bad.join(" "));
    }
    // exp saturates at 2^64 - 1 in both, written exactly.
    const huge = ["token", "--role", "admin", "--ns", "x", "--ttl", "213503982334601d", "--keys", keysFile];
    const hr = Buffer.from((await exec(rustTool, huge)).stdout.trim().split(".")[1], "base64url").toString();
    const hm = Buffer.from((await cli(huge)).stdout.trim().split(".")[1], "base64url").toString();
    assert.equal(hm, hr);
    assert.match(hm, /"exp":18446744073709551615/);
  });
});

describe("the authority commands", () => {
  test("ns create, again (same configuration), a conflicting one; --json parses", async () => {
    const ns = uniqueNs("cli-create");
    const made = await api(["ns", "create", ns, "--first", "1001", "--max-count", "5000"]);
    assert.equal(made.code, 0, made.stderr);
    assert.match(made.stdout, new RegExp(`created ${ns}`));
    assert.match(made.stdout, /first\s+1001\n/);
    const again = await api(["ns", "create", ns, "--first", "1001", "--max-count", "5000", "--json"]);
    assert.equal(again.code, 0);
    const doc = JSON.parse(again.stdout);
    assert.equal(doc.namespace, ns);
    assert.equal(doc.maxCount, 5000);
    const clash = await api(["ns", "create", ns, "--first", "7"]);
    assert.equal(clash.code, 1);
    assert.match(clash.stderr, /namespace_exists: .*\[HTTP 409\]/);
    const clashJson = await api(["ns", "create", ns, "--first", "7", "--json"]);
    assert.equal(JSON.parse(clashJson.stdout).error.code, "namespace_exists", "--json prints the error document too");
    // A reader may not create; the authority says so.
    const denied = await api(["ns", "create", uniqueNs("cli-denied")], reader);
    assert.equal(denied.code, 1);
    assert.match(denied.stderr, /forbidden/);
    // Bad local input exits 2 with a message naming the flag, before any
    // request (the namespace does not appear), judged exactly (BigInt).
    const local = uniqueNs("cli-bad");
    const bads = [
      [["ns", "create", "Bad"], /not a namespace name/],
      [["ns", "create", local, "--first", "0x10"], /--first must be a positive decimal/],
      [["ns", "create"], /missing NAME/],
      [["ns", "create", "a", "b"], /unexpected argument/],
      [["ns", "create", local, "--max-count", "1e3"], /--max-count must be a whole number from 1 to 9007199254740991/],
      [["ns", "create", local, "--max-count", "9007199254740992"], /--max-count must be a whole number from 1 to 9007199254740991/],
      [["ns", "create", local, "--max-count", "0"], /--max-count must be/],
      [["ns", "create", local, "--first", "10", "--max", "5"], /--max 5 is below --first 10/],
      [["ns", "create", local, "--first", "9007199254740992"], /above the default --max .*; pass --max/],
      [["ns", "create", local, "--max", "18446744073709551616"], /--max must be at most 18446744073709551615/],
      [["ns", "list", "--limit", "0"], /--limit must be a whole number from 1 to 1000/],
      [["ns", "list", "--limit", "010"], /--limit must be a whole number from 1 to 1000/],
      [["ns", "list", "--limit", "-1"], /--limit needs a value, and values here are never negative/],
      [["ns", "floor", local, "--to", "-5"], /--to needs a value, and values here are never negative/],
      [["ns", "list", "--url", `${authority.base}/v1`], /--url is the authority's root, without \/v1/],
    ];
    for (const [i, r] of (await Promise.all(bads.map(([b]) => api(b)))).entries()) {
      assert.equal(r.code, 2, `${bads[i][0].join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, bads[i][1], bads[i][0].join(" "));
    }
    const after = await api(["ns", "show", local]);
    assert.equal(after.code, 1);
    assert.match(after.stderr, /namespace_not_found/, "refused input created nothing");
  });

  test("ns list pages and ns show; --json parses", async () => {
    const names = [uniqueNs("cli-list"), uniqueNs("cli-list")];
    for (const n of names) assert.equal((await api(["ns", "create", n])).code, 0);
    const list = await api(["ns", "list"], reader);
    assert.equal(list.code, 0, list.stderr);
    for (const n of names) assert.match(list.stdout, new RegExp(`^${n}\\s+active\\s+1\\s+9007199254740991\\s`, "m"));
    const json = JSON.parse((await api(["ns", "list", "--json"], reader)).stdout);
    assert.equal(json.nextAfter, null);
    assert.ok(names.every((n) => json.namespaces.some((s) => s.namespace === n)));
    const page = await api(["ns", "list", "--limit", "1", "--json"], reader);
    const one = JSON.parse(page.stdout);
    assert.equal(one.namespaces.length, 1);
    assert.equal(typeof one.nextAfter, "string");
    const human = await api(["ns", "list", "--limit", "1"], reader);
    assert.match(human.stdout, /more: rangeid ns list --after \S+ --limit 1/);
    const show = await api(["ns", "show", names[0]], reader);
    assert.equal(show.code, 0);
    assert.match(show.stdout, /state\s+active/);
    assert.match(show.stdout, /remaining\s+9007199254740991 \(100\.00% left\)/);
    const showJson = JSON.parse((await api(["ns", "show", names[0], "--json"], reader)).stdout);
    const direct = await authority.req("GET", `/v1/namespaces/${names[0]}`, { token: reader });
    assert.deepEqual(showJson, direct.body, "the authority's document as is");
    const missing = await api(["ns", "show", "no-such-ns"], reader);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /namespace_not_found/);
  });

  test("ns freeze and unfreeze with a reason; a frozen namespace refuses grants", async () => {
    const ns = uniqueNs("cli-freeze");
    assert.equal((await api(["ns", "create", ns])).code, 0);
    const gen = await mint(["--role", "generator", "--ns", ns]);
    const frozen = await api(["ns", "freeze", ns, "--reason", "migration window"]);
    assert.equal(frozen.code, 0, frozen.stderr);
    assert.equal(frozen.stdout, `${ns}: frozen\n`);
    const grant = await authority.req("POST", "/v1/ranges", { token: gen, body: { namespace: ns, incarnation: "cli1", requestId: "r1", count: 10 } });
    assert.equal(grant.status, 423);
    const thawed = await api(["ns", "unfreeze", ns, "--reason", "done", "--json"]);
    assert.equal(JSON.parse(thawed.stdout).state, "active");
    const noReason = await api(["ns", "freeze", ns]);
    assert.equal(noReason.code, 2);
    assert.match(noReason.stderr, /--reason/);
    const byReader = await api(["ns", "freeze", ns, "--reason", "x"], reader);
    assert.equal(byReader.code, 1);
    assert.match(byReader.stderr, /forbidden/);
    const badReason = await api(["ns", "freeze", ns, "--reason", "x".repeat(300)]);
    assert.equal(badReason.code, 1);
    assert.match(badReason.stderr, /invalid_request/);
  });

  test("ns floor raises next and is refused below it", async () => {
    const ns = uniqueNs("cli-floor");
    assert.equal((await api(["ns", "create", ns])).code, 0);
    const up = await api(["ns", "floor", ns, "--to", "5000"]);
    assert.equal(up.code, 0, up.stderr);
    assert.equal(up.stdout, `${ns}: next is now 5000 (9007199254735992 IDs remain)\n`);
    const down = await api(["ns", "floor", ns, "--to", "10"]);
    assert.equal(down.code, 1);
    assert.match(down.stderr, /floor_below_next: .*next 5000/);
    const json = await api(["ns", "floor", ns, "--to", "10", "--json"]);
    assert.equal(JSON.parse(json.stdout).error.code, "floor_below_next");
    assert.equal((await api(["ns", "floor", ns])).code, 2, "--to is required");
  });

  test("ns limits shows and changes a namespace's limits, audited; a grant past them is refused 429", async () => {
    const ns = uniqueNs("cli-limits");
    assert.equal((await api(["ns", "create", ns])).code, 0);
    const shown = await api(["ns", "limits", ns], reader);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /limits +5000 grants\/s per sub, 32000000 ledger rows, 8000000 per sub/);
    assert.match(shown.stdout, /ledger +0 rows/);
    const set = await api(["ns", "limits", ns, "--grants-per-second", "1", "--sub-ledger-rows", "2"]);
    assert.equal(set.code, 0, set.stderr);
    assert.match(set.stdout, /limits +1 grants\/s per sub, 32000000 ledger rows, 2 per sub/);
    const gen = await mint(["--role", "generator", "--ns", ns, "--sub", "svc-limits"]);
    const grant = (requestId) => authority.req("POST", "/v1/ranges", { token: gen, body: { namespace: ns, incarnation: "cli-lim", requestId, count: 10 } });
    assert.equal((await grant("x1")).status, 200);
    const limited = await grant("x2");
    assert.deepEqual([limited.status, limited.body.error.code], [429, "rate_limited"]);
    assert.ok(Number(limited.headers.get("retry-after")) >= 1);
    const audit = await api(["audit", ns, "--json"]);
    const entry = JSON.parse(audit.stdout).audit[0];
    assert.deepEqual([entry.action, entry.actor, entry.after.grantsPerSecond, entry.before.subLedgerRows], ["limits", "cli-admin", 1, 8000000]);
    const back = await api(["ns", "limits", ns, "--grants-per-second", "default", "--json"]);
    assert.equal(JSON.parse(back.stdout).limits.grantsPerSecond, 5000);
    const above = await api(["ns", "limits", ns, "--ledger-rows", "1"]);
    assert.equal(above.code, 1, "subLedgerRows 2 would be above ledgerRows 1");
    assert.match(above.stderr, /invalid_request: subLedgerRows must not be above ledgerRows/);
    assert.equal((await api(["ns", "limits", ns, "--grants-per-second", "0"])).code, 2);
    assert.equal((await api(["ns", "limits", ns, "--ledger-rows", "-1"])).code, 2);
    const byReader = await api(["ns", "limits", ns, "--grants-per-second", "9"], reader);
    assert.equal(byReader.code, 1);
    assert.match(byReader.stderr, /forbidden/);
  });

  test("grants, lookup and audit; IDs past 2^53 printed exactly everywhere", async () => {
    const ns = uniqueNs("cli-big");
    const first = "9007199254740990";
    const made = await api(["ns", "create", ns, "--first", first, "--max", "18446744073709551615"]);
    assert.equal(made.code, 0, made.stderr);
    const gen = await mint(["--role", "generator", "--ns", ns, "--sub", "svc-big"]);
    const g = await authority.req("POST", "/v1/ranges", { token: gen, body: { namespace: ns, incarnation: "cli-big-1", requestId: "r1", count: 100 } });
    assert.equal(g.status, 200, g.text);
    assert.equal(g.body.start, first);
    assert.equal(g.body.end, "9007199254741090");

    const grants = await api(["grants", ns], reader);
    assert.equal(grants.code, 0, grants.stderr);
    assert.match(grants.stdout, /^9007199254740990\s+9007199254741090\s+100\s+cli-big-1\s+r1\s+svc-big\s/m);
    const gj = JSON.parse((await api(["grants", ns, "--limit", "1", "--json"], reader)).stdout);
    assert.equal(gj.grants[0].start, first);
    const past = (TWO_53 + 7n).toString(); // 9007199254740999: not a JS number
    const look = await api(["lookup", ns, past], reader);
    assert.equal(look.code, 0, look.stderr);
    assert.match(look.stdout, /^id\s+9007199254740999$/m);
    assert.match(look.stdout, /range\s+\[9007199254740990, 9007199254741090\) \(100 IDs\)/);
    assert.match(look.stdout, /sub\s+svc-big/);
    assert.equal(JSON.parse((await api(["lookup", ns, past, "--json"], reader)).stdout).id, past);
    const miss = await api(["lookup", ns, "18446744073709551615"], reader);
    assert.equal(miss.code, 1);
    assert.match(miss.stderr, /grant_not_found/);
    assert.equal((await api(["lookup", ns, "-5"], reader)).code, 2);

    // Floor to 16 below 2^64: what remains is exact.
    const floor = await api(["ns", "floor", ns, "--to", "18446744073709551600"]);
    assert.equal(floor.stdout, `${ns}: next is now 18446744073709551600 (16 IDs remain)\n`);
    const show = await api(["ns", "show", ns], reader);
    assert.match(show.stdout, /next\s+18446744073709551600\n/);
    assert.match(show.stdout, /max\s+18446744073709551615\n/);
    assert.match(show.stdout, /remaining\s+16 \(0\.00% left\)/);
    assert.match(show.stdout, /idsGranted\s+100\n/);

    const audit = await api(["audit", ns]);
    assert.equal(audit.code, 0, audit.stderr);
    assert.match(audit.stdout, /\scli-admin\s+floor\s+\{"next":"9007199254741090"\}\s+\{"next":"18446744073709551600"\}/);
    assert.match(audit.stdout, /\scli-admin\s+create\s/);
    const aj = JSON.parse((await api(["audit", ns, "--limit", "1", "--json"])).stdout);
    assert.equal(aj.audit[0].action, "floor");
    assert.equal(typeof aj.nextBefore, "string");
    const byReader = await api(["audit", ns], reader);
    assert.equal(byReader.code, 1, "audit is admin-only");
    assert.match(byReader.stderr, /forbidden/);
  });

  test("status: health, the token, every namespace across pages with exact capacity", async () => {
    const big = uniqueNs("cli-status");
    assert.equal((await api(["ns", "create", big, "--first", "9007199254740990", "--max", "18446744073709551615"])).code, 0);
    const frozen = uniqueNs("cli-status");
    assert.equal((await api(["ns", "create", frozen])).code, 0);
    assert.equal((await api(["ns", "freeze", frozen, "--reason", "status test"])).code, 0);
    const all = JSON.parse((await api(["ns", "list", "--json"])).stdout).namespaces;
    assert.ok(all.length >= 4);

    const s = await api(["status", "--page-size", "2"]);
    assert.equal(s.code, 0, s.stderr);
    assert.match(s.stdout, new RegExp(`^authority\\s+${authority.base}/ healthy`, "m"));
    assert.match(s.stdout, /^token\s+sub cli-admin, role admin, ns \*/m);
    assert.match(s.stdout, new RegExp(`^namespaces\\s+${all.length} \\(\\d+ not active\\)`, "m"));
    for (const n of all) assert.match(s.stdout, new RegExp(`^${n.namespace}\\s+${n.state}\\s`, "m"), `${n.namespace} listed (paged by 2)`);
    // 2^64 - 9007199254740990 left: exact, not a rounded float.
    assert.match(s.stdout, new RegExp(`^${big}\\s+active\\s+9007199254740990\\s+18437736874454810626\\s+100\\.00%\\s+0\\s+no grants lately$`, "m"));
    assert.match(s.stdout, new RegExp(`^${frozen}\\s+frozen\\s`, "m"));

    const j = JSON.parse((await api(["status", "--json", "--page-size", "3"])).stdout);
    assert.deepEqual(j.health, { ok: true });
    assert.equal(j.session.sub, "cli-admin");
    assert.deepEqual(j.namespaces.map((n) => n.namespace).sort(), all.map((n) => n.namespace).sort());

    // A generator token may not list: health and session print, then the refusal.
    const gen = await mint(["--role", "generator", "--ns", big]);
    const g = await api(["status"], gen);
    assert.equal(g.code, 1);
    assert.match(g.stdout, /healthy/);
    assert.match(g.stderr, /forbidden/);
  });

  test("refusals: no URL or token (2), a bad token (1), nothing listening or not an authority (3)", async () => {
    const noUrl = await cli(["ns", "list"], { env: { RANGEID_TOKEN: admin } });
    assert.equal(noUrl.code, 2);
    assert.match(noUrl.stderr, /RANGEID_URL/);
    const noToken = await cli(["ns", "list"], { env: { RANGEID_URL: authority.base } });
    assert.equal(noToken.code, 2);
    assert.match(noToken.stderr, /RANGEID_TOKEN/);
    const flags = await cli(["ns", "list", "--url", authority.base, "--token", reader]);
    assert.equal(flags.code, 0, "--url and --token instead of the environment");
    const badToken = await api(["ns", "list"], `${admin.slice(0, -2)}xx`);
    assert.equal(badToken.code, 1);
    assert.match(badToken.stderr, /unauthenticated: .*\[HTTP 401\]/);

    const server = createServer((req, res) => res.writeHead(404, { "content-type": "text/html" }).end("<h1>not here</h1>"));
    await new Promise((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address();
    const notAuthority = await api(["ns", "list", "--url", `http://127.0.0.1:${port}`]);
    assert.equal(notAuthority.code, 3);
    assert.match(notAuthority.stderr, /HTTP 404 without an error document/);
    await new Promise((r) => server.close(r));
    const nobody = await api(["status", "--url", `http://127.0.0.1:${port}`]);
    assert.equal(nobody.code, 3);
    assert.match(nobody.stderr, /could not reach the authority/);
    assert.equal((await api(["ns", "list", "--url", "ftp://x"])).code, 2);
  });

  test("--help on every command; usage errors exit 2", async () => {
    const main = await cli(["--help"]);
    assert.equal(main.code, 0);
    const commands = ["keygen", "token", "ns create", "ns list", "ns show", "ns freeze", "ns unfreeze", "ns floor", "ns limits", "grants", "lookup", "audit", "status"];
    const helps = await Promise.all(commands.map((c) => Promise.all([cli([...c.split(" "), "--help"]), cli(["help", ...c.split(" ")])])));
    for (const [i, c] of commands.entries()) {
      assert.match(main.stdout, new RegExp(`\\b${c}\\b`), `${c} in rangeid --help`);
      const [h, viaHelp] = helps[i];
      assert.equal(h.code, 0, c);
      assert.match(h.stdout, new RegExp(`^Usage: rangeid ${c}\\b`), c);
      assert.equal(viaHelp.stdout, h.stdout);
    }
    assert.match((await cli(["ns", "--help"])).stdout, /ns create NAME/);
    const usageErrors = [["nope"], ["ns"], ["ns", "drop", "x"], ["status", "--nope"], ["grants"], ["lookup", "ns-a"], ["grants", "x", "--limit", "ten"], ["--url"]];
    const runs = await Promise.all(usageErrors.map((bad) => cli(bad, { env: { RANGEID_URL: authority.base, RANGEID_TOKEN: admin } })));
    for (const [i, r] of runs.entries()) {
      assert.equal(r.code, 2, `${usageErrors[i].join(" ")}: ${r.stderr}`);
      assert.equal(r.stdout, "");
    }
    const version = await exec("npx", ["--no-install", "rangeid", "--version"], { cwd: pkg.scratch });
    assert.equal(version.code, 0, version.stderr);
    assert.equal(version.stdout.trim(), JSON.parse(readFileSync(join(pkg.scratch, "node_modules", "rangeid", "package.json"), "utf8")).version, "npx finds the installed bin");
  });
});
