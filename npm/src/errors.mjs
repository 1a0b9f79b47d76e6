// RangeIdError: the one error class the package throws, with a stable code.

/**
 * Codes: `unavailable`, `exhausted`, `frozen`, `closed`, `invalid_config`,
 * `unauthenticated`, `forbidden`, `namespace_not_found`, and the
 * authority's other codes (`invalid_request`, `request_conflict`, ...).
 */
export class RangeIdError extends Error {
  constructor(code, message) {
    super(message);
    this.name = "RangeIdError";
    this.code = code;
  }
}

/** The code at the start of a wasm error message (`code: detail`). */
export function codeFromMessage(e) {
  const text = String(e && e.message ? e.message : e);
  const m = /^([a-z_]+):/.exec(text);
  return m ? m[1] : "invalid_config";
}
