#!/usr/bin/env node
// The deploy bundle, checked offline: `wrangler deploy --dry-run --outdir`
// writes exactly what `wrangler deploy` would upload (the Worker's script
// and wasm; the admin page goes up as static assets). Prints its size,
// raw and gzipped, against Cloudflare's Worker size limits, and fails when
// it passes the Workers Free plan's. Then checks that no test switch
// (scripts/test-switches.mjs) is in what ships: this bundle, build/, and the
// shipped configurations; and that the test build, build-test/, holds them
// all (scripts/build.sh --test-switches), so the check can see them.
//
//   node edge-authority/scripts/bundle.mjs
//
// Needs edge-authority/build and build-test (scripts/build.sh, with and
// without --test-switches). No network, no account.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { checkSwitches, SWITCHES } from './test-switches.mjs';

const here = join(dirname(fileURLToPath(import.meta.url)), '..');
// Cloudflare's limits on a Worker's compressed size (developers.cloudflare.com/workers/platform/limits).
const FREE_GZIP = 3 * 1024 * 1024;
const PAID_GZIP = 10 * 1024 * 1024;

const out = mkdtempSync(join(tmpdir(), 'rangeid-bundle-'));
try {
  execFileSync(join(here, 'node_modules', '.bin', 'wrangler'), ['deploy', '--dry-run', '--outdir', out], {
    cwd: here,
    env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: 'false', WRANGLER_SEND_METRICS: 'false', CI: 'true' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const files = readdirSync(out).filter((f) => f.endsWith('.js') || f.endsWith('.wasm'));
  let raw = 0;
  let gz = 0;
  const kib = (n) => `${(n / 1024).toFixed(0)} KiB`;
  for (const f of files) {
    const bytes = readFileSync(join(out, f));
    const z = gzipSync(bytes, { level: 9 }).length;
    raw += statSync(join(out, f)).size;
    gz += z;
    console.log(`  ${f.replace(/^[0-9a-f]{40}-/, '')}: ${kib(bytes.length)}, gzip ${kib(z)}`);
  }
  console.log(`deploy bundle: ${kib(raw)}, gzip ${kib(gz)} (${((100 * gz) / FREE_GZIP).toFixed(0)} % of the Free plan's ${kib(FREE_GZIP)}, ${((100 * gz) / PAID_GZIP).toFixed(0)} % of the Paid plan's ${kib(PAID_GZIP)})`);
  if (gz > FREE_GZIP) {
    console.error('the bundle is over the Workers Free plan limit');
    process.exitCode = 1;
  }
  const problems = checkSwitches({ bundleDir: out });
  for (const p of problems) console.error(`test switches: ${p}`);
  if (problems.length > 0) process.exitCode = 1;
  else console.log(`test switches: none of the ${SWITCHES.length} in the production build, the deploy bundle or the shipped configs; all in the test build`);
} finally {
  rmSync(out, { recursive: true, force: true });
}
