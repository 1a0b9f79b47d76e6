// HTTP fuzzing of the authority with Schemathesis (pinned in .venv by
// scripts/setup.sh): one authority on bare workerd, three namespaces, then one
// Schemathesis run against the served OpenAPI document per token (generator,
// reader, admin, none), about 90 s in all. Every run checks that nothing
// answers 5xx, that statuses, content types, headers and bodies are the
// documented ones, that requests the document allows are accepted and those
// it forbids refused, and (tests/authority/fuzz_hooks.py) that a refused
// request changes no state. Settings: tests/authority/schemathesis.toml.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Authority } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const schemathesis = join(here, '..', '..', '.venv', 'bin', 'schemathesis');
const config = join(here, 'schemathesis.toml');
const hooks = join(here, 'fuzz_hooks.py');

// The namespaces the runs aim at (schemathesis.toml names them too): two
// small enough to run out, one with a small largest request, one frozen
// (after one grant).
const NAMESPACES = [
  { namespace: 'fuzz', max: '1000000' },
  { namespace: 'fuzz-2', max: '1000000', maxCount: 1000 },
  { namespace: 'fuzz-frozen', max: '1000000' },
];

// One run per token, in this order: the generator takes ranges from fresh
// namespaces (replays, conflicts, exhausting one, the frozen one), the
// reader reads them, the admin creates, floors, freezes and unfreezes, and
// requests without a token (or with a made-up one) read nothing. Seconds
// each (Schemathesis's --max-time), 80 s in all. Schemathesis splits a run's
// time evenly over its operations, so the generator's run keeps to its own
// two: POST /v1/ranges gets most of it. The other runs cover every
// operation, the generator's refusals elsewhere included.
const RUNS = [
  {
    name: 'a generator token',
    seconds: 25,
    token: (a) => a.token('generator', ['fuzz', 'fuzz-2', 'fuzz-frozen'], { sub: 'fuzz-generator' }),
    only: ['/v1/ranges', '/v1/session'],
  },
  { name: 'a reader token', seconds: 17, token: (a) => a.token('reader', ['fuzz', 'fuzz-frozen'], { sub: 'fuzz-reader' }) },
  { name: 'an admin token', seconds: 30, token: (a) => a.token('admin', ['*'], { sub: 'fuzz-admin' }) },
  { name: 'no token', seconds: 8, token: () => null },
];

let a;
let admin;

before(async () => {
  a = await new Authority({ runtime: 'workerd' }).start();
  admin = a.token('admin', ['*'], { sub: 'fuzz-setup' });
  for (const body of NAMESPACES) {
    const r = await a.req('POST', '/v1/namespaces', { token: admin, body });
    assert.equal(r.status, 201, r.text);
  }
  const generator = a.token('generator', ['fuzz-frozen'], { sub: 'fuzz-setup' });
  const grant = await a.req('POST', '/v1/ranges', {
    token: generator,
    body: { namespace: 'fuzz-frozen', incarnation: 'setup', requestId: 'setup-1', count: 10 },
  });
  assert.equal(grant.status, 200, grant.text);
  const frozen = await a.req('POST', '/v1/namespaces/fuzz-frozen/freeze', { token: admin, body: { reason: 'fuzzing a frozen namespace' } });
  assert.equal(frozen.status, 200, frozen.text);
});

after(async () => {
  await a?.stop();
  a?.cleanup();
});

/** Runs Schemathesis once; resolves to {code, output}. */
function runSchemathesis(args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(schemathesis, args, {
      cwd: a.workDir, // its .hypothesis and .schemathesis folders go away with the authority's
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (b) => { output += b; });
    child.stderr.on('data', (b) => { output += b; });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** Schemathesis's report from its FAILURES (or ERRORS) section on, at
 * most about 200 lines; its last 60 lines when it has no such section. */
function report(output) {
  const lines = output.split('\n');
  const start = lines.findIndex((l) => /^=+ (FAILURES|ERRORS) =+$/.test(l));
  if (start < 0) return lines.slice(-60).join('\n');
  const rest = lines.slice(start);
  return rest.length <= 200 ? rest.join('\n') : [...rest.slice(0, 150), '[...]', ...rest.slice(-45)].join('\n');
}

test('the authority answers fuzzed requests as its OpenAPI document says, for every token', { timeout: 300_000 }, async (t) => {
  assert.ok(existsSync(schemathesis), `${schemathesis} is missing: run scripts/setup.sh`);
  const failed = [];
  for (const run of RUNS) {
    const token = run.token(a);
    const args = [
      '--config-file', config,
      'run', `${a.base}/v1/openapi.json`,
      '--max-time', String(run.seconds),
      '--no-color',
      ...(token ? ['-H', `Authorization: Bearer ${token}`] : []),
      ...(run.only ?? []).flatMap((path) => ['--include-path', path]),
    ];
    const started = Date.now();
    const { code, output } = await runSchemathesis(args, {
      SCHEMATHESIS_HOOKS: hooks,
      RANGEID_FUZZ_BASE: a.base,
      RANGEID_FUZZ_ADMIN: admin,
      RANGEID_FUZZ_NAMESPACES: NAMESPACES.map((n) => n.namespace).join(','),
      NO_COLOR: '1',
    });
    const cases = output.match(/(\d+) generated/)?.[1] ?? '?';
    t.diagnostic(`with ${run.name}: exit ${code}, ${cases} cases in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    if (code !== 0) failed.push(`---- Schemathesis with ${run.name} (exit ${code}) ----\n${report(output)}`);
  }
  assert.equal(failed.length, 0, `Schemathesis found problems:\n${failed.join('\n\n')}`);
});
