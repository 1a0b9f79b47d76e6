// Release hygiene of the two npm packages, rangeid (npm/) and
// rangeid-authority (edge-authority/npm/), checked on the tarballs
// `npm pack` makes: packing runs each package's prepack (its build) and
// builds nothing when the build is up to date; an output deleted since is
// built again by the pack; each tarball holds exactly the expected files;
// publint and arethetypeswrong find nothing; versions and changelogs agree.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { publint } from "publint";
import { formatMessage } from "publint/utils";
import { changelogSections, releaseProblems, UNPUBLISHED_NOTES } from "../../scripts/release-check.mjs";
import { bytes, pack, packBoth, PACKAGES, repo } from "./pack.mjs";

const PACKAGE_DIRS = ["npm", "edge-authority/npm"];
const expected = JSON.parse(readFileSync(new URL("./packed-files.json", import.meta.url), "utf8"));
const here = new URL(".", import.meta.url).pathname;
// What the builds make; packing must not make any of them again.
const BUILT = [
  "npm/wasm/rangeid_wasm_bg.wasm", "npm/wasm/rangeid_wasm.js", "npm/dist/node.cjs", "npm/index.d.cts",
  "npm/wasm/testing/rangeid_testing_bg.wasm", "npm/dist/testing.cjs", "npm/testing.d.cts",
  "edge-authority/build/index.js", "edge-authority/build/index_bg.wasm", "www/dist/admin/index.html",
];
const mtimes = () => Object.fromEntries(BUILT.map((f) => [f, statSync(join(repo, f)).mtimeMs]));

let packed;
let built;
const scratch = [];

before(() => {
  // Up to date first (no-ops after `make build`, as in `make test`), then pack.
  execFileSync(process.execPath, [join(repo, "npm", "scripts", "build.mjs")], { stdio: ["ignore", "ignore", "inherit"] });
  execFileSync(join(repo, "edge-authority", "scripts", "build.sh"), { stdio: ["ignore", "ignore", "ignore"] });
  built = mtimes();
  packed = packBoth();
  scratch.push(dirname(packed.rangeid.tarball));
});

after(() => {
  for (const f of scratch) rmSync(f, { recursive: true, force: true });
});

test("packing runs each package's prepack, which builds nothing when the build is up to date", () => {
  assert.deepEqual(mtimes(), built, "no build output was made again by npm pack");
  const saw = (name, patterns) => {
    for (const re of patterns) assert.match(packed[name].log, re, `${name}'s pack printed ${re}`);
  };
  // Each prepack ran, and its build found nothing to do.
  saw("rangeid", [/> rangeid@\S+ prepack/, /build\.mjs: the package in \S+ is up to date/]);
  saw("rangeid-authority", [/> rangeid-authority@\S+ prepack/, /the admin page in www\/dist is up to date/, /the Worker in build\/ is up to date/, /package\.mjs: staged/]);
  for (const [name, p] of Object.entries(packed)) {
    console.log(`${name}: packed ${bytes(p.size)}, unpacked ${bytes(p.unpackedSize)}, ${p.files.length} files`);
  }
});

/** Files that break the expected list: [missing, unexpected]. */
function compare(files, patterns) {
  const re = (p) => new RegExp(`^${p.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]+")}$`);
  const missing = patterns.filter((p) => files.filter((f) => re(p).test(f)).length !== 1);
  const unexpected = files.filter((f) => !patterns.some((p) => re(p).test(f)));
  return { missing, unexpected };
}

for (const name of Object.keys(PACKAGES)) {
  test(`${name}: the tarball holds exactly the expected files (tests/release/packed-files.json)`, () => {
    assert.deepEqual(compare(packed[name].files, expected[name]), { missing: [], unexpected: [] });
  });

  test(`${name}: publint (strict, with suggestions) finds nothing in the tarball`, async () => {
    const buf = readFileSync(packed[name].tarball);
    const result = await publint({ pack: { tarball: buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) }, level: "suggestion", strict: true });
    assert.deepEqual(result.messages.map((m) => `${m.type}: ${formatMessage(m, result.pkg)}`), []);
  });
}

