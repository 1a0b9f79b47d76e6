// The page's pure logic, compiled from www/src with esbuild and run in
// Node: exact shares, durations, the dense rate series, form checks.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { repo } from "./harness.mjs";

const www = join(repo, "www");
const { build } = await import(join(www, "node_modules", "esbuild", "lib", "main.js"));

async function load(path) {
  const out = await build({ entryPoints: [join(www, "src", path)], bundle: true, write: false, format: "esm", logLevel: "silent" });
  return import(`data:text/javascript,${encodeURIComponent(out.outputFiles[0].text)}`);
}

const { percent, grouped, parseDecimal } = await load("lib/decimal.ts");
const { capacity } = await load("lib/capacity.ts");
const { duration } = await load("lib/time.ts");
const { denseSeries } = await load("lib/series.ts");
const { checkCreate, checkFloor, checkReason } = await load("admin/validate.ts");

test("shares are exact, rounded down, and honest at both ends", () => {
  assert.equal(percent(0n, 10n), "0 %");
  assert.equal(percent(1n, 10n ** 19n), "< 0.001 %");
  assert.equal(percent(1n, 100_000n), "0.001 %");
  assert.equal(percent(5n, 10n), "50.000 %");
  assert.equal(percent(2n, 3n), "66.666 %");
  assert.equal(percent(99_999n, 100_000n), "99.999 %");
  assert.equal(percent(2n ** 64n - 2n, 2n ** 64n - 1n), "> 99.999 %");
  assert.equal(percent(7n, 7n), "100 %");
  const c = capacity({ first: "18446744073709551000", next: "18446744073709551615", max: "18446744073709551615", remaining: "1" });
  assert.equal(c.total, 616n);
  assert.equal(c.used, 615n);
  assert.equal(c.percent, "99.837 %");
  assert.equal(grouped("18446744073709551615"), "18,446,744,073,709,551,615");
  assert.equal(parseDecimal("9007199254740993"), 9007199254740993n);
  assert.equal(parseDecimal("1e3"), null);
  assert.equal(parseDecimal("007"), null);
});

test("durations read as the two largest units", () => {
  assert.equal(duration(0.2), "< 1 s");
  assert.equal(duration(61), "1 min 1 s");
  assert.equal(duration(3600), "1 h");
  assert.equal(duration(86400 * 29 + 3600 * 12), "29 d 12 h");
  assert.equal(duration(86400 * 365.25 * 5), "5 years");
  assert.equal(duration(1e15), "> 1,000 years");
});

test("sparse rate buckets become a dense series with zeros", () => {
  const s = denseSeries({
    namespace: "n", window: "1h", bucketSeconds: 60,
    from: "2026-01-01T00:00:30Z", to: "2026-01-01T00:05:10Z",
    buckets: [
      { minute: "2026-01-01T00:01:00Z", ranges: 2, ids: "2000" },
      { minute: "2026-01-01T00:04:00Z", ranges: 1, ids: "18446744073709551615" },
    ],
  });
  const t0 = Date.parse("2026-01-01T00:00:00Z") / 1000;
  assert.deepEqual(s.times, [0, 1, 2, 3, 4, 5].map((m) => t0 + 60 * m));
  assert.deepEqual(s.ids, [0, 2000, 0, 0, 18446744073709551615, 0]);
  assert.equal(s.totalIds, 18446744073709553615n);
  assert.equal(s.totalRanges, 3);
});

test("the admin forms refuse what the authority would, and warn past 2^53 - 1", () => {
  const ok = checkCreate({ namespace: "orders", first: "1", max: "9007199254740991", maxCount: "10000000" });
  assert.deepEqual(ok, { ok: { namespace: "orders", first: "1", max: "9007199254740991", maxCount: 10000000 }, warnings: {} });
  const big = checkCreate({ namespace: "orders", first: "1", max: "18446744073709551615", maxCount: "9007199254740991" });
  assert.ok("ok" in big && big.warnings.max);
  const bad = checkCreate({ namespace: "-x", first: "0", max: "18446744073709551616", maxCount: "9007199254740992" });
  assert.deepEqual(Object.keys(bad.problems).sort(), ["first", "max", "maxCount", "namespace"]);
  assert.ok("problems" in checkCreate({ namespace: "a", first: "10", max: "9", maxCount: "1" }));
  assert.deepEqual(checkFloor("200", "101", "1000"), { ok: "200" });
  assert.ok("problem" in checkFloor("101", "101", "1000"));
  assert.deepEqual(checkFloor("1001", "101", "1000"), { ok: "1001" });
  assert.ok("problem" in checkFloor("1002", "101", "1000"));
  assert.deepEqual(checkReason("  why  "), { ok: "why" });
  assert.ok("problem" in checkReason("   "));
  assert.deepEqual(checkReason("é".repeat(1024)), { ok: "é".repeat(1024) });
  assert.ok("problem" in checkReason("x".repeat(1025)));
});

test("the page's API types are generated from the authority's OpenAPI document, and are current", async () => {
  // edge-authority/openapi.json is checked against openapi.rs by its own
  // test (openapi::tests::the_committed_document_is_this_one).
  const { DOCUMENT, GENERATED, typesOf } = await import(join(www, "scripts", "api-types.mjs"));
  const { readFileSync } = await import("node:fs");
  assert.ok(readFileSync(GENERATED, "utf8") === (await typesOf(DOCUMENT)), "www/src/api/schema.gen.ts is stale: run node www/scripts/api-types.mjs");
});
