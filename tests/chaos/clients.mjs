// The chaos run's callers: a child process started inside a scratch project
// that installed the packed `rangeid` tarball, so `import "rangeid"` is
// what a user gets. Each caller slot runs one generator at a time through
// the faulty proxy, asks for IDs in its own rhythm, and records every ID it
// is given, as runs of consecutive IDs per generator incarnation. Now and
// then a caller closes its generator and starts a new one (a new
// incarnation), or pauses holding its range while the others go on.
//
// Messages from the parent: {type: "start", ...config}, {type: "signing",
// kid, key} (a key rotation: mint with this key from now on), {type:
// "heal"} (faults are over: every caller must get an ID again soon), {type:
// "stop"}. To the parent: {type: "progress", ...} every 2 s, then {type:
// "report", ...} once stopped.
import { createHmac } from "node:crypto";
import { createGenerator, RangeIdError } from "rangeid";
import { rng } from "./rng.mjs";

const now = () => performance.now();
const RETRYABLE = new Set(["unavailable", "frozen"]);

let config;
let signing;
let stopping = false;
let healAt = null;
const firstAfterHeal = new Map();
const pauses = new Set();
const outstanding = new Set();
const finished = [];
const live = new Map();
const counts = {
  calls: 0, ids: 0, creates: 0, closes: 0, pauses: 0, rejections: {}, finals: {}, finalExamples: [],
  malformed: 0, contract: 0, contractExamples: [], tokenMints: 0, tokenRefreshes: 0,
};
const waits = { longestResolvedMs: 0, longestRejectedMs: 0, longestStarvedMs: 0, longestStarved: [], hangs: [] };
/** What each caller is doing, for the report on callers that hung. */
const doing = new Map();
/** Seconds since the parent's start (its clock, for the event log). */
const at = () => Number(((Date.now() - config.startedAt) / 1000).toFixed(3));

/** Every ID one generator incarnation gave its caller, as runs. */
class Record {
  constructor(ns, slot, incarnation) {
    Object.assign(this, { ns, slot, incarnation, runs: [], start: null, end: null, issued: 0 });
  }

  add(id) {
    if (typeof id !== "string" || !/^[1-9][0-9]{0,19}$/.test(id)) {
      counts.malformed += 1;
      return;
    }
    // A BigInt always: an ID never passes through a JS number.
    const v = BigInt(id);
    if (this.end !== null && v === this.end) {
      this.end = v + 1n;
    } else {
      this.#flush();
      this.start = v;
      this.end = v + 1n;
    }
    this.issued += 1;
    counts.ids += 1;
  }

  #flush() {
    if (this.start !== null) this.runs.push([String(this.start), String(this.end)]);
    this.start = this.end = null;
  }

  done(stats, abandoned) {
    this.#flush();
    const { ns, slot, incarnation, runs, issued } = this;
    return { ns, slot, incarnation, runs, issued, stats, abandoned };
  }
}

function mint({ kid, key }, claims) {
  const b64 = (v) => Buffer.from(JSON.stringify(v)).toString("base64url");
  const head = `${b64({ alg: "HS256", kid, typ: "JWT" })}.${b64(claims)}`;
  return `${head}.${createHmac("sha256", Buffer.from(key, "utf8")).update(head).digest("base64url")}`;
}

/** A token function as a service might write one: short-lived tokens from
 * the current signing key, cached. A lazy cache keeps its token until the
 * authority refuses it (the generator then asks with `refresh: true`); an
 * eager one renews a second before expiry. Neither notices a rotation. */
function tokenFunction(slot, ns, r) {
  const lazy = r.chance(0.5);
  let cached = null;
  return async ({ refresh }) => {
    if (refresh) counts.tokenRefreshes += 1;
    const nowS = Date.now() / 1000;
    if (!refresh && cached && (lazy || cached.exp - nowS > 1)) return cached.token;
    const exp = Math.floor(nowS) + r.int(config.tokenTtl[0], config.tokenTtl[1]);
    cached = { exp, token: mint(signing, { sub: `chaos-${slot}`, role: "generator", ns: [ns], exp }) };
    counts.tokenMints += 1;
    return cached.token;
  };
}

