// A seeded pseudo-random source (mulberry32), so a chaos run's schedule of
// faults can be named by its seed. Timing still varies between runs; the
// seed fixes every random choice, not the interleaving.

/** A random source seeded with a 32-bit integer; `fork(label)` derives an
 * independent one, so one component's draws do not shift another's. */
export function rng(seed) {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const r = {
    seed,
    /** A float in [0, 1). */
    next,
    /** True with probability `p`. */
    chance: (p) => next() < p,
    /** An integer in [lo, hi]. */
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    /** A float in [lo, hi). */
    between: (lo, hi) => lo + next() * (hi - lo),
    /** One element of `items`. */
    pick: (items) => items[Math.floor(next() * items.length)],
    /** One key of `weights` ({key: weight}), drawn by weight. */
    weighted: (weights) => {
      const entries = Object.entries(weights).filter(([, w]) => w > 0);
      let x = next() * entries.reduce((sum, [, w]) => sum + w, 0);
      for (const [k, w] of entries) {
        x -= w;
        if (x < 0) return k;
      }
      return entries[entries.length - 1][0];
    },
    /** An independent source named by `label`. */
    fork: (label) => {
      let h = seed >>> 0;
      for (const c of String(label)) h = Math.imul(h ^ c.charCodeAt(0), 0x9e3779b1) >>> 0;
      return rng(h ^ 0x85ebca6b);
    },
  };
  return r;
}
