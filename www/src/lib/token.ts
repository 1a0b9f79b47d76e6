// The bearer token lives in this tab's sessionStorage only. A sign-in link
// may carry it in the fragment (/admin/#token=...): taken once, then
// removed from the address bar and the history entry at once.

const KEY = "rangeid.token";

/** Stores and returns the fragment's token, if it has one. */
export function takeTokenFromFragment(): string | null {
  const match = /^#token=([^&]+)/.exec(location.hash);
  if (!match) return null;
  history.replaceState(null, "", location.pathname + location.search);
  const token = decodeURIComponent(match[1]!);
  storeToken(token);
  return token;
}

export function storedToken(): string | null {
  return sessionStorage.getItem(KEY);
}

export function storeToken(token: string): void {
  sessionStorage.setItem(KEY, token);
}

export function clearToken(): void {
  sessionStorage.removeItem(KEY);
}
