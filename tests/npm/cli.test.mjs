// The `rangeid` command from the packed package (node_modules/.bin/rangeid,
// as `npx rangeid` runs it) against the real local authority on workerd.
// The authority runs with the key map the command's own `keygen --public`
// printed (an HS256 key and the public half of an Ed25519 one, as during a
// rotation), and every token below is minted by its `token` or signed
// here with WebCrypto: nothing signs with the test harness's key.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Authority, uniqueNs } from "../authority/harness.mjs";
import { installPacked } from "./harness.mjs";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const TWO_53 = 9007199254740992n;
const DAY = 86_400;

let pkg;
let bin;
let work;
let keysFile;
let authorityKeys;
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
async function mint(args, keys = keysFile) {
  const r = await cli(["token", ...args, "--keys", keys]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\n$/, "the token alone on one line");
  return r.stdout.trim();
}

function decode(token) {
  const [h, p] = token.split(".");
  return { header: JSON.parse(Buffer.from(h, "base64url")), claims: JSON.parse(Buffer.from(p, "base64url")) };
}

const b64 = (v) => Buffer.from(typeof v === "string" ? v : JSON.stringify(v)).toString("base64url");
const utf8 = (s) => new TextEncoder().encode(s);

/** HS256 checked with WebCrypto (not node:crypto's createHmac, which the CLI uses). */
async function verifiesWith(token, keyBytes) {
  const [h, p, s] = token.split(".");
  const k = await crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  return crypto.subtle.verify("HMAC", k, Buffer.from(s, "base64url"), utf8(`${h}.${p}`));
}

/** EdDSA checked with WebCrypto's Ed25519 against the public key `x`. */
async function verifiesWithEd(token, x) {
  const [h, p, s] = token.split(".");
  const k = await crypto.subtle.importKey("jwk", { kty: "OKP", crv: "Ed25519", x }, { name: "Ed25519" }, false, ["verify"]);
  return crypto.subtle.verify("Ed25519", k, Buffer.from(s, "base64url"), utf8(`${h}.${p}`));
}

/** A token signed here with WebCrypto: HS256 with `secret` bytes, or
 * EdDSA with the JWK `ed` ({x, d}); any header and claims. */
