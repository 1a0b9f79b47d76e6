// Writes docs/admin-overview.png (the README's picture of the admin page):
// starts a throw-away local authority, seeds a few namespaces, and takes
// the screenshot in headless Chromium. `--out PATH` writes elsewhere.
// Needs edge-authority/build, www/dist and tests/node_modules (npm ci in tests/).
// Run from anywhere: `node www/scripts/screenshot.mjs [--out PATH]`.
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { screenshots, seedDemo, startStack } from "../../tests/www/harness.mjs";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const { values } = parseArgs({ options: { out: { type: "string", default: join(repo, "docs", "admin-overview.png") } } });

const stack = await startStack();
const scratch = mkdtempSync(join(tmpdir(), "rangeid-screenshot-"));
try {
  await seedDemo(stack);
  const [overview] = await screenshots(stack, scratch);
  copyFileSync(overview, resolve(values.out));
  console.log(`wrote ${resolve(values.out)}`);
} finally {
  await stack.stop();
  rmSync(scratch, { recursive: true, force: true });
}
