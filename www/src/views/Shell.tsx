// The signed-in page: header with the session, then the routed view.
import { useEffect, useRef } from "preact/hooks";
import { overviewHref, useRoute } from "../lib/route";
import { NamespacePage } from "./NamespacePage";
import { Overview } from "./Overview";
import { SessionBar } from "./SessionBar";

export function Shell() {
  const route = useRoute();
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);

  // After navigating, move focus to the new view's heading.
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    main.current?.querySelector<HTMLElement>("h1")?.focus();
  }, [route]);

  return (
    <>
      <header class="top">
        <a class="brand" href={overviewHref}>rangeid admin</a>
        <SessionBar />
      </header>
      <main ref={main}>
        {route.view === "namespace" ? <NamespacePage key={route.name} name={route.name} /> : <Overview />}
      </main>
    </>
  );
}