async function signed(header, claims, { secret, ed }) {
  const input = `${b64(header)}.${b64(claims)}`;
  let sig;
  if (secret) {
    const k = await crypto.subtle.importKey("raw", secret, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    sig = await crypto.subtle.sign("HMAC", k, utf8(input));
  } else {
    const k = await crypto.subtle.importKey("jwk", { kty: "OKP", crv: "Ed25519", x: ed.x, d: ed.d }, { name: "Ed25519" }, false, ["sign"]);
    sig = await crypto.subtle.sign("Ed25519", k, utf8(input));
  }
  return `${input}.${Buffer.from(sig).toString("base64url")}`;
}

async function session(token) {
  return authority.req("GET", "/v1/session", { token });
}

const keyMap = () => JSON.parse(readFileSync(keysFile, "utf8"));
const now = () => Math.floor(Date.now() / 1000);

before(async () => {
  pkg = installPacked();
  bin = join(pkg.scratch, "node_modules", ".bin", "rangeid");
  work = mkdtempSync(join(tmpdir(), "rangeid-cli-"));
  keysFile = join(work, "keys.json");
  // Two keys, as during a rotation: an HS256 "2026-01", then an Ed25519
  // "2026-06" added to the same map; the authority holds the public map.
  const older = await cli(["keygen", "--kid", "2026-01", "--out", keysFile]);
  assert.equal(older.code, 0, older.stderr);
  const newer = await cli(["keygen", "--add", keysFile, "--alg", "EdDSA", "--kid", "2026-06"]);
  assert.equal(newer.code, 0, newer.stderr);
  const pub = await cli(["keygen", "--public", keysFile]);
  assert.equal(pub.code, 0, pub.stderr);
  authorityKeys = pub.stdout.trim();
  authority = await new Authority({ runtime: process.env.RANGEID_TEST_RUNTIME || "workerd", keysText: authorityKeys }).start();
  admin = await mint(["--role", "admin", "--ns", "*", "--ttl", "1h", "--sub", "cli-admin"]);
  reader = await mint(["--role", "reader", "--ns", "*", "--ttl", "1h", "--sub", "cli-reader"]);
});

after(async () => {
  await authority?.stop();
  authority?.cleanup();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("keygen and token", () => {
  test("keygen writes key maps with creation times, mode 0600, never over a file; --add keeps the other keys", async () => {
    assert.equal(statSync(keysFile).mode & 0o777, 0o600, "--add kept the mode");
    const map = keyMap();
    assert.deepEqual(Object.keys(map), ["2026-01", "2026-06"]);
    const { k, created, ...hs } = map["2026-01"];
    assert.deepEqual(hs, { kty: "oct", alg: "HS256" });
    assert.equal(Buffer.from(k, "base64url").length, 32, "32 random bytes");
    assert.ok(Math.abs(created - now()) <= 60, `created ${created}`);
    const { x, d, created: edCreated, ...ed } = map["2026-06"];
    assert.deepEqual(ed, { kty: "OKP", crv: "Ed25519", alg: "EdDSA" });
    assert.equal(Buffer.from(x, "base64url").length, 32);
    assert.equal(Buffer.from(d, "base64url").length, 32);
    assert.ok(edCreated >= created);
    // The authority's map: the same keys, without the private half.
    const pub = JSON.parse(authorityKeys);
    assert.deepEqual(pub, { "2026-01": map["2026-01"], "2026-06": { kty: "OKP", crv: "Ed25519", alg: "EdDSA", x, created: edCreated } });
    const warned = await cli(["keygen", "--public", keysFile]);
    assert.match(warned.stderr, /HS256 secrets/, "a map with a shared secret is no public document");
    const edOnly = join(work, "ed-only.json");
    assert.equal((await cli(["keygen", "--alg", "EdDSA", "--out", edOnly])).code, 0);
    const edPublic = await cli(["keygen", "--public", edOnly]);
    assert.equal(edPublic.stderr, "");
    assert.doesNotMatch(edPublic.stdout, /"d"/);

    const before = readFileSync(keysFile, "utf8");
    for (const [args, why] of [
      [["keygen", "--kid", "other", "--out", keysFile], /exists/],
      [["keygen", "--add", keysFile, "--kid", "2026-06"], /already has a key named "2026-06"/],
      [["keygen", "--add", join(work, "absent.json")], /no such file/],
      [["keygen", "--add", keysFile, "--out", join(work, "x.json")], /--add/],
      [["keygen", "--alg", "RS256"], /--alg must be HS256 or EdDSA/],
      [["keygen", "--kid", "no spaces"], /--kid/],
      [["keygen", "--public", keysFile, "--kid", "x"], /--public takes no --kid/],
    ]) {
      const r = await cli(args);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.equal(r.stdout, "", args.join(" "));
      assert.match(r.stderr, why, args.join(" "));
    }
    assert.equal(readFileSync(keysFile, "utf8"), before, "refusals leave the map untouched");
    const plain = await cli(["keygen"]);
    assert.deepEqual(Object.keys(JSON.parse(plain.stdout)), ["local-1"], "default kid");
    // --add without --kid names the key by its creation time.
    const dated = join(work, "dated.json");
    assert.equal((await cli(["keygen", "--out", dated])).code, 0);
    assert.equal((await cli(["keygen", "--add", dated])).code, 0);
    assert.match(Object.keys(JSON.parse(readFileSync(dated, "utf8")))[1], /^key-\d{8}-\d{6}$/);
  });

  test("token: the newest key signs (EdDSA here), verified by WebCrypto and accepted by an authority holding only public keys", async () => {
    const map = keyMap();
    const t = await mint(["--role", "generator", "--ns", "orders, users", "--ttl", "2h", "--sub", "svc-1", "--aud", "ids.example"]);
    const { header, claims } = decode(t);
    assert.deepEqual(header, { alg: "EdDSA", kid: "2026-06", typ: "JWT" });
    assert.equal(claims.sub, "svc-1");
    assert.equal(claims.role, "generator");
    assert.deepEqual(claims.ns, ["orders", "users"]);
    assert.equal(claims.aud, "ids.example");
    assert.ok(Math.abs(claims.exp - (now() + 7200)) <= 5, `exp ${claims.exp}`);
    assert.equal(claims.exp - claims.iat, 7200, "iat says when it was minted, so the authority caps the whole life");
    assert.equal(await verifiesWithEd(t, map["2026-06"].x), true, "Ed25519 over header.claims");
    assert.doesNotMatch(authorityKeys, new RegExp(map["2026-06"].d), "the authority never saw the private key");
    const s = await session(t);
    assert.equal(s.status, 200, s.text);
    assert.deepEqual(s.body, { sub: "svc-1", role: "generator", ns: ["orders", "users"], exp: claims.exp });

    const old = await mint(["--role", "reader", "--ns", "*", "--kid", "2026-01"]);
    assert.deepEqual(decode(old).header, { alg: "HS256", kid: "2026-01", typ: "JWT" });
    const secret = Buffer.from(map["2026-01"].k, "base64url");
    assert.equal(await verifiesWith(old, secret), true, "HMAC-SHA256 with the key's bytes");
    const os = await session(old);
    assert.equal(os.status, 200);
    assert.deepEqual({ ...os.body, exp: 0 }, { sub: "reader", role: "reader", ns: ["*"], exp: 0 }, "a reader's sub defaults to the role");
    assert.ok(Math.abs(os.body.exp - (now() + 30 * DAY)) <= 5, "ttl defaults to 30 days");

    // The same from RANGEID_SIGNING_KEYS instead of --keys.
    const fromEnv = await cli(["token", "--role", "admin", "--ns", "*"], { env: { RANGEID_SIGNING_KEYS: JSON.stringify(map) } });
    assert.equal(fromEnv.code, 0, fromEnv.stderr);
    assert.equal((await session(fromEnv.stdout.trim())).status, 200);

    // A token the authority must refuse: signed with a key it does not hold.
    const stranger = join(work, "stranger.json");
    assert.equal((await cli(["keygen", "--alg", "EdDSA", "--kid", "2026-06", "--out", stranger])).code, 0);
    const forged = await cli(["token", "--role", "admin", "--ns", "*", "--keys", stranger]);
    assert.equal((await session(forged.stdout.trim())).status, 401);

    // The authority's map cannot mint: its newest key has no private half.
    const publicFile = join(work, "public.json");
    writeFileSync(publicFile, authorityKeys);
    const noPrivate = await cli(["token", "--role", "admin", "--ns", "*", "--keys", publicFile]);
    assert.equal(noPrivate.code, 2);
    assert.match(noPrivate.stderr, /Ed25519 public key: minting needs its private half/);
  });

  test("the newest key is the latest created, not the greatest kid; undated keys are not guessed between", async () => {
    // A map from before creation times were kept: one string key, local-1.
    // keygen --add then adds 2026-06, which sorts before local-1 but is newer.
    const legacy = join(work, "legacy.json");
    writeFileSync(legacy, JSON.stringify({ "local-1": "ab".repeat(32) }), { mode: 0o600 });
    assert.equal(decode(await mint(["--role", "admin", "--ns", "*"], legacy)).header.kid, "local-1", "one key: that one");
    assert.equal((await cli(["keygen", "--add", legacy, "--kid", "2026-06"])).code, 0);
    assert.equal(JSON.parse(readFileSync(legacy, "utf8"))["local-1"], "ab".repeat(32), "the old key is kept as written");
    assert.equal(decode(await mint(["--role", "admin", "--ns", "*"], legacy)).header.kid, "2026-06");
    assert.equal(decode(await mint(["--role", "admin", "--ns", "*", "--kid", "local-1"], legacy)).header.kid, "local-1");
    // Dated keys: the later creation time wins whatever the kids are.
    const dated = join(work, "dated-order.json");
    writeFileSync(dated, JSON.stringify({
      "z-old": { kty: "oct", k: Buffer.alloc(32, 1).toString("base64url"), created: 1_700_000_000 },
      "a-new": { kty: "oct", k: Buffer.alloc(32, 2).toString("base64url"), created: 1_800_000_000 },
    }));
    assert.equal(decode(await mint(["--role", "admin", "--ns", "*"], dated)).header.kid, "a-new");
    // Two keys and no creation time: refused, never guessed.
    const undated = join(work, "undated.json");
    writeFileSync(undated, JSON.stringify({ "2026-06": "cd".repeat(32), "local-1": "ef".repeat(32) }));
    const guess = await cli(["token", "--role", "admin", "--ns", "*", "--keys", undated]);
    assert.equal(guess.code, 2);
    assert.match(guess.stderr, /none records when it was made.*--kid/);
    assert.equal(guess.stdout, "");
  });

  test("token refuses bad input with exit 2 and nothing on stdout; lifetimes are capped per role", async () => {
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
      [["--role", "admin", "--ns", "x", "--ttl", "1.5h"], /--ttl/],
      [["--role", "admin", "--ns", "x", "--ttl", "99999999999999999999d"], /--ttl/],
      [["--role", "admin", "--ns", "x", "--ttl", "31d"], /an admin token lives at most 30d/],
      [["--role", "admin", "--ns", "x", "--ttl", String(30 * DAY + 1)], /at most 30d/],
      [["--role", "generator", "--ns", "x", "--ttl", "366d"], /a generator token lives at most 365d/],
      [["--role", "reader", "--ns", "x", "--ttl", "8761h"], /a reader token lives at most 365d/],
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
    // Each cap itself is accepted, by the command and by the authority.
    for (const [role, ttl] of [["admin", "30d"], ["reader", "365d"], ["generator", "8760h"]]) {
      const t = await mint(["--role", role, "--ns", "*", "--ttl", ttl, "--sub", "capped"]);
      assert.equal((await session(t)).status, 200, `${role} ${ttl}`);
    }
  });

  test("key maps: the command accepts exactly what tests/fixtures/key-maps.json says (the authority's tests read it too)", async () => {
    const { cases } = JSON.parse(readFileSync(join(repo, "tests", "fixtures", "key-maps.json"), "utf8"));
    const runs = await Promise.all(cases.map((c, i) => {
      const file = join(work, `fixture-${i}.json`);
      writeFileSync(file, c.text);
      return cli(["keygen", "--public", file]);
    }));
    for (const [i, c] of cases.entries()) {
      assert.equal(runs[i].code, c.cli === "ok" ? 0 : 2, `${c.name}: ${c.text}\n${runs[i].stderr}`);
    }
  });

  test("generators minted without --sub get unique subs: one cannot take or block another's request", async () => {
    const ns = uniqueNs("cli-sub");
    assert.equal((await api(["ns", "create", ns])).code, 0);
    const mintGenerator = async () => {
      const r = await cli(["token", "--role", "generator", "--ns", ns, "--keys", keysFile]);
      assert.equal(r.code, 0, r.stderr);
      const sub = decode(r.stdout.trim()).claims.sub;
      assert.match(sub, /^generator-[0-9a-f]{16}$/);
      assert.match(r.stderr, new RegExp(`--sub ${sub}\\b`), "the sub is printed, to keep when rotating");
      return { token: r.stdout.trim(), sub };
    };
    const [first, second] = [await mintGenerator(), await mintGenerator()];
    assert.notEqual(first.sub, second.sub);
    // The same body from both: the second never receives the first's range.
    const body = { namespace: ns, incarnation: "shared-inc", requestId: "r1", count: 10 };
    const grant = (token) => authority.req("POST", "/v1/ranges", { token, body });
    const a = await grant(first.token);
    assert.equal(a.status, 200, a.text);
    const b = await grant(second.token);
    if (b.status === 200) {
      assert.ok(BigInt(b.body.start) >= BigInt(a.body.end) || BigInt(b.body.end) <= BigInt(a.body.start),
        `the second generator got [${b.body.start}, ${b.body.end}), overlapping the first's [${a.body.start}, ${a.body.end})`);
    } else {
      assert.ok([403, 409].includes(b.status), b.text);
    }
    // The first's retry still gets its own range, exactly.
    const again = await grant(first.token);
    assert.equal(again.status, 200, again.text);
    assert.deepEqual([again.body.start, again.body.end], [a.body.start, a.body.end]);
  });

  test("the authority refuses alg confusion, alg none, tampering, a token outliving its cap, and a kid removed by rotation", async () => {
    const map = keyMap();
    const secret = Buffer.from(map["2026-01"].k, "base64url");
    const ed = map["2026-06"];
    const exp = now() + 3600;
    const claims = { sub: "mallory", role: "admin", ns: ["*"], exp };
    const refused = async (name, token) => {
      const r = await session(token);
      assert.equal(r.status, 401, `${name}: ${r.text}`);
      return r.body;
    };
    // The signatures are right; only the kinds are wrong.
    assert.equal((await session(await signed({ alg: "HS256", kid: "2026-01", typ: "JWT" }, claims, { secret }))).status, 200);
    assert.equal((await session(await signed({ alg: "EdDSA", kid: "2026-06", typ: "JWT" }, claims, { ed }))).status, 200);
    const unknown = await refused("unknown kid", await signed({ alg: "EdDSA", kid: "2027-01", typ: "JWT" }, claims, { ed }));
    for (const [name, token] of [
      ["HS256 keyed with the Ed25519 public key's bytes", await signed({ alg: "HS256", kid: "2026-06", typ: "JWT" }, claims, { secret: Buffer.from(ed.x, "base64url") })],
      ["HS256 keyed with the Ed25519 public key's text", await signed({ alg: "HS256", kid: "2026-06", typ: "JWT" }, claims, { secret: utf8(ed.x) })],
      ["EdDSA under the HS256 kid", await signed({ alg: "EdDSA", kid: "2026-01", typ: "JWT" }, claims, { ed })],
    ]) {
      assert.deepEqual(await refused(name, token), unknown, `${name}: answered as an unknown kid is`);
    }
    const good = await signed({ alg: "EdDSA", kid: "2026-06", typ: "JWT" }, claims, { ed });
    const [h, p, sig] = good.split(".");
    await refused("alg none", `${b64({ alg: "none", kid: "2026-06" })}.${p}.`);
    await refused("tampered", `${h}.${b64({ ...claims, ns: ["other"] })}.${sig}`);
    await refused("expired", await signed({ alg: "EdDSA", kid: "2026-06" }, { ...claims, exp: now() - 1 }, { ed }));
    await refused("not yet valid", await signed({ alg: "EdDSA", kid: "2026-06" }, { ...claims, nbf: now() + 600 }, { ed }));
    const long = await refused("an admin token for 31 days", await signed({ alg: "EdDSA", kid: "2026-06" }, { ...claims, exp: now() + 31 * DAY }, { ed }));
    assert.match(long.error.message, /at most 30 days/);
    await refused("a generator token for 366 days", await signed({ alg: "HS256", kid: "2026-01" }, { ...claims, role: "generator", exp: now() + 366 * DAY }, { secret }));

    // Rotation: the authority restarts without 2026-01. Its tokens stop
    // working; the Ed25519 key's go on.
    const older = await mint(["--role", "reader", "--ns", "*", "--kid", "2026-01"]);
    const newer = await mint(["--role", "reader", "--ns", "*"]);
    assert.equal((await session(older)).status, 200);
    const rotated = JSON.parse(authorityKeys);
    delete rotated["2026-01"];
    await authority.stop();
    authority.setKeys(JSON.stringify(rotated));
    await authority.start();
    assert.deepEqual(await refused("a kid removed by rotation", older), unknown);
    assert.equal((await session(newer)).status, 200);
    assert.equal((await session(admin)).status, 200);
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
    assert.match(show.stdout, /remaining\s+9007199254740991 \(100 % left\)/);
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
    assert.match(show.stdout, /remaining\s+16 \(< 0\.001 % left\)/);
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

  test("through a relay: lookup names the generator once reported, and the relay; ns show lists the relay", async () => {
    const ns = uniqueNs("cli-relay");
    assert.equal((await api(["ns", "create", ns])).code, 0);
    const bad = await api(["ns", "relays", ns, "maybe", "--reason", "cli test"]);
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /relays must be on or off/);
    const on = await api(["ns", "relays", ns, "on", "--reason", "cli test"]);
    assert.equal(on.code, 0, on.stderr);
    assert.equal(on.stdout.trim(), `${ns}: relays on`);
    const audit = JSON.parse((await api(["audit", ns, "--json"])).stdout).audit;
    assert.deepEqual([audit[0].action, audit[0].after, audit[0].reason], ["relays", { relays: "on" }, "cli test"]);
    const gen = await mint(["--role", "generator", "--ns", ns, "--sub", "svc-relayed"]);
    const grant = (id) => authority.req("POST", "/v1/ranges?region=r7", { token: gen, body: { namespace: ns, incarnation: "cli-relay-1", requestId: id, count: 10 } });
    // The first teaches the front that relays are on; the second goes
    // through the relay of region r7.
    assert.equal((await grant("r1")).status, 200);
    const g = await grant("r2");
    assert.equal(g.status, 200, g.text);
    const deadline = Date.now() + 15_000;
    for (;;) {
      const look = await api(["lookup", ns, g.body.start], reader);
      assert.equal(look.code, 0, look.stderr);
      assert.match(look.stdout, /^relay\s+relay@r7: \[\d+, \d+\) under [0-9a-f]{32}; /m);
      if (/; reported/.test(look.stdout)) {
        assert.match(look.stdout, /sub\s+svc-relayed/);
        assert.match(look.stdout, new RegExp(`range\\s+\\[${g.body.start}, ${g.body.end}\\) \\(10 IDs\\)`));
        break;
      }
      assert.match(look.stdout, /not reported: no report names a generator/);
      assert.ok(Date.now() < deadline, look.stdout);
      await new Promise((r) => setTimeout(r, 250));
    }
    const show = await api(["ns", "show", ns], reader);
    assert.match(show.stdout, /^relay@r7\s+holds \d+ IDs, 1 sub-grants, abandoned 0 IDs, 1 of 1 instances live; reports: 1 kept in 1 batches; last /m);
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
    assert.match(s.stdout, new RegExp(`^${big}\\s+active\\s+9007199254740990\\s+18437736874454810626\\s+100 %\\s+0\\s+no grants lately$`, "m"));
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
    const commands = ["keygen", "token", "ns create", "ns list", "ns show", "ns freeze", "ns unfreeze", "ns floor", "ns relays", "ns limits", "grants", "lookup", "audit", "status"];
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
