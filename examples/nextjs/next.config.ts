import type { NextConfig } from "next";

// create-next-app 16 writes `cacheComponents: true` (with
// `partialPrefetching`), which refuses every `runtime` segment config; this
// example has an edge route handler, so it is off. rangeid itself needs no
// setting here: not `serverExternalPackages`, not a webpack rule.
const nextConfig: NextConfig = {};

export default nextConfig;
