// The authority's objects on disk, one object at a time: which SQLite files
// belong to which namespace's object (`namespace:NAME`), its witness
// (`witness:NAME`) or the registry (`registry`); copies of them and putting
// a copy back while the runtime is stopped; and the marks the restore
// fence keeps, read from the files.
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { DatabaseSync } from "node:sqlite";

/** The Durable Object class behind each kind of key. */
export const CLASSES = { namespace: "Namespace", witness: "Fence", registry: "Registry" };

export class ObjectFiles {
  /** `authority` is a tests/authority/harness.mjs Authority on workerd;
   * copies go under `copiesDir`. */
  constructor(authority, copiesDir) {
    this.authority = authority;
    this.copiesDir = copiesDir;
    /** Object id (the files' common prefix) by key. */
    this.ids = new Map();
    /** Copies by slot name: {dir, at}. */
    this.copies = new Map();
  }

  #dir(kind) {
    return this.authority.storageDir(CLASSES[kind]);
  }

  /** The ids of the objects of one kind now on disk. */
  idsOnDisk(kind) {
    const dir = this.#dir(kind);
    mkdirSync(dir, { recursive: true });
    return new Set(readdirSync(dir).filter((f) => !f.startsWith("metadata.")).map((f) => f.split(".")[0]));
  }

  /** Learns that object `key` has id `id`. */
  name(key, id) {
    this.ids.set(key, id);
  }

  keys() {
    return [...this.ids.keys()];
  }

  /** The SQLite files (with -wal and -shm) of object `key`. */
  files(key) {
    const dir = this.#dir(key.split(":")[0]);
    const id = this.ids.get(key);
    return readdirSync(dir).filter((f) => f.split(".")[0] === id).map((f) => join(dir, f));
  }

  /** Copies object `key`'s files into slot `slot` (stopped runtime only);
   * `at` is when, for the log. */
  copy(key, at, slot = key) {
    const dir = join(this.copiesDir, slot.replace(":", "-"));
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    for (const f of this.files(key)) copyFileSync(f, join(dir, basename(f)));
    this.copies.set(slot, { dir, at });
  }

  /** Replaces object `key`'s files with the copy in `slot` (stopped
   * runtime only); returns the copy. */
  putBack(key, slot = key) {
    const copy = this.copies.get(slot);
    if (!copy) throw new Error(`no copy of ${key} in ${slot}`);
    const dir = this.#dir(key.split(":")[0]);
    for (const f of this.files(key)) rmSync(f);
    for (const f of readdirSync(copy.dir)) copyFileSync(join(copy.dir, f), join(dir, f));
    return copy;
  }

  /** From the stopped runtime's files: the namespace object's `next` and
   * recorded fence, and its witness's mark (BigInts). Reads copies, so the
   * files themselves are never opened. */
  marks(ns) {
    const tmp = mkdtempSync(join(tmpdir(), "rangeid-chaos-marks-"));
    try {
      const row = (key, sql) => {
        for (const f of this.files(key)) copyFileSync(f, join(tmp, basename(f)));
        const db = new DatabaseSync(join(tmp, `${this.ids.get(key)}.sqlite`));
        try {
          return db.prepare(sql).get();
        } finally {
          db.close();
        }
      };
      const n = row(`namespace:${ns}`, "SELECT next, fence FROM namespace");
      const w = row(`witness:${ns}`, "SELECT mark FROM fence");
      return { next: BigInt(n.next), fence: BigInt(n.fence ?? 0), witness: BigInt(w.mark) };
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
}