/** Sleeps `ms`; a pause (`pause: true`) ends early on heal or stop. */
function sleep(ms, { pause = false } = {}) {
  return new Promise((resolve) => {
    const p = { resolve, timer: setTimeout(() => { pauses.delete(p); resolve(); }, ms) };
    if (pause) pauses.add(p);
  });
}

function endPauses() {
  for (const p of pauses) {
    clearTimeout(p.timer);
    p.resolve();
  }
  pauses.clear();
}

function track(slot, what, promise) {
  const o = { slot, what, t0: now(), reported: false };
  outstanding.add(o);
  return promise.finally(() => outstanding.delete(o));
}

/** Is `ids` exactly `n` distinct IDs, as `nextIds(n)` promises (across
 * ranges when it must, so not always consecutive)? */
function exactBatch(ids, n) {
  return Array.isArray(ids) && ids.length === n && new Set(ids).size === n;
}

async function caller(slot, ns) {
  const r = rng(config.seed).fork(`caller-${slot}`);
  const profile = r.weighted({ hot: 1, steady: 6, slow: 3 });
  const token = tokenFunction(slot, ns, r.fork("token"));
  const options = {
    url: config.url, namespace: ns, token,
    maxOutstanding: r.int(1, 4),
    ...(r.chance(0.25) ? { rangeSize: r.pick([100, 500, 2000]) } : {}),
    ...(r.chance(0.25) ? { requestTimeoutMs: 1000 } : {}),
  };
  const state = { slot, ns, profile, what: "starting", since: at(), lastError: null, gen: null };
  let hungrySince = null;
  const ask = () => {
    if (hungrySince === null) hungrySince = now();
  };
  const got = () => {
    const w = now() - hungrySince;
    if (w > waits.longestStarvedMs) waits.longestStarvedMs = w;
    if (w > 5000) {
      waits.longestStarved.push({
        slot, ns, waitedMs: Math.round(w), until: at(), options: { ...options, token: undefined, url: undefined, namespace: undefined },
        lastError: state.lastError, stats: state.gen?.stats(),
      });
      waits.longestStarved.sort((a, b) => b.waitedMs - a.waitedMs).splice(5);
    }
    hungrySince = null;
    if (healAt !== null && !firstAfterHeal.has(slot)) firstAfterHeal.set(slot, now() - healAt);
  };
  const failed = (e, started) => {
    const code = e instanceof RangeIdError ? e.code : "not_a_RangeIdError";
    counts.rejections[code] = (counts.rejections[code] ?? 0) + 1;
    doing.get(slot).lastError = { code, message: String(e?.message ?? e).slice(0, 300), at: at() };
    waits.longestRejectedMs = Math.max(waits.longestRejectedMs, now() - started);
    if (RETRYABLE.has(code) || (stopping && code === "closed")) return false;
    counts.finals[code] = (counts.finals[code] ?? 0) + 1;
    if (counts.finalExamples.length < 10) counts.finalExamples.push({ slot, code, message: String(e?.message ?? e) });
    return true;
  };

  doing.set(slot, state);
  const now_ = (what) => {
    state.what = what;
    state.since = at();
  };
  while (!stopping) {
    ask();
    now_("createGenerator");
    state.gen = null;
    let gen;
    const started = now();
    try {
      counts.creates += 1;
      gen = await track(slot, "createGenerator", createGenerator(options));
    } catch (e) {
      failed(e, started);
      await sleep(r.int(50, 500));
      continue;
    }
    const rec = new Record(ns, slot, gen.incarnation);
    live.set(slot, { gen, rec });
    state.gen = gen;
    const lifeEnd = now() + r.between(15_000, 180_000);
    let dead = false;
    // The most IDs this generator gives in one nextIds call (its largest
    // range and the namespace's maxCount), once it said so.
    let batchLimit = Infinity;
    for (let op = 0; !stopping && !dead && now() < lifeEnd; op++) {
      ask();
      const t = now();
      const kind = r.weighted({ one: 6, batch: 3, burst: 1 });
      now_(kind);
      counts.calls += 1;
      try {
        if (kind === "batch") {
          const n = Math.min(r.int(1, profile === "hot" ? 1000 : 100), batchLimit);
          const ids = await track(slot, "nextIds", gen.nextIds(n));
          if (!exactBatch(ids, n)) {
            counts.contract += 1;
            if (counts.contractExamples.length < 5) counts.contractExamples.push({ slot, n, ids: ids.slice(0, 5) });
          }
          for (const id of ids) rec.add(id);
        } else if (kind === "burst") {
          let any = false;
          for (let k = r.int(1, 200); k > 0; k--) {
            const id = gen.tryNextId();
            if (id === undefined) break;
            rec.add(id);
            any = true;
          }
          if (!any) rec.add(await track(slot, "nextId", gen.nextId()));
        } else {
          rec.add(await track(slot, "nextId", gen.nextId()));
        }
        waits.longestResolvedMs = Math.max(waits.longestResolvedMs, now() - t);
        got();
      } catch (e) {
        if (e instanceof RangeIdError && e.code === "invalid_request" && Number.isInteger(e.limit) && e.limit > 0) {
          // A batch larger than this generator takes: the caller's own
          // mistake, which the README says to meet with a smaller batch.
          counts.rejections.batch_too_large = (counts.rejections.batch_too_large ?? 0) + 1;
          batchLimit = e.limit;
          continue;
        }
        dead = failed(e, t);
        now_("backoff");
        if (!dead) await sleep(r.int(20, 300));
        continue;
      }
      now_("pacing");
      if (profile === "slow") await sleep(r.int(20, 1000));
      else if (profile === "steady") await sleep(r.int(1, 25));
      else await sleep(r.int(1, 3));
      if (r.chance(profile === "slow" ? 0.01 : 0.0005) && !stopping && healAt === null) {
        // Paused with a range in hand while the others go on.
        counts.pauses += 1;
        now_("paused");
        await sleep(r.int(2000, 20000), { pause: true });
      }
    }
    const stats = gen.stats();
    const abandoned = gen.close();
    counts.closes += 1;
    live.delete(slot);
    finished.push(rec.done(stats, abandoned));
  }
}

