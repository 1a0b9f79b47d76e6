// A faulty HTTP proxy between the generators and the authority. For each
// request it draws at most one fault, by the current rates:
//
// - drop-request: never forwarded; the connection is held open, unanswered,
//   until the client gives up (closed after 20 s at the latest);
// - drop-reply: forwarded (so the grant is committed), the reply withheld
//   the same way;
// - reset-before / reset-after: the connection reset before forwarding, or
//   after the authority answered;
// - truncate: the reply's status and headers, then half its body, then a
//   reset (only 2xx and 5xx replies: a generator treats a non-rangeid 4xx
//   as final today, issue 16 section 7);
// - bad-gateway: a 502 HTML page, nothing forwarded;
// - delay: the reply held 0 to 1.5 s, one time in five 2 to 5 s (past the
//   client's 2 s request timeout: the late first reply after a retry);
// - duplicate: the request sent to the authority twice, the second up to
//   300 ms later; the client gets either reply;
// - reorder: replies held in a pool and released newest first.
//
// The gate holds new requests (before forwarding) while the nemesis reads
// the ledger and swaps an object's files; `idle()` waits until nothing is
// in flight to the authority. Every grant the authority acknowledges (a
// 200 from POST /v1/ranges) is handed to `onGrant`.
import http from "node:http";

export const FAULTS = [
  "drop-request", "drop-reply", "reset-before", "reset-after", "truncate",
  "bad-gateway", "delay", "duplicate", "reorder",
];

