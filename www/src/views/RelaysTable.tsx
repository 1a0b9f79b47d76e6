// A namespace's relays, as their reports to the ledger say (docs/relays.md
// §6): what its live instances hold, how many sub-grants its instances
// handed out, what they abandoned (with what ended instances held), how many
// instances are live, what they refused generators, and what its reports
// brought. Nothing shows for a namespace
// whose relays never reported, or from an authority before reports.
import type { RelayReport, Summary } from "../api/types";
import { grouped } from "../lib/decimal";
import { Timestamp } from "./Timestamp";

export function RelaysTable({ summary: s }: { summary: Summary }) {
  const relays: RelayReport[] = s.ledger?.relays ?? [];
  if (relays.length === 0) return null;
  return (
    <section aria-labelledby="relays-h">
      <h2 id="relays-h">Relays</h2>
      <div class="scroll">
        <table class="relays">
          <thead>
            <tr>
              <th scope="col">Relay</th>
              <th scope="col" class="num">Holds (IDs)</th>
              <th scope="col" class="num">Sub-grants</th>
              <th scope="col" class="num">Abandoned (IDs)</th>
              <th scope="col" class="num">Live instances</th>
              <th scope="col" class="num">Refused</th>
              <th scope="col" class="num">Reported</th>
              <th scope="col" class="num">Not kept</th>
              <th scope="col">Last report</th>
            </tr>
          </thead>
          <tbody>
            {relays.map((r) => (
              <tr key={r.sub}>
                <td class="mono" title={`incarnation ${r.incarnation}`}>{r.sub}</td>
                <td class="num">{grouped(r.held)}</td>
                <td class="num">{grouped(String(r.subGrants))}</td>
                <td class="num">{grouped(r.abandoned)}</td>
                <td class="num" title={r.instances === undefined ? "not reported by this authority" : `${r.instances} instances within the retention; 2 or more live at once is a split`}>
                  {r.live === undefined ? "–" : `${r.live} of ${r.instances}`}
                </td>
                <td class="num" title={r.refused === undefined ? "not reported by this authority" : `${r.refused.frozen} frozen, ${r.refused.exhausted} exhausted, ${r.refused.conflict} conflicting`}>
                  {r.refused === undefined ? "–" : grouped(String(r.refused.frozen + r.refused.exhausted + r.refused.conflict))}
                </td>
                <td class="num" title={`${r.batches} batches`}>{grouped(String(r.kept))}</td>
                <td class="num" title={`${r.dropped ?? 0} for lack of room, ${r.backlogDropped ?? 0} from the relay's backlog, ${r.unmatched ?? 0} outside its grants`}>
                  {grouped(String((r.dropped ?? 0) + (r.backlogDropped ?? 0) + (r.unmatched ?? 0)))}
                </td>
                <td><Timestamp at={r.lastAt} /></td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
