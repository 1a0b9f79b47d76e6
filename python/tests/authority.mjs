// The local authority for the Python tests (python/tests/conftest.py): the
// production Worker on bare workerd, through tests/authority/harness.mjs as
// the Rust client's test runs it, behind a forwarder on a fixed port (the
// authority's own port changes across a restart, as a service reaches an
// authority behind a stable address).
//
// Prints one JSON line: {"url", "kid", "key"} (the signing key, so the
// tests mint their own tokens). Then reads commands, one a line, and
// answers each with a JSON line:
//   restart   stops the authority, waits a second, starts it again
// Stops the authority and exits when its stdin closes (the tests ended, or
// died).
import { connect, createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { Authority } from '../../tests/authority/harness.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const a = new Authority({ runtime: 'workerd' });
let stopping = false;

async function stop(code) {
  if (stopping) return;
  stopping = true;
  forwarder.close();
  await a.stop();
  a.cleanup();
  process.exit(code);
}

const forwarder = createServer((client) => {
  const upstream = connect(a.port, '127.0.0.1');
  client.pipe(upstream).pipe(client);
  const end = () => { client.destroy(); upstream.destroy(); };
  client.on('error', end);
  upstream.on('error', end);
});

try {
  await a.start();
  await new Promise((r) => forwarder.listen(0, '127.0.0.1', r));
} catch (e) {
  process.stderr.write(`the authority did not start: ${e.stack ?? e}\n`);
  await stop(1);
}
const say = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
say({ url: `http://127.0.0.1:${forwarder.address().port}`, kid: a.kid, key: a.key });

for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => stop(0));
const lines = createInterface({ input: process.stdin });
lines.on('close', () => stop(0));
for await (const line of lines) {
  if (line.trim() === 'restart') {
    await a.stop();
    await sleep(1000);
    await a.start();
    say({ restarted: true });
  } else if (line.trim() !== '') {
    say({ error: `unknown command ${line}` });
  }
}
