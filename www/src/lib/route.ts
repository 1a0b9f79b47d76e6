// Where the page is: the hash names the view ("#/" or "#/ns/<name>"), so
// links are plain anchors and Back works.
import { useEffect, useState } from "preact/hooks";

export type Route = { view: "overview" } | { view: "namespace"; name: string };

export function parseRoute(hash: string): Route {
  const m = /^#\/ns\/([^/?#]+)$/.exec(hash);
  return m ? { view: "namespace", name: decodeURIComponent(m[1]!) } : { view: "overview" };
}

export const namespaceHref = (name: string) => `#/ns/${encodeURIComponent(name)}`;
export const overviewHref = "#/";

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const update = () => setRoute(parseRoute(location.hash));
    addEventListener("hashchange", update);
    return () => removeEventListener("hashchange", update);
  }, []);
  return route;
}
