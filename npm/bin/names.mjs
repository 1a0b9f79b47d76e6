// The namespace-name rule as the CLI checks it before anything is sent.
// core's `Namespace::PATTERN` (core/src/names.rs) is the source; the test
// tests/npm/one-source.test.mjs fails if this copy drifts from it.

/** A namespace name: 1 to 63 of a-z 0-9 . _ -, starting with a letter or digit. */
export const NAMESPACE_RE = /^[a-z0-9][a-z0-9._-]{0,62}$/;

/** The rule in words, for error messages. */
export const NAMESPACE_RULE = "1 to 63 of a-z 0-9 . _ -, starting with a letter or digit";
