// The package's `region` option, as a user gets it: the packed tarball
// installed in a scratch project, against the local authority on bare
// workerd (the production build; no `cf`, so a request that names no
// region is the region `default`). With the namespace's relays on, a
// generator made with `region: "r1"` is served by the relay of r1: the
// namespace object's ledger shows the grants under `relay@r1`, none under
// the generator's own sub, and every ID it issued inside one of them. One
// made without a region is served by `relay@default`. A bad region is
// refused `invalid_config` before anything is sent (docs/relays.md, "The
// region").
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { Authority, uniqueNs } from "../authority/harness.mjs";
import { createNamespace, installPacked } from "./harness.mjs";

let authority;
let pkg;
let admin;

before(async () => {
  pkg = installPacked();
  authority = await new Authority({ runtime: "workerd" }).start();
  admin = authority.token("admin", ["*"], { sub: "ops" });
});

after(async () => {
  await authority?.stop();
  authority?.cleanup();
  if (pkg) rmSync(pkg.scratch, { recursive: true, force: true });
});

/** Every grant of the namespace's ledger (all pages). */
async function ledger(ns) {
  const all = [];
  let page = "";
  for (;;) {
    const r = await authority.req("GET", `/v1/namespaces/${ns}/grants?limit=1000${page}`, { token: admin });
    assert.equal(r.status, 200, r.text);
    all.push(...r.body.grants);
    if (!r.body.nextBefore) return all;
    page = `&before=${r.body.nextBefore}`;
  }
}

/** A namespace with relays on, whose front has learned so: its first
 * grant (to `warm-up`, with no region) went to the namespace object, whose
 * answer says relays are on (docs/relays.md, "Routing"). */
async function relayedNamespace(prefix) {
  const ns = uniqueNs(prefix);
  await createNamespace(authority, admin, ns);
  const on = await authority.req("POST", `/v1/namespaces/${ns}/relays`, { token: admin, body: { relays: "on", reason: "region option test" } });
  assert.equal(on.status, 200, on.text);
  const warm = authority.token("generator", [ns], { sub: "warm-up" });
  const r = await authority.req("POST", "/v1/ranges", { token: warm, body: { namespace: ns, incarnation: "warm0", requestId: "r1", count: 1 } });
  assert.equal(r.status, 200, r.text);
  return ns;
}

/** `n` IDs from a new generator of `ns` with token sub `sub` and `extra` options; then closes it. */
async function take(createGenerator, ns, sub, n, extra = {}) {
  const g = await createGenerator({
    url: authority.base,
    token: authority.token("generator", [ns], { sub }),
    namespace: ns,
    rangeSize: 100,
    ...extra,
  });
  const ids = [];
  for (let i = 0; i < n; i++) ids.push(BigInt(await g.nextId()));
  g.close();
  return ids;
}

/** Asserts every ID lies inside a ledger grant to `relaySub`. */
function assertInside(ids, grants, relaySub, who) {
  const roots = grants.filter((g) => g.sub === relaySub).map((g) => [BigInt(g.start), BigInt(g.end)]);
  assert.ok(roots.length > 0, `no grant to ${relaySub}`);
  for (const id of ids) {
    assert.ok(roots.some(([s, e]) => s <= id && id < e), `${who}'s ID ${id} is in no grant to ${relaySub}`);
  }
}

test("region: 'r1' is served by relay@r1, no region by relay@default (ESM), and a CommonJS generator by its own", async () => {
  const { createGenerator } = await pkg.esm();
  const ns = await relayedNamespace("region");

  const r1 = await take(createGenerator, ns, "gen-r1", 1000, { region: "r1" });
  let grants = await ledger(ns);
  assert.deepEqual([...new Set(grants.map((g) => g.sub))].sort(), ["relay@r1", "warm-up"],
    "the generator with region r1 was served by the relay of r1 alone, never by the object directly or another relay");
  assertInside(r1, grants, "relay@r1", "gen-r1");

  const none = await take(createGenerator, ns, "gen-none", 1000);
  grants = await ledger(ns);
  assert.deepEqual([...new Set(grants.map((g) => g.sub))].sort(), ["relay@default", "relay@r1", "warm-up"],
    "the generator with no region was served by relay@default (bare workerd has no cf)");
  assertInside(none, grants, "relay@default", "gen-none");

  // The CommonJS build carries the option too.
  const cjs = pkg.cjs();
  const r2 = await take(cjs.createGenerator, ns, "gen-r2", 300, { region: "r2" });
  grants = await ledger(ns);
  assert.deepEqual([...new Set(grants.map((g) => g.sub))].sort(), ["relay@default", "relay@r1", "relay@r2", "warm-up"]);
  assertInside(r2, grants, "relay@r2", "gen-r2 (CommonJS)");

  const all = [...r1, ...none, ...r2];
  assert.equal(new Set(all).size, all.length, "no ID twice");
  console.log(`# ${grants.filter((g) => g.sub.startsWith("relay@")).length} relay grants for ${all.length} IDs from 3 generators in 3 regions`);
});

test("a bad region is invalid_config from the packed package (ESM and CommonJS), and nothing is sent", async () => {
  const ns = uniqueNs("region-bad");
  let sent = 0;
  const counting = async (url, init) => {
    sent += 1;
    return fetch(url, init);
  };
  for (const { createGenerator, RangeIdError } of [await pkg.esm(), pkg.cjs()]) {
    for (const region of ["", "WEUR", "eu_west", "a/b", "a".repeat(33), 1]) {
      await assert.rejects(
        createGenerator({ url: authority.base, token: authority.token("generator", [ns]), namespace: ns, fetch: counting, region }),
        (e) => e instanceof RangeIdError && e.code === "invalid_config" && /region must be/.test(e.message),
        JSON.stringify(region),
      );
    }
  }
  assert.equal(sent, 0, "no request was sent");
});
