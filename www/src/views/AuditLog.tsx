// The namespace's audit log (admin only), newest first, paged.
import { listAudit } from "../api/endpoints";
import { usePages } from "../lib/pages";
import { usePoll } from "../lib/poll";
import { AuditChange } from "./AuditChange";
import { useAuth } from "./auth";
import { Pager } from "./Pager";
import { Timestamp } from "./Timestamp";

const PAGE = 25;

/** `version` changes after an admin action, to refetch at once. */
export function AuditLog({ name, version }: { name: string; version: number }) {
  const { token } = useAuth();
  const pages = usePages();
  const polled = usePoll(() => listAudit(token, name, PAGE, pages.cursor), 5000, [token, name, pages.cursor, version]);
  const entries = polled.data?.audit ?? [];
  return (
    <section aria-labelledby="audit-h">
      <h2 id="audit-h">Audit log</h2>
      {polled.error && <p role="alert" class="error">{polled.error.message}</p>}
      {entries.length > 0 && (
        <div class="scroll">
          <table class="audit">
            <thead>
              <tr>
                <th scope="col" class="num">#</th>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">Action</th>
                <th scope="col">Change</th>
                <th scope="col">Reason</th>
              </tr>
            </thead>
            <tbody>
              {entries.map((e) => (
                <tr key={e.id} data-audit-id={e.id}>
                  <td class="num">{e.id}</td>
                  <td><Timestamp at={e.at} /></td>
                  <td>{e.actor}</td>
                  <td>{e.action}</td>
                  <td><AuditChange before={e.before} after={e.after} /></td>
                  <td class="reason">{e.reason ?? ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {polled.data && <Pager pages={pages} nextBefore={polled.data.nextBefore} label="Audit" />}
    </section>
  );
}
