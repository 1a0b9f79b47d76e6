// Create a namespace (admin): name, first, max and maxCount, checked here,
// confirmed, then the audit entry written.
import { useState } from "preact/hooks";
import { createNamespace } from "../api/endpoints";
import type { CreateNamespace } from "../api/types";
import { grouped } from "../lib/decimal";
import { namespaceHref } from "../lib/route";
import { AuditReceipt } from "./AuditReceipt";
import { ConfirmDialog } from "./ConfirmDialog";
import { Field } from "./Field";
import { useAction } from "./useAction";
import { checkCreate, type CreateInput, DEFAULTS, type Problems } from "./validate";

export function CreateNamespaceForm({ onCreated }: { onCreated: () => void }) {
  const [input, setInput] = useState<CreateInput>({ namespace: "", ...DEFAULTS });
  const [problems, setProblems] = useState<Problems<keyof CreateInput>>({});
  const [created, setCreated] = useState<string | null>(null);
  const action = useAction<CreateNamespace>(async (token, body) => {
    const { namespace } = await createNamespace(token, body);
    setCreated(namespace);
    setInput((i) => ({ ...i, namespace: "" }));
    return namespace;
  }, onCreated);
  const warnings = checkCreate(input).warnings;
  const set = (key: keyof CreateInput) => (value: string) => setInput((i) => ({ ...i, [key]: value }));

  const submit = (e: Event) => {
    e.preventDefault();
    const checked = checkCreate(input);
    if ("problems" in checked) {
      setProblems(checked.problems);
      const firstBad = Object.keys(checked.problems)[0];
      document.getElementById(`create-${firstBad}`)?.focus();
      return;
    }
    setProblems({});
    action.ask(checked.ok);
  };

  const p = action.pending;
  return (
    <details class="panel">
      <summary>New namespace</summary>
      <form class="grid" onSubmit={submit} noValidate>
        <Field id="create-namespace" label="Name" value={input.namespace} onValue={set("namespace")} problem={problems.namespace}
          hint="a-z, 0-9, '.', '_', '-'; up to 63" autocomplete="off" spellcheck={false} />
        <Field id="create-first" label="First ID" value={input.first} onValue={set("first")} problem={problems.first}
          hint={`default ${DEFAULTS.first}`} inputMode="numeric" />
        <Field id="create-max" label="Max ID (inclusive)" value={input.max} onValue={set("max")} problem={problems.max}
          warning={warnings.max} hint={`default ${DEFAULTS.max} (2^53 - 1)`} inputMode="numeric" />
        <Field id="create-maxCount" label="Largest request (IDs)" value={input.maxCount} onValue={set("maxCount")}
          problem={problems.maxCount} hint={`default ${grouped(DEFAULTS.maxCount)}; 1 to 2^53 - 1`} inputMode="numeric" />
        <div class="actions">
          <button type="submit">Create…</button>
        </div>
      </form>
      <ConfirmDialog
        open={p !== null}
        title="Create this namespace?"
        confirmLabel="Create namespace"
        busy={action.busy}
        onConfirm={action.confirm}
        onCancel={action.cancel}
      >
        {p && (
          <dl class="figures">
            <div class="figure"><dt>Name</dt><dd>{p.namespace}</dd></div>
            <div class="figure"><dt>First ID</dt><dd>{p.first}</dd></div>
            <div class="figure"><dt>Max ID</dt><dd>{p.max}</dd></div>
            <div class="figure"><dt>Largest request</dt><dd>{grouped(String(p.maxCount))}</dd></div>
          </dl>
        )}
      </ConfirmDialog>
      <AuditReceipt receipt={action.receipt} error={action.error} />
      {action.receipt && created && (
        <p><a href={namespaceHref(created)}>Open {created}</a></p>
      )}
    </details>
  );
}
