// Freeze or unfreeze (admin), with the reason recorded in the audit log.
import { useState } from "preact/hooks";
import { setFrozen } from "../api/endpoints";
import type { Summary } from "../api/types";
import { AuditReceipt } from "./AuditReceipt";
import { ConfirmDialog } from "./ConfirmDialog";
import { useAction } from "./useAction";
import { checkReason, REASON_MAX } from "./validate";

export function FreezeForm({ summary, onDone }: { summary: Summary; onDone: () => void }) {
  const freeze = summary.state === "active";
  const verb = freeze ? "Freeze" : "Unfreeze";
  const [reason, setReason] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const action = useAction<{ frozen: boolean; reason: string }>(async (token, input) => {
    await setFrozen(token, summary.namespace, input.frozen, input.reason);
    setReason("");
    return summary.namespace;
  }, onDone);

  const submit = (e: Event) => {
    e.preventDefault();
    const checked = checkReason(reason);
    if ("problem" in checked) {
      setProblem(checked.problem);
      document.getElementById("freeze-reason")?.focus();
      return;
    }
    setProblem(null);
    action.ask({ frozen: freeze, reason: checked.ok });
  };

  const described = ["freeze-hint", problem ? "freeze-problem" : ""].filter(Boolean).join(" ");
  return (
    <div class="panel">
      <h3>{freeze ? "Freeze" : "Unfreeze"}</h3>
      <form class="stack" onSubmit={submit} noValidate>
        <label for="freeze-reason">Reason</label>
        <textarea
          id="freeze-reason"
          rows={2}
          maxLength={REASON_MAX}
          value={reason}
          onInput={(e) => setReason(e.currentTarget.value)}
          aria-invalid={problem ? true : undefined}
          aria-describedby={described}
        />
        <p id="freeze-hint" class="hint">
          {freeze ? "While frozen, generators are refused new ranges (423); replays still answer." : "Generators get ranges again."}{" "}
          Recorded in the audit log; 1 to {REASON_MAX} characters.
        </p>
        {problem && <p id="freeze-problem" class="error">{problem}</p>}
        <div class="actions">
          <button type="submit">{verb}…</button>
        </div>
      </form>
      <ConfirmDialog
        open={action.pending !== null}
        title={`${verb} ${summary.namespace}?`}
        confirmLabel={verb}
        busy={action.busy}
        onConfirm={action.confirm}
        onCancel={action.cancel}
      >
        <p>Reason: <q class="reason">{action.pending?.reason}</q></p>
      </ConfirmDialog>
      <AuditReceipt receipt={action.receipt} error={action.error} />
    </div>
  );
}
