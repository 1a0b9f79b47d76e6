// Sign-in with a reader or admin token (kept in sessionStorage only).
import { useState } from "preact/hooks";

export function SignIn({ notice, onSignIn }: { notice: string | null; onSignIn: (token: string) => void }) {
  const [value, setValue] = useState("");
  return (
    <main class="gate">
      <h1>rangeid admin</h1>
      {notice && <p role="alert" class="notice">{notice}</p>}
      <form
        class="stack"
        onSubmit={(e) => {
          e.preventDefault();
          const token = value.trim();
          if (token) onSignIn(token);
        }}
      >
        <label for="token">Reader or admin token</label>
        <input
          id="token"
          type="password"
          autocomplete="off"
          spellcheck={false}
          required
          value={value}
          onInput={(e) => setValue(e.currentTarget.value)}
          aria-describedby="token-hint"
        />
        <p id="token-hint" class="hint">
          Kept in this tab's session storage only: closing the tab or signing out forgets it.
        </p>
        <button type="submit">Sign in</button>
      </form>
    </main>
  );
}
