// Newer / older buttons under a paged listing.
import type { Pages } from "../lib/pages";

export function Pager({ pages, nextBefore, label }: { pages: Pages; nextBefore: string | null; label: string }) {
  if (pages.number === 1 && nextBefore === null) return null;
  return (
    <nav class="pager" aria-label={`${label} pages`}>
      <button type="button" disabled={pages.number === 1} onClick={pages.newer}>← Newer</button>
      <span>Page {pages.number}</span>
      <button type="button" disabled={nextBefore === null} onClick={() => nextBefore !== null && pages.older(nextBefore)}>
        Older →
      </button>
    </nav>
  );
}
