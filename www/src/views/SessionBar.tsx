// Who is signed in (from GET /v1/session) and the way out.
import { duration, timestamp } from "../lib/time";
import { useAuth } from "./auth";

export function SessionBar() {
  const { session, signOut } = useAuth();
  const expires = new Date(session.exp * 1000);
  const left = session.exp - Date.now() / 1000;
  const scope = session.ns.includes("*") ? "all namespaces" : session.ns.join(", ");
  return (
    <div class="session" role="group" aria-label="Signed in">
      <span class="who" data-testid="session-sub">{session.sub}</span>
      <span class={`role role-${session.role}`} data-testid="session-role">{session.role}</span>
      <span data-testid="session-ns" title="Namespaces this token may use">{scope}</span>
      <span>
        expires <time dateTime={expires.toISOString()}>{timestamp(expires.toISOString())}</time>
        {left > 0 ? ` (in ${duration(left)})` : " (expired)"}
      </span>
      <button type="button" onClick={signOut}>Sign out</button>
    </div>
  );
}
