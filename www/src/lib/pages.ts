// Paging through a newest-first listing with its `nextBefore` cursor:
// a stack of the cursors that led to the current page.
import { useState } from "preact/hooks";

export interface Pages {
  /** `before` for the current page (null: the newest). */
  cursor: string | null;
  /** 1-based. */
  number: number;
  older: (nextBefore: string) => void;
  newer: () => void;
}

export function usePages(): Pages {
  const [stack, setStack] = useState<string[]>([]);
  return {
    cursor: stack.at(-1) ?? null,
    number: stack.length + 1,
    older: (nextBefore) => setStack((s) => [...s, nextBefore]),
    newer: () => setStack((s) => s.slice(0, -1)),
  };
}
