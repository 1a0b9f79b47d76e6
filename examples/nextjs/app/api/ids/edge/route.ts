import { idsResponse } from "@/lib/ids-route";

// The edge runtime (deprecated by Next.js 16, still built and served): the
// package's `edge-light` build, whose engine Next.js compiles at build time.
export const runtime = "edge";

export function GET(request: Request) {
  return idsResponse(request, "edge");
}
