// Who is signed in, for every view below the sign-in gate.
import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { Session } from "../api/types";

export interface Auth {
  token: string;
  session: Session;
  isAdmin: boolean;
  signOut: () => void;
}

export const AuthContext = createContext<Auth | null>(null);

export function useAuth(): Auth {
  const auth = useContext(AuthContext);
  if (!auth) throw new Error("useAuth outside the signed-in app");
  return auth;
}
