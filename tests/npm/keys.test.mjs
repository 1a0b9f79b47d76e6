// The CLI's key-map reader (npm/bin/keys.mjs), on its own: what the
// authority refuses, it refuses, before anything is minted or deployed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { KeysError, parseKeyMap } from "../../npm/bin/keys.mjs";

const secret = (c) => c.repeat(32);
const jwk = (x) => ({ kty: "OKP", crv: "Ed25519", x });

test("a key map that repeats a kid is refused, however the repeat is written", () => {
  for (const text of [
    `{"k":"${secret("a")}","k":"${secret("b")}"}`,
    // The same kid, spelled with an escape: JSON.parse would keep one.
    `{"k":"${secret("a")}","\\u006b":"${secret("b")}"}`,
    ` {\n "a": "${secret("c")}",\n "k" : "${secret("a")}" ,\n "k" : ${JSON.stringify(jwk("A".repeat(43)))}\n}\n`,
  ]) {
    assert.throws(() => parseKeyMap(text), (e) => e instanceof KeysError && /kid "k" is given twice/.test(e.message), text);
  }
});

test("keys inside a value do not count as kids; entries keep the order written, integer-like kids too", () => {
  const map = `{"9":"${secret("a")}","2026-06":{"kty":"oct","k":"x","kid":"k"},"1":"${secret("b")}"}`;
  // A JWK of an unsupported kind is refused for what it is, not as a repeat.
  assert.throws(() => parseKeyMap(map), (e) => e instanceof KeysError && !/twice/.test(e.message));
  const ok = parseKeyMap(`{"9":"${secret("a")}","k":"${secret('\\"')}","1":"${secret("b")}"}`);
  assert.deepEqual(ok.map((e) => e.kid), ["9", "k", "1"]);
});

test("text that is not one JSON object is refused", () => {
  for (const text of ["", "[]", "null", '"k"', "{", `{"k":"${secret("a")}"} x`, `{"k":"${secret("a")}",}`, "{}"]) {
    assert.throws(() => parseKeyMap(text), KeysError, JSON.stringify(text));
  }
});
