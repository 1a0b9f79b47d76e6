// docs/deploy.md, run as a reader runs it: its shell blocks marked `tested`
// are taken from the guide itself (so the two cannot drift), in order, in
// ONE bash session (a `cd` carries over to the next step, as in a
// terminal), each checked to start in the directory its first line names
// (`# in: DIR`, relative to where the reader started). The project is a
// scratch folder with the packed tarballs (npm install of `rangeid` and
// `rangeid-authority` goes to them), HOME is a scratch folder too, and PATH
// holds only this Node.js, /usr/bin and /bin (no cargo, no rustc, no
// wrangler). Blocks marked `needs-account` are not run; they must name
// their directory too and may not change it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { packBoth, repo } from '../release/pack.mjs';

const GUIDE = join(repo, 'docs', 'deploy.md');
const PATH = [dirname(process.execPath), '/usr/bin', '/bin'].join(':');

/** The guide's fenced blocks: {lang, tag, body (unindented), line}. */
export function blocks(text) {
  const out = [];
  const re = /^( *)```(\w*)[ \t]*([^\n]*)\n([\s\S]*?)^\1```[ \t]*$/gm;
  for (let m; (m = re.exec(text));) {
    const indent = m[1].length;
    const body = m[4].split('\n').map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length))).join('\n');
    out.push({ lang: m[2], tag: m[3].trim(), body, line: text.slice(0, m.index).split('\n').length });
  }
  return out;
}

/** `# in: DIR` on a block's first line. */
const dirOf = (b) => /^# in: (\S+)\n/.exec(b.body)?.[1];

let scratch;
let tarballs;
before(() => {
  tarballs = packBoth();
  scratch = mkdtempSync(join(tmpdir(), 'rangeid-guide-'));
});

/** Every process whose working directory is inside the scratch folder (ours: it is new). */
function ours() {
  const pids = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (readlinkSync(`/proc/${pid}/cwd`).startsWith(scratch)) pids.push(Number(pid));
    } catch { /* gone or not ours */ }
  }
  return pids;
}

after(() => {
  if (!scratch) return;
  for (const pid of ours()) {
    try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
  }
  rmSync(scratch, { recursive: true, force: true });
  rmSync(dirname(tarballs.rangeid.tarball), { recursive: true, force: true });
});

test('the guide is shaped so a test can run it: every shell block tagged, naming its directory; account-only blocks never change it; every topic covered', () => {
  const text = readFileSync(GUIDE, 'utf8');
  const all = blocks(text);
  const shell = all.filter((b) => ['sh', 'bash', 'shell', 'console'].includes(b.lang));
  assert.ok(shell.length >= 10, `${shell.length} shell blocks`);
  for (const b of shell) {
    assert.ok(['tested', 'needs-account'].includes(b.tag), `line ${b.line}: a shell block is tagged tested or needs-account, not ${JSON.stringify(b.tag)}`);
    assert.ok(dirOf(b), `line ${b.line}: a shell block starts with "# in: DIR"`);
    if (b.tag === 'needs-account') {
      assert.doesNotMatch(b.body, /(^|[;&|(]\s*)(cd|pushd|popd)\b/m, `line ${b.line}: a block tests do not run must not change directory`);
    }
  }
  assert.ok(shell.filter((b) => b.tag === 'tested').length >= 6);
  for (const topic of [/wrangler login/, /CLOUDFLARE_API_TOKEN/, /RANGEID_SIGNING_KEYS/, /secret put/, /workers_dev = false/,
    /Access/, /\/admin\//, /```yaml/, /append-only/, /versions deploy/, /point-in-time recovery/i, /restore fence/,
    /locationHint/, /jurisdiction/, /ns export/, /ns import/, /--dry-run/]) {
    assert.match(text, topic, `the guide covers ${topic}`);
  }
});

test('every tested block of docs/deploy.md runs, in order, from the directory it names, offline after the installs', { timeout: 900_000 }, async () => {
  const text = readFileSync(GUIDE, 'utf8');
  const tested = blocks(text).filter((b) => b.tag === 'tested');
  const q = (s) => `'${s.replaceAll("'", "'\\''")}'`;
  // npm install of the two packages goes to their packed tarballs.
  const script = [
    'set -euo pipefail',
    'ROOT="$PWD"',
    `npm() { if [ "\${1:-}" = install ]; then local a out=(); for a in "$@"; do case "$a" in rangeid) out+=(${q(tarballs.rangeid.tarball)});; rangeid-authority) out+=(${q(tarballs['rangeid-authority'].tarball)});; *) out+=("$a");; esac; done; command npm "\${out[@]}"; else command npm "$@"; fi; }`,
    'guide_in() { local want; want="$(cd "$ROOT/$2" 2>/dev/null && pwd -P)" || { echo "guide block at line $1 names $2, which does not exist (the shell is in $PWD)" >&2; exit 97; }; [ "$(pwd -P)" = "$want" ] || { echo "guide block at line $1 names $2 but the previous steps left the shell in $(pwd -P)" >&2; exit 97; }; }',
  ];
  for (const b of tested) {
    script.push(`echo "== guide block at line ${b.line} (in ${dirOf(b)})" >&2`, `guide_in ${b.line} ${q(dirOf(b))}`, b.body);
  }
  const home = join(scratch, 'home');
  const start = join(scratch, 'work');
  for (const d of [home, start]) (await import('node:fs')).mkdirSync(d, { recursive: true });
  const env = {
    PATH, HOME: home,
    CLOUDFLARE_CF_FETCH_ENABLED: 'false', WRANGLER_SEND_METRICS: 'false',
    npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false',
    npm_config_cache: join(process.env.HOME ?? '/root', '.npm'), npm_config_prefer_offline: 'true',
    // The user's own way to the registry goes with them: a proxy, and the
    // certificates of one that inspects TLS (as on this machine).
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => /^(NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR|(HTTPS?|NO)_PROXY|npm_config_cafile)$/i.test(k))),
  };
  const child = spawn('bash', ['-c', script.join('\n')], { cwd: start, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (b) => { log += b; });
  child.stderr.on('data', (b) => { log += b; });
  const code = await new Promise((r) => child.once('close', r));
  console.log(log.split('\n').filter((l) => l.startsWith('== guide block') || /rangeid:|dry run|^\d+$/.test(l)).join('\n'));
  assert.equal(code, 0, `the guide failed (exit ${code}):\n${log.slice(-6000)}`);
  // What the guide started, it stops (workerd may take a moment after its parent).
  const live = () => ours().filter((pid) => { try { return !readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].startsWith('Z'); } catch { return false; } });
  for (let i = 0; i < 100 && live().length; i++) await new Promise((r) => setTimeout(r, 100));
  const comm = (pid) => { try { return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').slice(0, 120); } catch { return '?'; } };
  assert.deepEqual(live().map(comm), [], 'the guide left no process running');
});