// arethetypeswrong, with the node16 profile: node10 resolution ignores
// `exports` (the packages need Node 20), and the `.wasm` subpath is an
// asset, not a module. The runtime-specific subpaths are ESM on purpose
// (bundlers and ESM runtimes load them), and so is ./inline, the entry for
// bundlers that cannot load a wasm asset; a require() of one is the single
// problem allowed, and only for them.
const ESM_ONLY = new Set(["./workerd", "./edge-light", "./browser", "./inline"]);
for (const [name, args] of [["rangeid", ["--exclude-entrypoints", "./rangeid_wasm_bg.wasm"]], ["rangeid-authority", []]]) {
  test(`${name}: arethetypeswrong finds no problem in the types`, () => {
    // Into a file, not a pipe: attw exits (1 when it lists any problem,
    // judged below) before a pipe takes all of a long report.
    const file = join(mkdtempSync(join(tmpdir(), "rangeid-attw-")), "report.json");
    scratch.push(dirname(file));
    const fd = openSync(file, "w");
    try {
      spawnSync(join(here, "node_modules", ".bin", "attw"), [packed[name].tarball, "--format", "json", ...args], { stdio: ["ignore", fd, "inherit"] });
    } finally {
      closeSync(fd);
    }
    const { analysis } = JSON.parse(readFileSync(file, "utf8"));
    assert.ok(Object.keys(analysis.entrypoints).length > 0, "attw analysed the entry points");
    const problems = analysis.problems
      .filter((p) => p.resolutionKind !== "node10")
      .filter((p) => !(p.kind === "CJSResolvesToESM" && ESM_ONLY.has(p.entrypoint)));
    assert.deepEqual(problems, []);
  });
}

test("the client stays small: it depends on neither the authority nor workerd", () => {
  const manifest = JSON.parse(readFileSync(join(PACKAGES.rangeid, "package.json"), "utf8"));
  for (const field of ["dependencies", "optionalDependencies", "peerDependencies"]) {
    for (const dep of ["rangeid-authority", "workerd", "wrangler"]) assert.equal(manifest[field]?.[dep], undefined, `${field}.${dep}`);
  }
  assert.ok(packed.rangeid.size < packed["rangeid-authority"].size / 4, "the client is a fraction of the authority");
});

test("a pack after an output was deleted builds it again, so no tarball ships without it", () => {
  const dtsCts = join(PACKAGES.rangeid, "index.d.cts");
  rmSync(dtsCts);
  const client = pack("rangeid");
  scratch.push(dirname(client.tarball));
  assert.ok(client.files.includes("index.d.cts"), "index.d.cts is in the tarball");
  assert.match(client.log, /built .*index\.d\.cts/, "the client's prepack rebuilt it");
  assert.ok(statSync(dtsCts).size > 0);

  rmSync(join(PACKAGES["rangeid-authority"], "build"), { recursive: true });
  const authority = pack("rangeid-authority");
  scratch.push(dirname(authority.tarball));
  assert.deepEqual(compare(authority.files, expected["rangeid-authority"]), { missing: [], unexpected: [] });
});

test("versions and changelogs agree across both packages (scripts/release-check.mjs), and the check can fail", () => {
  assert.deepEqual(releaseProblems(), []);
  const real = (p) => readFileSync(join(repo, p), "utf8");
  const bumped = (p) => (p === "edge-authority/npm/package.json" ? real(p).replace(/"version": "[^"]+"/, '"version": "9.9.9"') : real(p));
  assert.match(releaseProblems({ files: bumped }).join("\n"), /the versions differ: rangeid \S+, rangeid-authority 9\.9\.9/);
  const released = (p) => (p === "npm/CHANGELOG.md" ? real(p).replace(/^## \[Unreleased\]/m, "## [Unreleased]\n\n## [0.0.9] - 2026-01-01") : real(p));
  assert.match(releaseProblems({ files: released }).join("\n"), /the changelogs list different releases/);
  const repinned = (p) => (p === "edge-authority/npm/package.json" ? real(p).replace(/"workerd": "[^"]+"/, '"workerd": "^1.0.0"') : real(p));
  assert.match(releaseProblems({ files: repinned }).join("\n"), /workerd dependency must be an exact version/);
  // Right before publishing, both must open with a dated section for this version.
  const version = JSON.parse(real("npm/package.json")).version;
  const ready = PACKAGE_DIRS.every((d) => {
    const top = changelogSections(real(`${d}/CHANGELOG.md`))[0];
    return top?.version === version && top.date !== undefined;
  });
  const problems = releaseProblems({ release: true });
  if (ready) assert.deepEqual(problems.filter((p) => !/not on the npm registry yet/.test(p)), []);
  else assert.match(problems.join("\n"), /must open with ## \[\S+\] - YYYY-MM-DD/);
  // Until the first release the pages send readers to `make pack`; publishing with that note left is refused.
  for (const page of UNPUBLISHED_NOTES) {
    const noted = /not on the npm registry yet/i.test(real(page));
    assert.equal(problems.some((p) => p.startsWith(`${page} still says`)), noted, `${page}: the release check sees its note`);
  }
  const quiet = (p) => real(p).replace(/not on the npm registry yet/gi, "on the npm registry");
  assert.ok(!releaseProblems({ release: true, files: quiet }).some((p) => /still says/.test(p)));
});
