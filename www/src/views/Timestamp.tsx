// An RFC 3339 time from the API, shown in local time.
import { timestamp } from "../lib/time";

export function Timestamp({ at, empty = "never" }: { at: string | null; empty?: string }) {
  if (!at) return <span class="muted">{empty}</span>;
  return <time dateTime={at} title={at}>{timestamp(at)}</time>;
}
