// RangeIdError: the one error class the package throws, with a stable code
// (core decides the codes; see README "Errors").

/**
 * An error with a stable `code`. When the authority answered, `status` is
 * its HTTP status and `authorityCode` its wire code; when something else
 * answered (a proxy, a wrong URL), `status` and `excerpt` (the body's first
 * bytes). `remaining` (a decimal string) comes with `exhausted`,
 * `retryAfterMs` with a busy authority, `cause` with a network error, and
 * `final` (whether the generator can never issue again) with every error a
 * generator's call gives.
 */
// Marks every RangeIdError, whichever copy of the package made it: an app
// that loads both the ESM and the CommonJS build (or two copies of the
// package) still gets `e instanceof RangeIdError` right.
const BRAND = Symbol.for("rangeid.RangeIdError");

export class RangeIdError extends Error {
  constructor(code, message, details = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = "RangeIdError";
    this.code = code;
    for (const key of ["status", "authorityCode", "excerpt", "remaining", "available", "limit", "retryAfterMs", "final"]) {
      if (details[key] !== undefined) this[key] = details[key];
    }
    Object.defineProperty(this, BRAND, { value: true });
  }

  /** True for a RangeIdError from any copy of the package. */
  static [Symbol.hasInstance](value) {
    return typeof value === "object" && value !== null && value[BRAND] === true;
  }
}

/** The code at the start of a wasm error message (`code: detail`). */
export function codeFromMessage(e) {
  const text = String(e && e.message ? e.message : e);
  const m = /^([a-z_]+): /.exec(text);
  return m ? m[1] : "invalid_config";
}
