// A fake authority for driver tests: the /v1/ranges contract in plain JS
// (BigInt arithmetic, replays by (incarnation, requestId)), as a `fetch`,
// with a ledger of every range it granted to check issued IDs against.

export function fakeAuthority({ first = 1n, max = 2n ** 53n - 1n, maxCount = 10_000_000, tokens = ["t"] } = {}) {
  const state = {
    next: BigInt(first), max: BigInt(max), grants: new Map(), calls: 0, urls: [], frozen: false,
    tokens: new Set(tokens), ledger: [],
  };
  const json = (status, body, headers = {}) =>
    new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
  const error = (status, code, extra = {}) => json(status, { error: { code, message: `fake: ${code}`, ...extra } });
  async function fetch(url, init) {
    state.calls++;
    state.urls.push(String(url));
    const where = new URL(url);
    if (!where.pathname.endsWith("/v1/ranges") || init.method !== "POST") return error(404, "not_found");
    // As the authority: `region` is the one query parameter taken.
    if ([...where.searchParams.keys()].some((k) => k !== "region")) return error(400, "invalid_request");
    const auth = init.headers.authorization ?? "";
    if (!state.tokens.has(auth.replace(/^Bearer /, ""))) return error(401, "unauthenticated");
    const req = JSON.parse(init.body);
    if (req.namespace !== "orders") return error(404, "namespace_not_found");
    const key = `${req.incarnation}/${req.requestId}`;
    const stored = state.grants.get(key);
    if (stored) {
      if (stored.count !== req.count) return error(409, "request_conflict");
      return json(200, { ...stored, replayed: true });
    }
    if (req.count < 1 || req.count > maxCount) return error(400, "invalid_request");
    if (state.frozen) return error(423, "namespace_frozen");
    const remaining = state.max + 1n - state.next;
    if (BigInt(req.count) > remaining) return error(409, "namespace_exhausted", { remaining: remaining.toString() });
    const start = state.next;
    const end = start + BigInt(req.count);
    state.next = end;
    state.ledger.push([start, end, req.incarnation]);
    const grant = {
      namespace: req.namespace, incarnation: req.incarnation, requestId: req.requestId,
      start: start.toString(), end: end.toString(), count: req.count,
    };
    state.grants.set(key, grant);
    return json(200, { ...grant, replayed: false });
  }
  /** IDs reserved from the namespace, in all. */
  const reserved = () => state.ledger.reduce((sum, [s, e]) => sum + (e - s), 0n);
  /** Throws unless every ID is distinct and inside a range granted to `incarnation`. */
  function check(ids, incarnation) {
    const seen = new Set(ids);
    if (seen.size !== ids.length) throw new Error(`${ids.length - seen.size} duplicate IDs`);
    for (const id of ids) {
      const v = BigInt(id);
      const owner = state.ledger.find(([s, e]) => v >= s && v < e);
      if (!owner) throw new Error(`ID ${id} was never granted`);
      if (incarnation !== undefined && owner[2] !== incarnation) throw new Error(`ID ${id} was granted to another incarnation`);
    }
  }
  return { fetch, state, reserved, check };
}
