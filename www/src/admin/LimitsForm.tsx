// The limits on what callers add (admin): each token sub's grant rate and
// ledger rows, the ledger's rows. Past one, a grant is refused 429.
import { useState } from "preact/hooks";
import { setLimits } from "../api/endpoints";
import type { Limits, Summary } from "../api/types";
import { grouped } from "../lib/decimal";
import { AuditReceipt } from "./AuditReceipt";
import { ConfirmDialog } from "./ConfirmDialog";
import { Field } from "./Field";
import { useAction } from "./useAction";
import { checkLimits, type LimitsInput, type Problems } from "./validate";

export function LimitsForm({ summary, limits, onDone }: { summary: Summary; limits: Limits; onDone: () => void }) {
  const [input, setInput] = useState<LimitsInput>({
    grantsPerSecond: String(limits.grantsPerSecond),
    ledgerRows: String(limits.ledgerRows),
    subLedgerRows: String(limits.subLedgerRows),
  });
  const [problems, setProblems] = useState<Problems<keyof LimitsInput>>({});
  const action = useAction<Limits>(async (token, next) => {
    await setLimits(token, summary.namespace, next);
    return summary.namespace;
  }, onDone);
  const set = (key: keyof LimitsInput) => (value: string) => setInput({ ...input, [key]: value });

  const submit = (e: Event) => {
    e.preventDefault();
    const checked = checkLimits(input);
    if ("problems" in checked) {
      setProblems(checked.problems);
      const first = (Object.keys(checked.problems) as (keyof LimitsInput)[])[0];
      document.getElementById(`limits-${first}`)?.focus();
      return;
    }
    setProblems({});
    action.ask(checked.ok);
  };

  return (
    <div class="panel">
      <h3>Limits</h3>
      <p>Past a limit a grant is refused 429 with Retry-After; generators wait and ask again, other subs are still served.</p>
      <form onSubmit={submit} noValidate>
        <Field id="limits-grantsPerSecond" label="New grants per second, per sub" value={input.grantsPerSecond} onValue={set("grantsPerSecond")} problem={problems.grantsPerSecond} inputMode="numeric" autocomplete="off" />
        <Field id="limits-ledgerRows" label="Ledger rows" value={input.ledgerRows} onValue={set("ledgerRows")} problem={problems.ledgerRows} inputMode="numeric" autocomplete="off" />
        <Field id="limits-subLedgerRows" label="Ledger rows per sub" value={input.subLedgerRows} onValue={set("subLedgerRows")} problem={problems.subLedgerRows} inputMode="numeric" autocomplete="off" />
        <button type="submit">Set limits…</button>
      </form>
      <ConfirmDialog
        open={action.pending !== null}
        title={`Set the limits of ${summary.namespace}?`}
        confirmLabel="Set limits"
        busy={action.busy}
        onConfirm={action.confirm}
        onCancel={action.cancel}
      >
        {action.pending && (
          <p>
            Each sub: {grouped(String(action.pending.grantsPerSecond))} new grants a second and{" "}
            {grouped(String(action.pending.subLedgerRows))} ledger rows; the ledger: {grouped(String(action.pending.ledgerRows))} rows.
          </p>
        )}
      </ConfirmDialog>
      <AuditReceipt receipt={action.receipt} error={action.error} />
    </div>
  );
}
