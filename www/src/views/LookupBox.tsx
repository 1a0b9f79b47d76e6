// "Who got ID N": the retained grant holding N, or the authority's word on
// where N stands when none does.
import { useState } from "preact/hooks";
import { lookup } from "../api/endpoints";
import { ApiError } from "../api/http";
import type { Lookup, Summary } from "../api/types";
import { grouped, parseDecimal } from "../lib/decimal";
import { idRange } from "../lib/ids";
import { useAuth } from "./auth";
import { Timestamp } from "./Timestamp";

type Outcome = { found: Lookup } | { none: string } | { error: string };

export function LookupBox({ summary }: { summary: Summary }) {
  const { token } = useAuth();
  const [text, setText] = useState("");
  const [invalid, setInvalid] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    const id = parseDecimal(text);
    setInvalid(id === null);
    if (id === null) return;
    setBusy(true);
    try {
      setOutcome({ found: await lookup(token, summary.namespace, id.toString()) });
    } catch (err) {
      // The authority says where the ID stands (before first, not granted
      // yet, or passed with no retained grant: skipped or aged out).
      if (err instanceof ApiError && err.code === "grant_not_found") setOutcome({ none: err.message });
      else setOutcome({ error: err instanceof Error ? err.message : String(err) });
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="lookup-h">
      <h2 id="lookup-h">Who got an ID</h2>
      <form class="inline" onSubmit={submit}>
        <label for="lookup-id">ID</label>
        <input
          id="lookup-id"
          inputMode="numeric"
          autocomplete="off"
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
          aria-invalid={invalid}
          aria-describedby={invalid ? "lookup-invalid" : undefined}
        />
        <button type="submit" disabled={busy}>Look up</button>
      </form>
      {invalid && <p id="lookup-invalid" class="error">Enter a whole number in decimal digits, such as 1001.</p>}
      <div aria-live="polite" data-testid="lookup-result">
        {outcome && "found" in outcome && (
          <dl class="figures">
            <div class="figure"><dt>ID</dt><dd class="mono">{outcome.found.id}</dd></div>
            <div class="figure"><dt>Range</dt><dd class="mono" title={`[${outcome.found.start}, ${outcome.found.end})`}>{idRange(outcome.found.start, outcome.found.end)}</dd></div>
            <div class="figure"><dt>Count</dt><dd>{grouped(String(outcome.found.count))}</dd></div>
            <div class="figure"><dt>Incarnation</dt><dd class="mono">{outcome.found.incarnation}</dd></div>
            <div class="figure"><dt>Request</dt><dd class="mono">{outcome.found.requestId}</dd></div>
            {outcome.found.sub !== undefined && <div class="figure"><dt>Who</dt><dd>{outcome.found.sub}</dd></div>}
            <div class="figure"><dt>When</dt><dd><Timestamp at={outcome.found.at} /></dd></div>
            {outcome.found.relay && (
              <div class="figure">
                <dt>Through relay</dt>
                <dd>
                  {outcome.found.relay.sub}, range <span class="mono" title={`[${outcome.found.relay.start}, ${outcome.found.relay.end})`}>{idRange(outcome.found.relay.start, outcome.found.relay.end)}</span>
                  {outcome.found.relay.reported ? "" : " (not reported: no report names a generator; the relay may still hold this ID, may have abandoned it unused, or its report was lost)"}
                </dd>
              </div>
            )}
          </dl>
        )}
        {outcome && "none" in outcome && <p>{outcome.none}</p>}
        {outcome && "error" in outcome && <p class="error">{outcome.error}</p>}
      </div>
    </section>
  );
}
