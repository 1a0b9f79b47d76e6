"use client";

// Takes IDs in the browser with the package's browser build, which fetches
// the engine (a .wasm file Next.js serves from /_next/static/media/). The
// authority answers this page only if its origin is listed in the
// authority's RANGEID_CORS_ORIGINS.
import { useCallback, useEffect, useState } from "react";
import { RangeIdError } from "rangeid";
import { sharedGenerator, takeIds } from "@/lib/rangeid";

type Taken = { ids: string[]; incarnation: string } | { error: string } | undefined;

export function BrowserIds({ url, token, namespace }: { url: string; token: string; namespace: string }) {
  const [taken, setTaken] = useState<Taken>();
  const take = useCallback(async () => {
    try {
      const generator = await sharedGenerator({ url, token, namespace });
      setTaken({ ids: await takeIds(generator, 100), incarnation: generator.incarnation });
    } catch (e) {
      setTaken({ error: e instanceof RangeIdError ? `${e.code}: ${e.message}` : String(e) });
    }
  }, [url, token, namespace]);

  useEffect(() => {
    void take();
  }, [take]);

  if (!taken) return <p>Taking IDs…</p>;
  if ("error" in taken) return <p role="alert" id="error">{taken.error}</p>;
  return (
    <section>
      <p>
        {taken.ids.length} IDs from generator {taken.incarnation}{" "}
        <button type="button" onClick={take}>
          Take 100 more
        </button>
      </p>
      <ol id="ids" data-incarnation={taken.incarnation}>
        {taken.ids.map((id) => (
          <li key={id}>{id}</li>
        ))}
      </ol>
    </section>
  );
}
