// A value fetched now and again every `intervalMs` (never two requests at
// once), with the time of the last success and the last error. When `deps`
// change it fetches at once and keeps showing the old value until then.
import { useCallback, useEffect, useRef, useState } from "preact/hooks";

export interface Polled<T> {
  data: T | undefined;
  error: Error | undefined;
  /** When `data` was fetched. */
  at: Date | undefined;
  /** Fetches again now. */
  reload: () => void;
}

export function usePoll<T>(load: () => Promise<T>, intervalMs: number, deps: unknown[]): Polled<T> {
  const [state, setState] = useState<Omit<Polled<T>, "reload">>({ data: undefined, error: undefined, at: undefined });
  const kick = useRef<() => void>(() => {});
  useEffect(() => {
    let alive = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let running = false;
    let again = false;
    const tick = async () => {
      if (running) {
        again = true;
        return;
      }
      clearTimeout(timer);
      running = true;
      try {
        const data = await load();
        if (alive) setState({ data, error: undefined, at: new Date() });
      } catch (e) {
        if (alive) setState((s) => ({ ...s, error: e instanceof Error ? e : new Error(String(e)) }));
      } finally {
        running = false;
        if (alive && again) {
          again = false;
          void tick();
        } else if (alive) {
          timer = setTimeout(tick, intervalMs);
        }
      }
    };
    kick.current = () => void tick();
    void tick();
    return () => {
      alive = false;
      clearTimeout(timer);
    };
  }, deps);
  const reload = useCallback(() => kick.current(), []);
  return { ...state, reload };
}
