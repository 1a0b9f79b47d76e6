// When a polled view last refreshed, and whether the last try failed.
import type { Polled } from "../lib/poll";
import { clock } from "../lib/time";

export function Refreshed({ polled, everyMs }: { polled: Polled<unknown>; everyMs: number }) {
  return (
    <p class="refreshed">
      {polled.at ? (
        <>Updated <time dateTime={polled.at.toISOString()} data-testid="refreshed-at">{clock(polled.at)}</time>, every {everyMs / 1000} s</>
      ) : (
        !polled.error && "Loading…"
      )}
      {polled.error && <span role="alert" class="error"> Refresh failed: {polled.error.message}</span>}
    </p>
  );
}
