#!/usr/bin/env node
// Checks that the two npm packages agree before they are packed or
// published (docs/releasing.md):
//   - `rangeid` (npm/) and `rangeid-authority` (edge-authority/npm/) have
//     the same version;
//   - in each CHANGELOG.md, the newest section with a version is that
//     version (`## [X.Y.Z] - DATE` once released; without a date while it
//     is prepared), and both list the same releases;
//   - the authority's `workerd` dependency is exact and is the workerd that
//     the repository's wrangler runs (what the integration tests ran on),
//     and the wrangler it names as tested is the repository's;
//   - with --release (right before publishing): both changelogs' top
//     section is this version with a date, and no [Unreleased] section is
//     left above it; no page still says the packages are "not on the npm
//     registry yet" (UNPUBLISHED_NOTES).
//
//   node scripts/release-check.mjs [--release]
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..");
const read = (p) => readFileSync(join(repo, p), "utf8");
const json = (p) => JSON.parse(read(p));

export const PACKAGES = [
  { name: "rangeid", dir: "npm" },
  { name: "rangeid-authority", dir: "edge-authority/npm" },
];

/** The pages that tell a reader to `make pack` until the first release; each loses that note when it is published. */
export const UNPUBLISHED_NOTES = ["README.md", "npm/README.md", "docs/deploy.md"];
const UNPUBLISHED = /not on the npm registry yet/i;

/** The `## [...]` headings of a changelog, in order: {version, date} (version "Unreleased" for that one). */
export function changelogSections(text) {
  return [...text.matchAll(/^## \[([^\]]+)\](?:\s+-\s+(\S+))?\s*$/gm)].map((m) => ({ version: m[1], date: m[2] }));
}

/** Every disagreement found, as sentences; empty when the packages agree. */
export function releaseProblems({ release = false, files = read } = {}) {
  const problems = [];
  const manifests = PACKAGES.map((p) => ({ ...p, manifest: JSON.parse(files(`${p.dir}/package.json`)) }));
  for (const p of manifests) {
    if (p.manifest.name !== p.name) problems.push(`${p.dir}/package.json is named ${p.manifest.name}, not ${p.name}`);
  }
  const versions = new Set(manifests.map((p) => p.manifest.version));
  if (versions.size !== 1) problems.push(`the versions differ: ${manifests.map((p) => `${p.name} ${p.manifest.version}`).join(", ")}`);
  const version = manifests[0].manifest.version;

  const released = [];
  for (const p of manifests) {
    const sections = changelogSections(files(`${p.dir}/CHANGELOG.md`));
    // A section with a date is a release; one without (after [Unreleased])
    // is the version being prepared, which only package.json's may be.
    const versioned = sections.filter((s) => s.version !== "Unreleased");
    for (const s of versioned) {
      if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(s.version)) problems.push(`${p.dir}/CHANGELOG.md: "${s.version}" is not a version`);
      if (s.date !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(s.date)) problems.push(`${p.dir}/CHANGELOG.md: [${s.version}]'s date ${s.date} is not YYYY-MM-DD`);
    }
    const undated = versioned.filter((s) => s.date === undefined);
    for (const s of undated) {
      if (s.version !== p.manifest.version || s !== versioned[0]) {
        problems.push(`${p.dir}/CHANGELOG.md: [${s.version}] has no date; only the newest section, package.json's version ${p.manifest.version}, may be unreleased`);
      }
    }
    const dated = versioned.filter((s) => s.date !== undefined);
    if (dated.length && dated[0].version !== p.manifest.version && undated.length === 0) {
      problems.push(`${p.dir}/CHANGELOG.md's newest release is ${dated[0].version}, but package.json says ${p.manifest.version}`);
    }
    released.push(dated.map((s) => s.version).join(", "));
    if (release) {
      const top = sections[0];
      if (!top || top.version !== version || !top.date) {
        problems.push(`${p.dir}/CHANGELOG.md must open with ## [${version}] - YYYY-MM-DD to release ${version} (found ${top ? `[${top.version}]` : "no section"})`);
      }
    }
  }
  if (release) {
    for (const page of UNPUBLISHED_NOTES) {
      if (UNPUBLISHED.test(files(page))) problems.push(`${page} still says the packages are not on the npm registry yet; say how to install them from it`);
    }
  }
  if (released[0] !== released[1]) problems.push(`the changelogs list different releases: ${PACKAGES.map((p, i) => `${p.name} [${released[i] || "none"}]`).join(", ")}`);

  // The runtime the authority package pins is the one the tests ran on.
  const authority = manifests[1].manifest;
  const pinned = authority.dependencies?.workerd;
  const lock = JSON.parse(files("edge-authority/package-lock.json"));
  const tested = lock.packages?.["node_modules/workerd"]?.version;
  if (!/^\d+\.\d+\.\d+$/.test(pinned ?? "")) problems.push(`rangeid-authority's workerd dependency must be an exact version, not ${pinned}`);
  else if (pinned !== tested) problems.push(`rangeid-authority pins workerd ${pinned}, but the repository's wrangler runs workerd ${tested} (edge-authority/package-lock.json)`);
  const wrangler = JSON.parse(files("edge-authority/package.json")).devDependencies?.wrangler;
  const named = /const testedWrangler = "([^"]+)"/.exec(files("edge-authority/npm/index.js"))?.[1];
  if (named !== wrangler) problems.push(`rangeid-authority's testedWrangler is ${named}, but the repository deploys with wrangler ${wrangler}`);
  return problems;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const release = process.argv.includes("--release");
  const problems = releaseProblems({ release });
  if (problems.length) {
    for (const p of problems) console.error(`release-check: ${p}`);
    process.exitCode = 1;
  } else {
    const version = json("npm/package.json").version;
    console.log(`release-check: rangeid and rangeid-authority ${version} agree${release ? "; ready to publish" : ""}`);
  }
}
