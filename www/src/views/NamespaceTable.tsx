// The overview table: sortable column headers, one row per namespace.
import type { ComponentChildren } from "preact";
import type { Row, Sort, SortKey } from "../lib/overview";
import { NamespaceRow } from "./NamespaceRow";

interface Props {
  rows: Row[];
  sort: Sort;
  onSort: (key: SortKey) => void;
}

export function NamespaceTable({ rows, sort, onSort }: Props) {
  const header = (key: SortKey, label: ComponentChildren, numeric = false) => {
    const active = sort.key === key;
    return (
      <th scope="col" class={numeric ? "num" : undefined} aria-sort={active ? (sort.descending ? "descending" : "ascending") : "none"}>
        <button type="button" class="sort" onClick={() => onSort(key)}>
          {label}
          <span aria-hidden="true" class="arrow">{active ? (sort.descending ? "▼" : "▲") : ""}</span>
        </button>
      </th>
    );
  };
  return (
    <table class="namespaces" aria-label="Namespaces">
      <thead>
        <tr>
          {header("name", "Namespace")}
          {header("state", "State")}
          {header("used", "Capacity used")}
          {header("remaining", "Remaining", true)}
          {header("rateMinute", <>IDs/s <small>last min</small></>, true)}
          {header("rateHour", <>IDs/s <small>last hour</small></>, true)}
          {header("exhaustion", "Runs out in")}
          {header("lastGrant", "Last grant")}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => <NamespaceRow key={row.summary.namespace} row={row} />)}
      </tbody>
    </table>
  );
}
