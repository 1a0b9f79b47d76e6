// One authenticated JSON request to the authority (same origin). Error
// answers become ApiError with the authority's code and message; a 401
// also tells whoever registered for it, so the page can ask for sign-in.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

let onUnauthenticated: (message: string) => void = () => {};

/** Registers what happens on any 401 (the app returns to sign-in). */
export function whenUnauthenticated(handler: (message: string) => void): void {
  onUnauthenticated = handler;
}

export async function request<T>(token: string, method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: "application/json" };
  if (body !== undefined) headers["content-type"] = "application/json";
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers,
      body: body === undefined ? null : JSON.stringify(body),
      cache: "no-store",
    });
  } catch (e) {
    throw new ApiError(0, "network", `the authority could not be reached (${String(e)})`);
  }
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // Not JSON: reported below with the status.
  }
  if (res.ok) return parsed as T;
  const err = (parsed as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  const code = typeof err?.code === "string" ? err.code : `http_${res.status}`;
  const message = typeof err?.message === "string" ? err.message : `${res.status} ${res.statusText}`;
  if (res.status === 401) onUnauthenticated(message);
  throw new ApiError(res.status, code, message);
}
