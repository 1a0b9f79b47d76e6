// Raise the floor (admin): move `next` up so IDs below it are never issued.
import { useState } from "preact/hooks";
import { raiseFloor } from "../api/endpoints";
import type { Summary } from "../api/types";
import { grouped } from "../lib/decimal";
import { AuditReceipt } from "./AuditReceipt";
import { ConfirmDialog } from "./ConfirmDialog";
import { Field } from "./Field";
import { useAction } from "./useAction";
import { checkFloor } from "./validate";

export function FloorForm({ summary, onDone }: { summary: Summary; onDone: () => void }) {
  const [text, setText] = useState("");
  const [problem, setProblem] = useState<string | undefined>();
  const action = useAction<string>(async (token, floor) => {
    await raiseFloor(token, summary.namespace, floor);
    setText("");
    return summary.namespace;
  }, onDone);

  const submit = (e: Event) => {
    e.preventDefault();
    const checked = checkFloor(text, summary.next, summary.max);
    if ("problem" in checked) {
      setProblem(checked.problem);
      document.getElementById("floor-value")?.focus();
      return;
    }
    setProblem(undefined);
    action.ask(checked.ok);
  };

  const skipped = action.pending !== null ? BigInt(action.pending) - BigInt(summary.next) : 0n;
  return (
    <div class="panel">
      <h3>Raise the floor</h3>
      <p>Current next ID: <span class="mono" data-testid="floor-next">{summary.next}</span></p>
      <form class="inline" onSubmit={submit} noValidate>
        <Field id="floor-value" label="New next ID" value={text} onValue={setText} problem={problem} inputMode="numeric" autocomplete="off" />
        <button type="submit">Raise floor…</button>
      </form>
      <ConfirmDialog
        open={action.pending !== null}
        title={`Raise the floor of ${summary.namespace}?`}
        confirmLabel="Raise floor"
        busy={action.busy}
        onConfirm={action.confirm}
        onCancel={action.cancel}
      >
        <p>
          Next ID moves from <span class="mono">{summary.next}</span> to <span class="mono">{action.pending}</span>:{" "}
          {grouped(skipped)} IDs are skipped for good.
        </p>
      </ConfirmDialog>
      <AuditReceipt receipt={action.receipt} error={action.error} />
    </div>
  );
}
