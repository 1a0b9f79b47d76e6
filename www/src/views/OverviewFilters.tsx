// Filters over the overview's rows: name, state, running out soon.
import type { Filter } from "../lib/overview";

export function OverviewFilters({ filter, onChange }: { filter: Filter; onChange: (f: Filter) => void }) {
  return (
    <form class="filters" role="search" aria-label="Filter namespaces" onSubmit={(e) => e.preventDefault()}>
      <label>
        Name contains
        <input type="search" value={filter.text} onInput={(e) => onChange({ ...filter, text: e.currentTarget.value })} />
      </label>
      <label>
        State
        <select
          value={filter.state}
          onChange={(e) => onChange({ ...filter, state: e.currentTarget.value as Filter["state"] })}
        >
          <option value="all">all</option>
          <option value="active">active</option>
          <option value="frozen">frozen</option>
        </select>
      </label>
      <label class="check">
        <input type="checkbox" checked={filter.soonOnly} onChange={(e) => onChange({ ...filter, soonOnly: e.currentTarget.checked })} />
        Runs out within 30 days
      </label>
    </form>
  );
}
