// One namespace: figures, rate charts, lookup, grants, then (admin only)
// the actions and the audit log.
import { useEffect, useState } from "preact/hooks";
import { AdminActions } from "../admin/AdminActions";
import { getSummary } from "../api/endpoints";
import { ApiError } from "../api/http";
import { usePoll } from "../lib/poll";
import { overviewHref } from "../lib/route";
import { AuditLog } from "./AuditLog";
import { useAuth } from "./auth";
import { GrantsTable } from "./GrantsTable";
import { LookupBox } from "./LookupBox";
import { RateCharts } from "./RateCharts";
import { Refreshed } from "./Refreshed";
import { RelaysTable } from "./RelaysTable";
import { SummaryFigures } from "./SummaryFigures";

const REFRESH_MS = 5000;

function unreadable(error: Error, name: string): string {
  if (error instanceof ApiError && error.status === 404) return `There is no namespace named “${name}”.`;
  if (error instanceof ApiError && error.status === 403) return `This token may not read “${name}”.`;
  return error.message;
}

export function NamespacePage({ name }: { name: string }) {
  const { token, isAdmin } = useAuth();
  const summary = usePoll(() => getSummary(token, name), REFRESH_MS, [token, name]);
  // Bumped after an admin action so the audit log refetches at once.
  const [version, setVersion] = useState(0);
  useEffect(() => {
    document.title = `${name} · rangeid admin`;
  }, [name]);

  const s = summary.data;
  return (
    <>
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href={overviewHref}>Namespaces</a> / <span aria-current="page">{name}</span>
      </nav>
      <div class="heading">
        <h1 tabIndex={-1}>
          {name} {s && <span class={`state state-${s.state}`} data-testid="state">{s.state}</span>}
        </h1>
        {s && <Refreshed polled={summary} everyMs={REFRESH_MS} />}
      </div>
      {!s && summary.error && <p role="alert" class="error">{unreadable(summary.error, name)}</p>}
      {!s && !summary.error && <p>Loading…</p>}
      {s && (
        <>
          <SummaryFigures summary={s} />
          <RelaysTable summary={s} />
          <RateCharts name={name} />
          <LookupBox summary={s} />
          <GrantsTable name={name} />
          {isAdmin && (
            <AdminActions
              summary={s}
              onChanged={() => {
                summary.reload();
                setVersion((v) => v + 1);
              }}
            />
          )}
          {isAdmin && <AuditLog name={name} version={version} />}
        </>
      )}
    </>
  );
}
