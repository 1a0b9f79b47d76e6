// Screenshots of the overview and a namespace page, kept as test
// artifacts in $RANGEID_ARTIFACTS (default: the system's temp folder).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { artifactsDir, screenshots, seedDemo, startStack } from "./harness.mjs";

let stack;

before(async () => {
  stack = await startStack();
  await seedDemo(stack);
});

after(async () => {
  await stack?.stop();
});

test("screenshots of the overview and a namespace page are saved", async () => {
  const files = await screenshots(stack, artifactsDir());
  for (const file of files) {
    const png = readFileSync(file);
    assert.equal(png.subarray(1, 4).toString(), "PNG", file);
    assert.ok(png.length > 10_000, `${file} has content`);
    console.log(`# screenshot: ${file}`);
  }
});
