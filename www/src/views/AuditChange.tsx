// What an audit entry changed: each field's value before and after.

type State = Record<string, unknown> | null;

const show = (v: unknown) => (v === undefined ? "—" : typeof v === "string" ? v : JSON.stringify(v));

export function AuditChange({ before, after }: { before: State; after: State }) {
  const keys = [...new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])];
  return (
    <ul class="change">
      {keys.map((k) => {
        const b = before?.[k];
        const a = after?.[k];
        return (
          <li key={k}>
            {k}: {before === null ? show(a) : show(b) === show(a) ? show(a) : `${show(b)} → ${show(a)}`}
          </li>
        );
      })}
    </ul>
  );
}
