// GET /ids?n=5 -> {"ids":["1001","1002",...],"incarnation":"...","stats":{...}}
//
// One generator per isolate, created on first use. Its range requests go
// through the AUTHORITY Service Binding; the URL's host is ignored there.
import { createGenerator, RangeIdError } from "rangeid";

let generator;

function getGenerator(env) {
  generator ??= createGenerator({
    url: "https://authority.internal",
    token: env.GENERATOR_TOKEN,
    namespace: env.NAMESPACE,
    fetch: (url, init) => env.AUTHORITY.fetch(url, init),
  }).catch((e) => {
    generator = undefined;
    throw e;
  });
  return generator;
}

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    if (url.pathname !== "/ids") return Response.json({ error: { code: "not_found", message: "try GET /ids?n=5" } }, { status: 404 });
    const n = Number(url.searchParams.get("n") ?? "1");
    if (!Number.isSafeInteger(n) || n < 1 || n > 1000) {
      return Response.json({ error: { code: "invalid_request", message: "n must be 1 to 1000" } }, { status: 400 });
    }
    let ids;
    try {
      ids = await getGenerator(env);
      const out = await ids.nextIds(n);
      // Let a prefetch this request started finish after the response.
      ctx.waitUntil(ids.settled());
      return Response.json({ ids: out, incarnation: ids.incarnation, stats: ids.stats() });
    } catch (e) {
      const code = e instanceof RangeIdError ? e.code : "unavailable";
      const stats = ids?.stats();
      return Response.json({ error: { code, message: String(e.message ?? e) }, stats }, { status: code === "unavailable" ? 503 : 500 });
    }
  },
};
