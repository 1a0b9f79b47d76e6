// A labelled input with its hint, problem and warning tied to it for
// assistive technology.
interface Props {
  id: string;
  label: string;
  value: string;
  onValue: (value: string) => void;
  hint?: string | undefined;
  problem?: string | undefined;
  warning?: string | undefined;
  inputMode?: "numeric" | "text";
  autocomplete?: string;
  spellcheck?: boolean;
}

export function Field({ id, label, value, onValue, hint, problem, warning, inputMode, autocomplete, spellcheck }: Props) {
  const described = [hint && `${id}-hint`, problem && `${id}-problem`, warning && `${id}-warning`].filter(Boolean).join(" ");
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        value={value}
        onInput={(e) => onValue(e.currentTarget.value)}
        aria-invalid={problem ? true : undefined}
        aria-describedby={described || undefined}
        inputMode={inputMode}
        autocomplete={autocomplete}
        spellcheck={spellcheck}
      />
      {hint && <p id={`${id}-hint`} class="hint">{hint}</p>}
      {problem && <p id={`${id}-problem`} class="error">{problem}</p>}
      {warning && <p id={`${id}-warning`} class="warning">{warning}</p>}
    </div>
  );
}
