// One row per namespace, refreshed every 5 s: which one is running out.
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { listNamespaces } from "../api/endpoints";
import { CreateNamespaceForm } from "../admin/CreateNamespaceForm";
import { arrange, type Filter, type Row, type Sort, type SortKey, toRows } from "../lib/overview";
import { usePoll } from "../lib/poll";
import { mark, measure } from "../lib/timing";
import { useAuth } from "./auth";
import { OverviewFilters } from "./OverviewFilters";
import { NamespaceTable } from "./NamespaceTable";
import { Refreshed } from "./Refreshed";

const REFRESH_MS = 5000;

export function Overview() {
  const { token, isAdmin } = useAuth();
  const rows = useRef(new Map<string, Row>());
  const polled = usePoll(async () => {
    mark("rangeid:overview-fetch-start");
    const summaries = await listNamespaces(token);
    measure("rangeid:overview-fetch", "rangeid:overview-fetch-start");
    mark("rangeid:overview-data");
    rows.current = toRows(summaries, rows.current);
    return rows.current;
  }, REFRESH_MS, [token]);

  const [filter, setFilter] = useState<Filter>({ text: "", state: "all", soonOnly: false });
  const [sort, setSort] = useState<Sort>({ key: "exhaustion", descending: false });
  const shown = useMemo(() => (polled.data ? arrange(polled.data.values(), filter, sort) : []), [polled.data, filter, sort]);

  // Time from the data's arrival to the rows in the DOM (read by scripts/bench.mjs).
  useLayoutEffect(() => {
    if (!polled.data) return;
    measure("rangeid:overview-render", "rangeid:overview-data");
  }, [polled.data]);

  useEffect(() => {
    document.title = "Namespaces · rangeid admin";
  }, []);

  // A second click reverses; a new column starts with what matters most:
  // the largest figures, or the soonest exhaustion and the first names.
  const onSort = (key: SortKey) =>
    setSort((s) => (s.key === key ? { key, descending: !s.descending } : { key, descending: !["name", "state", "exhaustion"].includes(key) }));

  return (
    <>
      <div class="heading">
        <h1 tabIndex={-1}>Namespaces</h1>
        <Refreshed polled={polled} everyMs={REFRESH_MS} />
      </div>
      {isAdmin && <CreateNamespaceForm onCreated={polled.reload} />}
      <OverviewFilters filter={filter} onChange={setFilter} />
      {polled.data && (
        <p class="count" role="status" data-testid="overview-count">
          {shown.length === polled.data.size ? `${shown.length} namespaces` : `${shown.length} of ${polled.data.size} namespaces`}
        </p>
      )}
      {polled.data && <NamespaceTable rows={shown} sort={sort} onSort={onSort} />}
      {polled.data?.size === 0 && <p>No namespaces yet{isAdmin ? ": create one above." : "."}</p>}
    </>
  );
}
