// The admin controls of a namespace page (never rendered for a reader).
import type { Summary } from "../api/types";
import { FloorForm } from "./FloorForm";
import { FreezeForm } from "./FreezeForm";
import { LimitsForm } from "./LimitsForm";

export function AdminActions({ summary, onChanged }: { summary: Summary; onChanged: () => void }) {
  return (
    <section aria-labelledby="admin-h">
      <h2 id="admin-h">Admin actions</h2>
      <div class="panels">
        <FreezeForm summary={summary} onDone={onChanged} />
        <FloorForm summary={summary} onDone={onChanged} />
        {summary.limits && <LimitsForm summary={summary} limits={summary.limits} onDone={onChanged} />}
      </div>
    </section>
  );
}
