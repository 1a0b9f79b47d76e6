// One source for each rule: the copies that the CLI (npm/bin), the admin
// page (www/src) and the package's types (npm/index.d.ts) keep of a rule
// whose source is elsewhere are checked here against that source, so that a
// copy that drifts fails a test: the namespace-name rule (core's
// Namespace::PATTERN; the OpenAPI document takes it directly), shares and
// durations (npm/bin/format.mjs, which the page re-exports), the wire's
// error codes and the token roles (the OpenAPI document,
// edge-authority/openapi.json), the key-id rule (token.rs's KID_PATTERN),
// and the relay-region rule of the package's `region` option (the OpenAPI
// document's `region` parameter of POST /v1/ranges).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const www = join(repo, "www");
const { build } = await import(join(www, "node_modules", "esbuild", "lib", "main.js"));

/** A module of the admin page, compiled from www/src with esbuild. */
async function wwwModule(path) {
  const out = await build({ entryPoints: [join(www, "src", path)], bundle: true, write: false, format: "esm", logLevel: "silent" });
  return import(`data:text/javascript,${encodeURIComponent(out.outputFiles[0].text)}`);
}

/** `Namespace::PATTERN` as core/src/names.rs declares it (core is the source). */
function corePattern(type) {
  const text = readFileSync(join(repo, "core", "src", "names.rs"), "utf8");
  const found = [...text.matchAll(new RegExp(`^\\s*${type},\\s*\\d+,\\s*\\w+,\\s*\\w+,\\s*"([^"]+)"`, "gm"))];
  assert.equal(found.length, 1, `core/src/names.rs declares ${type} once, with its pattern`);
  return found[0][1];
}

/** Strings around the rule's edges: every one- and two-character string over
 * ASCII and some non-ASCII, the lengths around the limit, trailing newlines. */
function corpus() {
  const alphabet = [...Array.from({ length: 128 }, (_, i) => String.fromCharCode(i)), "é", "ß", "Σ", "😀", "\u212A", "\uFEFF"];
  const out = [""];
  for (const a of alphabet) {
    out.push(a);
    for (const b of alphabet) out.push(a + b);
  }
  for (const len of [62, 63, 64, 65]) {
    for (const c of ["a", "0", "-", ".", "_", "A", ":"]) out.push(c.repeat(len), "a" + c.repeat(len - 1), "a".repeat(len - 1) + "\n");
  }
  return out;
}

test("the namespace-name rule: the CLI and the admin page check exactly core's Namespace::PATTERN", async () => {
  const source = corePattern("Namespace");
  const core = new RegExp(source);
  const copies = {
    "npm/bin/names.mjs": (await import(join(repo, "npm", "bin", "names.mjs"))).NAMESPACE_RE,
    "www/src/admin/validate.ts": (await wwwModule("admin/validate.ts")).NAMESPACE_RE,
  };
  for (const [where, re] of Object.entries(copies)) {
    assert.ok(re instanceof RegExp, `${where} exports its NAMESPACE_RE`);
    assert.equal(re.source, core.source, `${where} has drifted from core's Namespace::PATTERN`);
    assert.equal(re.flags, "", `${where}: no flags (core's rule is case-sensitive, whole-string)`);
    for (const s of corpus()) assert.equal(re.test(s), core.test(s), `${where} and core disagree on ${JSON.stringify(s)}`);
  }
  // The CLI and the page use their copy: a name core refuses is refused.
  const { checkCreate } = await wwwModule("admin/validate.ts");
  for (const bad of ["Orders", "-a", "a".repeat(64), "a/b"]) {
    assert.ok(checkCreate({ namespace: bad, first: "1", max: "10", maxCount: "5" }).problems?.namespace, `the page refuses ${bad}`);
  }
});

test("shares and durations: the CLI and the admin page print the same text for the same input", async () => {
  const cli = await import(join(repo, "npm", "bin", "format.mjs"));
  const page = { ...(await wwwModule("lib/decimal.ts")), ...(await wwwModule("lib/time.ts")) };
  const max = (1n << 64n) - 1n;
  const shares = [[0n, 10n], [1n, max], [1n, 100_000n], [5n, 10n], [2n, 3n], [max - 1n, max], [7n, 7n], [8n, 7n], [3n, 0n], [16n, max - (1n << 53n)]];
  for (const [part, whole] of shares) assert.equal(page.percent(part, whole), cli.percent(part, whole), `${part}/${whole}`);
  const spans = [NaN, Infinity, -1, 0, 0.5, 1, 59, 60, 61, 3599, 3600, 3661, 86399, 86400, 90061, 2 * 365.25 * 86400 - 1, 2 * 365.25 * 86400, 999 * 365.25 * 86400, 1000 * 365.25 * 86400, 1e300];
  for (const s of spans) assert.equal(page.duration(s), cli.duration(s), String(s));
  // And what they print, once, so that a change to the one module is seen.
  assert.equal(cli.percent(2n, 3n), "66.666 %");
  assert.equal(cli.percent(1n, max), "< 0.001 %");
  assert.equal(cli.duration(90061), "1 d 1 h");
  assert.equal(cli.duration(Infinity), "never");
});

