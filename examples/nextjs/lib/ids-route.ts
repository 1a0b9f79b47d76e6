// What both route handlers do: GET ?n=100 answers {ids: [...100 decimal
// strings], runtime, incarnation}. The generator's settings come from the
// server's environment (see README.md); they are read as literal
// `process.env.NAME`, which the edge runtime needs to see at build time.
import { after } from "next/server";
import { RangeIdError } from "rangeid";
import { sharedGenerator, takeIds } from "./rangeid";

const MAX = 1000;

export async function idsResponse(request: Request, runtime: "nodejs" | "edge"): Promise<Response> {
  const n = Number(new URL(request.url).searchParams.get("n") ?? "100");
  if (!Number.isInteger(n) || n < 1 || n > MAX) {
    return Response.json({ error: { code: "invalid_request", message: `n must be an integer from 1 to ${MAX}` } }, { status: 400 });
  }
  const url = process.env.RANGEID_URL;
  const token = process.env.RANGEID_TOKEN;
  const namespace = process.env.RANGEID_NAMESPACE;
  if (!url || !token || !namespace) {
    return Response.json({ error: { code: "invalid_config", message: "set RANGEID_URL, RANGEID_TOKEN and RANGEID_NAMESPACE" } }, { status: 500 });
  }
  try {
    const generator = await sharedGenerator({ url, token, namespace });
    const ids = await takeIds(generator, n);
    // A range request this call started must outlive the response on the
    // edge runtime (Vercel's waitUntil); harmless on Node.
    after(generator.settled());
    return Response.json({ ids, runtime, incarnation: generator.incarnation });
  } catch (e) {
    if (!(e instanceof RangeIdError)) throw e;
    switch (e.code) {
      case "unavailable": // the authority is slow or unreachable: try again later
      case "frozen": {
        const seconds = Math.ceil(((e.code === "unavailable" && e.retryAfterMs) || 1000) / 1000);
        return Response.json({ error: { code: e.code, message: e.message } }, { status: 503, headers: { "retry-after": String(seconds) } });
      }
      default: // final: configuration, credentials, an exhausted namespace
        return Response.json({ error: { code: e.code, message: e.message } }, { status: 500 });
    }
  }
}
