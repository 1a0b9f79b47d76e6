// The sign-in gate: no token, or one the authority refuses, shows the
// sign-in form (with the authority's message); a valid reader or admin
// token shows the signed-in page.
import { useCallback, useEffect, useMemo, useState } from "preact/hooks";
import { getSession } from "../api/endpoints";
import { ApiError, whenUnauthenticated } from "../api/http";
import type { Session } from "../api/types";
import { clearToken, storedToken, storeToken, takeTokenFromFragment } from "../lib/token";
import { type Auth, AuthContext } from "./auth";
import { Shell } from "./Shell";
import { SignIn } from "./SignIn";

export function App() {
  const [token, setToken] = useState(storedToken);
  const [session, setSession] = useState<Session | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [failure, setFailure] = useState<string | null>(null);

  const signOut = useCallback((message: string | null) => {
    clearToken();
    setToken(null);
    setSession(null);
    setFailure(null);
    setNotice(message);
  }, []);

  useEffect(() => whenUnauthenticated((message) => signOut(`Signed out: ${message}`)), [signOut]);

  // A sign-in link opened in this tab while the page is already loaded.
  useEffect(() => {
    const onHash = () => {
      const t = takeTokenFromFragment();
      if (t === null) return;
      setSession(null);
      setNotice(null);
      setToken(t);
    };
    addEventListener("hashchange", onHash);
    return () => removeEventListener("hashchange", onHash);
  }, []);

  useEffect(() => {
    if (!token) return;
    let alive = true;
    getSession(token).then(
      (s) => {
        if (!alive) return;
        if (s.role === "generator" || s.role === "relay") signOut(`That is a ${s.role} token: this page needs a reader or admin token.`);
        else setSession(s);
      },
      (e: unknown) => {
        // A 401 has already signed out (whenUnauthenticated).
        if (alive && !(e instanceof ApiError && e.status === 401)) setFailure(e instanceof Error ? e.message : String(e));
      },
    );
    return () => {
      alive = false;
    };
  }, [token, signOut]);

  const auth = useMemo<Auth | null>(
    () => token && session ? { token, session, isAdmin: session.role === "admin", signOut: () => signOut("Signed out.") } : null,
    [token, session, signOut],
  );

  if (!token) {
    return (
      <SignIn
        notice={notice}
        onSignIn={(t) => {
          storeToken(t);
          setNotice(null);
          setToken(t);
        }}
      />
    );
  }
  if (!auth) {
    return (
      <main class="gate">
        {failure ? (
          <>
            <p role="alert" class="error">Could not check the token: {failure}</p>
            <button type="button" onClick={() => signOut(null)}>Back to sign-in</button>
          </>
        ) : (
          <p role="status">Checking the token…</p>
        )}
      </main>
    );
  }
  return (
    <AuthContext.Provider value={auth}>
      <Shell />
    </AuthContext.Provider>
  );
}