test("the key-id rule: the CLI checks exactly the authority's KID_PATTERN", async () => {
  const text = readFileSync(join(repo, "edge-authority", "src", "front", "token.rs"), "utf8");
  const found = [...text.matchAll(/^pub const KID_PATTERN: &str = "([^"]+)";$/gm)];
  assert.equal(found.length, 1, "token.rs declares KID_PATTERN once");
  const source = new RegExp(found[0][1]);
  const { KID_RE } = await import(join(repo, "npm", "bin", "keys.mjs"));
  assert.equal(KID_RE.source, source.source, "npm/bin/keys.mjs's KID_RE has drifted from token.rs's KID_PATTERN");
  assert.equal(KID_RE.flags, "");
  for (const s of corpus()) assert.equal(KID_RE.test(s), source.test(s), JSON.stringify(s));
});

test("token roles: the CLI mints exactly the roles of the authority's OpenAPI document (Role::ALL), in its order", async () => {
  const document = JSON.parse(readFileSync(join(repo, "edge-authority", "openapi.json"), "utf8"));
  const roles = document.components.schemas.Session.properties.role.enum;
  const { ROLES } = await import(join(repo, "npm", "bin", "keys.mjs"));
  assert.deepEqual(ROLES, roles);
});

test("the npm package's error codes: each is a code of the authority's OpenAPI document, or one the client makes itself", () => {
  const document = JSON.parse(readFileSync(join(repo, "edge-authority", "openapi.json"), "utf8"));
  const wire = new Set(document.components.schemas.Error.properties.error.properties.code.enum);
  // Codes the client gives for what it decides itself (npm/index.d.ts says which).
  const own = new Set(["unavailable", "exhausted", "frozen", "closed", "aborted", "invalid_config", "refused"]);
  for (const file of ["index.d.ts"]) {
    const text = readFileSync(join(repo, "npm", file), "utf8");
    const union = /export type RangeIdErrorCode =([^;]+);/.exec(text);
    assert.ok(union, `${file} declares RangeIdErrorCode`);
    const codes = [...union[1].matchAll(/"([a-z_]+)"/g)].map((m) => m[1]);
    assert.ok(codes.length > 10);
    for (const code of codes) assert.ok(wire.has(code) || own.has(code), `${file}: ${code} is neither the authority's nor the client's own`);
  }
});

test("the relay-region rule: the package's region option checks exactly the OpenAPI document's region parameter", async () => {
  const document = JSON.parse(readFileSync(join(repo, "edge-authority", "openapi.json"), "utf8"));
  const params = document.paths["/v1/ranges"].post.parameters.filter((p) => p.name === "region" && p.in === "query");
  assert.equal(params.length, 1, "POST /v1/ranges declares one region query parameter");
  const { pattern, maxLength } = params[0].schema;
  const source = new RegExp(pattern);
  const { REGION_RE, driverOptions } = await import(join(repo, "npm", "src", "generator.mjs"));
  assert.ok(REGION_RE instanceof RegExp, "npm/src/generator.mjs exports its REGION_RE");
  assert.equal(REGION_RE.source, source.source, "npm/src/generator.mjs's REGION_RE has drifted from the OpenAPI document's region pattern");
  assert.equal(REGION_RE.flags, "");
  const strings = corpus();
  for (const len of [maxLength - 1, maxLength, maxLength + 1]) {
    for (const c of ["a", "0", "-", "A", "_"]) strings.push(c.repeat(len), "a" + c.repeat(len - 1), "a".repeat(len - 1) + "\n");
  }
  for (const s of strings) {
    const fits = source.test(s) && s.length <= maxLength;
    assert.equal(REGION_RE.test(s), fits, JSON.stringify(s));
    // And the option itself: what the document allows is taken, the rest refused.
    const check = () => driverOptions({ url: "https://ids.example", token: "t", region: s });
    if (fits) assert.ok(check().endpoint.endsWith(`/v1/ranges?region=${s}`), JSON.stringify(s));
    else assert.throws(check, (e) => e.code === "invalid_config", JSON.stringify(s));
  }
});
