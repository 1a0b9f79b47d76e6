import { connection } from "next/server";
import { BrowserIds } from "./browser-ids";

// The browser needs the authority's URL, a namespace and a generator token.
// The token here is a short-lived one for a namespace of its own, minted by
// whoever runs the authority and handed to this server as an environment
// variable (see README.md). The page is rendered per request (`connection`),
// so the token is read when a browser asks, never baked into the build.
//
// Caveat: anyone who can open this page holds the token until it expires
// and can take IDs from its namespace with it. Use this only for pages whose
// every visitor may hold it (an internal tool); a public site asks its own
// server for IDs (the route handlers in app/api/ids/).
export default async function BrowserPage() {
  await connection();
  const url = process.env.RANGEID_BROWSER_URL ?? process.env.RANGEID_URL;
  const token = process.env.RANGEID_BROWSER_TOKEN;
  const namespace = process.env.RANGEID_BROWSER_NAMESPACE;
  return (
    <main>
      <h1>IDs taken in the browser</h1>
      {url && token && namespace ? (
        <BrowserIds url={url} token={token} namespace={namespace} />
      ) : (
        <p>Set RANGEID_BROWSER_TOKEN and RANGEID_BROWSER_NAMESPACE (and RANGEID_URL) on the server: see README.md.</p>
      )}
    </main>
  );
}