const HOLD_MS = 20_000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export class FaultyProxy {
  /**
   * `upstream()` gives the authority's current base URL (it changes at every
   * restart); `rng` draws faults; `onGrant(grant)` sees each acknowledged
   * grant; `plant` (tests of the checker only) is `"relabel"`: now and then
   * a client is handed another client's grant relabelled as its own.
   */
  constructor({ upstream, rng, onGrant = () => {}, plant }) {
    this.upstream = upstream;
    this.rng = rng;
    this.onGrant = onGrant;
    this.plant = plant;
    /** Fault probabilities per request, by kind. */
    this.rates = {};
    this.counts = Object.fromEntries(FAULTS.map((f) => [f, 0]));
    this.counts.planted = 0;
    this.requests = 0;
    /** The authority's answers by HTTP status. */
    this.statuses = {};
    /** The authority's answer times (ms), one per forwarded request. */
    this.latencies = [];
    this.unreachable = 0;
    this.inflight = 0;
    this.#idleWaiters = [];
    this.#gate = null;
    this.#pool = [];
    this.#poolTimer = undefined;
    this.#held = new Set();
    this.#lastGrant = null;
    this.agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  }

  #idleWaiters;
  #gate;
  #pool;
  #poolTimer;
  #held;
  #lastGrant;

  /** Listens on a free loopback port; returns the proxy's base URL. */
  async start() {
    this.server = http.createServer((req, res) => {
      this.#handle(req, res).catch(() => res.destroy());
    });
    this.server.keepAliveTimeout = 30_000;
    await new Promise((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.base = `http://127.0.0.1:${this.server.address().port}`;
    return this.base;
  }

  async stop() {
    this.#flushPool();
    for (const res of this.#held) res.destroy();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
    this.agent.destroy();
  }

  /** Holds new requests until `open()`. */
  close() {
    if (!this.#gate) {
      let open;
      const p = new Promise((r) => (open = r));
      this.#gate = { p, open };
    }
  }

  open() {
    const g = this.#gate;
    this.#gate = null;
    g?.open();
  }

  /** Resolves true once nothing is in flight to the authority, false
   * after `timeoutMs`. */
  idle(timeoutMs) {
    if (this.inflight === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const w = { resolve, timer: setTimeout(() => {
        this.#idleWaiters = this.#idleWaiters.filter((x) => x !== w);
        resolve(false);
      }, timeoutMs) };
      this.#idleWaiters.push(w);
    });
  }

  #draw() {
    for (const f of FAULTS) {
      if (this.rates[f] && this.rng.chance(this.rates[f])) return f;
    }
    return null;
  }

  async #handle(req, res) {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks);
    this.requests += 1;
    while (this.#gate) await this.#gate.p;
    if (this.plant === "relabel" && this.#relabel(req, res, body)) return;
    const fault = this.#draw();
    if (fault) this.counts[fault] += 1;
    if (fault === "drop-request") return this.#hold(res);
    if (fault === "reset-before") return res.destroy();
    if (fault === "bad-gateway") return this.#badGateway(res);

    let reply;
    if (fault === "duplicate") {
      const first = this.#forward(req, body);
      // The second send counts as in flight from now: the nemesis must not
      // read the ledger between the two.
      this.inflight += 1;
      await sleep(this.rng.int(0, 300));
      this.inflight -= 1;
      const second = this.#forward(req, body);
      const both = await Promise.all([first, second]);
      reply = both[this.rng.int(0, 1)];
    } else {
      reply = await this.#forward(req, body);
    }
    if (!reply) {
      // The authority is down (a restart): what a load balancer says.
      this.unreachable += 1;
      return this.rng.chance(0.5) ? this.#badGateway(res) : res.destroy();
    }
    switch (fault) {
      case "drop-reply": return this.#hold(res);
      case "reset-after": return res.destroy();
      case "truncate":
        if (reply.status >= 400 && reply.status < 500) {
          this.counts.truncate -= 1;
          break;
        }
        res.writeHead(reply.status, { ...reply.headers, "content-length": String(reply.body.length) });
        res.write(reply.body.subarray(0, Math.floor(reply.body.length / 2)));
        return setTimeout(() => res.destroy(), 10);
      case "delay":
        await sleep(this.rng.chance(0.2) ? this.rng.int(2000, 5000) : this.rng.int(0, 1500));
        break;
      case "reorder":
        return this.#pooled(res, reply);
      default:
        break;
    }
    this.#send(res, reply);
  }

  /** Sends one request to the authority; its reply, or null when the
   * authority could not be reached. */
  async #forward(req, body) {
    const base = this.upstream();
    if (!base) return null;
    this.inflight += 1;
    try {
      const t0 = performance.now();
      return await new Promise((resolve) => {
        const u = new URL(req.url, base);
        const out = http.request(u, {
          method: req.method,
          agent: this.agent,
          headers: {
            ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
            ...(req.headers["content-type"] ? { "content-type": req.headers["content-type"] } : {}),
            "content-length": String(body.length),
          },
          timeout: 30_000,
        }, (r) => {
          const parts = [];
          r.on("data", (c) => parts.push(c));
          r.on("end", () => {
            const reply = { status: r.statusCode, headers: pick(r.headers), body: Buffer.concat(parts) };
            this.statuses[reply.status] = (this.statuses[reply.status] ?? 0) + 1;
            this.latencies.push(performance.now() - t0);
            if (reply.status === 200 && req.method === "POST" && u.pathname === "/v1/ranges") this.#acknowledged(reply);
            resolve(reply);
          });
          r.on("error", () => resolve(null));
        });
        out.on("timeout", () => out.destroy());
        out.on("error", () => resolve(null));
        out.end(body);
      });
    } finally {
      this.inflight -= 1;
      if (this.inflight === 0) {
        for (const w of this.#idleWaiters.splice(0)) {
          clearTimeout(w.timer);
          w.resolve(true);
        }
      }
    }
  }

  #acknowledged(reply) {
    try {
      const g = JSON.parse(reply.body.toString("utf8"));
      this.#lastGrant = g;
      this.onGrant(g);
    } catch {
      // Not JSON: the client will say so; the checker only keeps grants.
    }
  }

  /** The planted bug: hand this request the last grant another
   * incarnation got, relabelled as this request's. */
  #relabel(req, res, body) {
    const g = this.#lastGrant;
    if (!g || req.url !== "/v1/ranges" || !this.rng.chance(0.02)) return false;
    let asked;
    try {
      asked = JSON.parse(body.toString("utf8"));
    } catch {
      return false;
    }
    if (asked.incarnation === g.incarnation || asked.namespace !== g.namespace) return false;
    this.counts.planted += 1;
    const fake = {
      ...g, incarnation: asked.incarnation, requestId: asked.requestId, count: asked.count,
      end: String(BigInt(g.start) + BigInt(asked.count)), replayed: false,
    };
    this.#send(res, { status: 200, headers: { "content-type": "application/json" }, body: Buffer.from(JSON.stringify(fake)) });
    return true;
  }

  #send(res, reply) {
    if (res.destroyed) return;
    res.writeHead(reply.status, { ...reply.headers, "content-length": String(reply.body.length) });
    res.end(reply.body);
  }

  #badGateway(res) {
    const page = "<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>";
    res.writeHead(502, { "content-type": "text/html", "content-length": String(page.length) });
    res.end(page);
  }

  /** Withholds an answer until the client gives up, or HOLD_MS. */
  #hold(res) {
    this.#held.add(res);
    const t = setTimeout(() => res.destroy(), HOLD_MS);
    res.on("close", () => {
      clearTimeout(t);
      this.#held.delete(res);
    });
  }

  #pooled(res, reply) {
    this.#pool.push({ res, reply });
    if (this.#pool.length >= this.rng.int(2, 5)) this.#flushPool();
    else if (!this.#poolTimer) this.#poolTimer = setTimeout(() => this.#flushPool(), this.rng.int(200, 800));
  }

  /** Releases the pooled replies, newest first. */
  #flushPool() {
    clearTimeout(this.#poolTimer);
    this.#poolTimer = undefined;
    for (const { res, reply } of this.#pool.splice(0).reverse()) this.#send(res, reply);
  }
}

/** The reply headers a client reads. */
function pick(headers) {
  const out = {};
  for (const h of ["content-type", "retry-after"]) if (headers[h] !== undefined) out[h] = headers[h];
  return out;
}