/** A caller's state, with its generator's stats. */
function describe(slot) {
  const { gen, ...rest } = doing.get(slot) ?? { slot };
  let stats;
  try {
    stats = gen?.stats();
  } catch (e) {
    stats = String(e);
  }
  return { ...rest, incarnation: gen?.incarnation, stats };
}

function watchdog() {
  const t = now();
  for (const o of outstanding) {
    if (!o.reported && t - o.t0 > config.hangMs) {
      o.reported = true;
      waits.hangs.push({ slot: o.slot, what: o.what, waitedMs: Math.round(t - o.t0) });
    }
  }
}

function progress() {
  let oldest = 0;
  for (const o of outstanding) oldest = Math.max(oldest, now() - o.t0);
  return { type: "progress", ids: counts.ids, calls: counts.calls, rejections: counts.rejections, finals: counts.finals, oldestCallMs: Math.round(oldest) };
}

async function run() {
  const callers = config.slots.map(({ slot, ns }) => caller(slot, ns));
  const dog = setInterval(watchdog, 500);
  const ticker = setInterval(() => process.send(progress()), 2000);
  await new Promise((resolve) => process.on("message", (m) => m.type === "stop" && resolve()));
  const missing = config.slots.filter(({ slot }) => !firstAfterHeal.has(slot)).map(({ slot }) => describe(slot));
  stopping = true;
  endPauses();
  await Promise.all(callers);
  clearInterval(dog);
  clearInterval(ticker);
  watchdog();
  process.send({
    type: "report", counts, waits, incarnations: finished,
    afterHeal: {
      healed: healAt !== null, callers: config.slots.length, got: firstAfterHeal.size, slowestMs: Math.max(0, ...firstAfterHeal.values()),
      missing,
    },
  }, () => process.exit(0));
}

process.on("message", (m) => {
  if (m.type === "start") {
    config = m;
    signing = { kid: m.kid, key: m.key };
    run().catch((e) => {
      process.send({ type: "crash", error: String(e?.stack ?? e) }, () => process.exit(1));
    });
  } else if (m.type === "signing") {
    signing = { kid: m.kid, key: m.key };
  } else if (m.type === "heal") {
    healAt = now();
    endPauses();
  }
});
