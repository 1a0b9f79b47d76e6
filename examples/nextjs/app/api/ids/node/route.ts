import { idsResponse } from "@/lib/ids-route";

// The Node.js runtime (Next.js's default, written out here).
export const runtime = "nodejs";

export function GET(request: Request) {
  return idsResponse(request, "nodejs");
}
