// The chaos checker on hand-made histories: each failure it exists to
// catch is caught, and a clean history passes.
import { test } from "node:test";
import assert from "node:assert/strict";
import { check, sharedSize, size, union } from "./checker.mjs";

const g = (incarnation, start, end, ns = "a") => ({ ns, incarnation, start: String(start), end: String(end) });

test("union, size and sharedSize on touching, overlapping and past-2^64 ranges", () => {
  assert.deepEqual(union([["5", "10"], ["1", "3"], ["3", "4"], ["8", "12"]]), [[1n, 4n], [5n, 12n]]);
  const big = 2n ** 64n;
  assert.equal(size(union([[big - 10n, big], [big - 5n, big]])), 10n);
  assert.equal(sharedSize(union([[1, 10], [20, 30]]), union([[5, 25]])), 10n);
});

test("a clean history passes, with its gap counted", () => {
  const r = check({
    issued: [
      { ns: "a", incarnation: "A", runs: [["1", "11"], ["21", "26"]] },
      // One run across two grants of the same incarnation.
      { ns: "a", incarnation: "B", runs: [["11", "21"], ["31", "41"]] },
    ],
    ledger: [g("A", 1, 11), g("A", 21, 31), g("B", 11, 16), g("B", 16, 21), g("B", 31, 41), g("A", 1, 11)],
    wire: [g("A", 1, 11), g("B", 11, 16)],
  });
  assert.equal(r.ok, true, JSON.stringify(r.examples));
  assert.equal(r.total.issued, 35n);
  assert.equal(r.total.granted, 40n);
  assert.equal(r.total.gap, 5n);
});

test("the same ID given to two incarnations is a duplicate", () => {
  const r = check({
    issued: [
      { ns: "a", incarnation: "A", runs: [["1", "11"]] },
      { ns: "a", incarnation: "B", runs: [["9", "12"]] },
    ],
    ledger: [g("A", 1, 11), g("B", 9, 12)],
  });
  assert.equal(r.ok, false);
  assert.equal(r.total.duplicates, 2n);
  assert.equal(r.total.ledgerOverlap, 2n);
  assert.deepEqual(r.examples.duplicates[0], { ns: "a", start: "9", end: "11", owners: ["A", "B"] });
});

test("one incarnation giving an ID twice is a duplicate; the same IDs in two namespaces are not", () => {
  const r = check({
    issued: [{ ns: "a", incarnation: "A", runs: [["1", "5"], ["4", "6"]] }, { ns: "b", incarnation: "C", runs: [["1", "5"]] }],
    ledger: [g("A", 1, 10), g("C", 1, 5, "b")],
  });
  assert.equal(r.total.duplicates, 1n);
  assert.equal(r.per.b.duplicates, 0n);
});

test("IDs outside every range granted to their incarnation are unaccounted", () => {
  const r = check({
    issued: [{ ns: "a", incarnation: "A", runs: [["1", "11"]] }],
    ledger: [g("A", 1, 6), g("B", 6, 11)],
  });
  assert.equal(r.ok, false);
  assert.equal(r.total.unaccounted, 5n);
  assert.equal(r.total.duplicates, 0n);
});

test("an acknowledged grant the ledger never showed is missing", () => {
  const r = check({ issued: [], ledger: [g("A", 1, 6)], wire: [g("A", 1, 6), g("A", 6, 9)] });
  assert.equal(r.ok, false);
  assert.equal(r.total.wireMissing, 1);
});

test("IDs past 2^53 and up to 2^64 - 1 are compared exactly", () => {
  const top = 2n ** 64n;
  const r = check({
    issued: [
      { ns: "a", incarnation: "A", runs: [[String(2n ** 53n - 1n), String(2n ** 53n + 1n)]] },
      { ns: "a", incarnation: "B", runs: [[String(2n ** 53n), String(2n ** 53n + 2n)]] },
      { ns: "a", incarnation: "C", runs: [[String(top - 2n), String(top)]] },
    ],
    ledger: [g("A", 2n ** 53n - 1n, 2n ** 53n + 1n), g("B", 2n ** 53n, 2n ** 53n + 2n), g("C", top - 2n, top)],
  });
  assert.equal(r.total.duplicates, 1n);
  assert.equal(r.examples.duplicates[0].start, String(2n ** 53n));
});
