// What an admin action just wrote to the audit log, or why it failed.
import type { AuditEntry } from "../api/types";
import { AuditChange } from "../views/AuditChange";
import { Timestamp } from "../views/Timestamp";

export function AuditReceipt({ receipt, error }: { receipt: AuditEntry | null; error: string | null }) {
  return (
    <div aria-live="polite">
      {error && <p class="error" role="alert">Refused: {error}</p>}
      {receipt && (
        <div class="receipt" data-testid="audit-receipt">
          <p>
            Done. Audit entry #{receipt.id}: <strong>{receipt.action}</strong> by {receipt.actor} at <Timestamp at={receipt.at} />
            {receipt.reason !== null && <>, reason: <q class="reason">{receipt.reason}</q></>}
          </p>
          <AuditChange before={receipt.before} after={receipt.after} />
        </div>
      )}
    </div>
  );
}
