// An admin action's life: asked (waiting for confirmation), running, then
// the audit entry it wrote, or the authority's refusal.
import { useState } from "preact/hooks";
import { latestAudit } from "../api/endpoints";
import type { AuditEntry } from "../api/types";
import { useAuth } from "../views/auth";

export interface Action<T> {
  /** The input awaiting confirmation. */
  pending: T | null;
  busy: boolean;
  receipt: AuditEntry | null;
  error: string | null;
  ask: (input: T) => void;
  cancel: () => void;
  confirm: () => Promise<void>;
}

/** `run` performs the change and returns the namespace whose audit log it wrote. */
export function useAction<T>(run: (token: string, input: T) => Promise<string>, onDone: () => void): Action<T> {
  const { token } = useAuth();
  const [pending, setPending] = useState<T | null>(null);
  const [busy, setBusy] = useState(false);
  const [receipt, setReceipt] = useState<AuditEntry | null>(null);
  const [error, setError] = useState<string | null>(null);
  return {
    pending,
    busy,
    receipt,
    error,
    ask: (input) => {
      setReceipt(null);
      setError(null);
      setPending(input);
    },
    cancel: () => setPending(null),
    confirm: async () => {
      if (pending === null) return;
      setBusy(true);
      try {
        const namespace = await run(token, pending);
        setReceipt(await latestAudit(token, namespace));
        onDone();
      } catch (e) {
        setError(e instanceof Error ? e.message : String(e));
      } finally {
        setBusy(false);
        setPending(null);
      }
    },
  };
}
