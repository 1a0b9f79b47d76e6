// Recent grants, newest first, paged with `nextBefore`.
import { listGrants } from "../api/endpoints";
import { grouped } from "../lib/decimal";
import { idRange } from "../lib/ids";
import { usePages } from "../lib/pages";
import { usePoll } from "../lib/poll";
import { useAuth } from "./auth";
import { Pager } from "./Pager";
import { Timestamp } from "./Timestamp";

const PAGE = 25;

export function GrantsTable({ name }: { name: string }) {
  const { token } = useAuth();
  const pages = usePages();
  const polled = usePoll(() => listGrants(token, name, PAGE, pages.cursor), 5000, [token, name, pages.cursor]);
  const grants = polled.data?.grants ?? [];
  const withSub = grants.some((g) => g.sub !== undefined);
  return (
    <section aria-labelledby="grants-h">
      <h2 id="grants-h">Recent grants</h2>
      {polled.error && <p role="alert" class="error">{polled.error.message}</p>}
      {polled.data && grants.length === 0 && <p>No retained grants{pages.number > 1 ? " on this page" : ""}.</p>}
      {grants.length > 0 && (
        <div class="scroll">
          <table class="grants">
            <thead>
              <tr>
                <th scope="col">IDs</th>
                <th scope="col" class="num">Count</th>
                <th scope="col">Incarnation</th>
                <th scope="col">Request</th>
                {withSub && <th scope="col">Who</th>}
                <th scope="col">When</th>
              </tr>
            </thead>
            <tbody>
              {grants.map((g) => (
                <tr key={g.start}>
                  <td class="mono" title={`[${g.start}, ${g.end})`}>{idRange(g.start, g.end)}</td>
                  <td class="num">{grouped(String(g.count))}</td>
                  <td class="mono">{g.incarnation}</td>
                  <td class="mono">{g.requestId}</td>
                  {withSub && <td>{g.sub ?? "—"}</td>}
                  <td><Timestamp at={g.at} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {polled.data && <Pager pages={pages} nextBefore={polled.data.nextBefore} label="Grants" />}
    </section>
  );
}
